from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import entrypoint


@entrypoint(checkpointer=InMemorySaver())
def counter(step: int, *, previous: Any = None) -> entrypoint.final[int, int]:
    total = (previous or 0) + step
    return entrypoint.final(value=total * 100, save=total)


config = {"configurable": {"thread_id": "p"}}
print(counter.invoke(1, config))
print(counter.invoke(2, config))
print(counter.invoke(3, config))
print(counter.get_state(config).values)
