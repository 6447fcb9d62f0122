from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import entrypoint, task
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

store = InMemoryStore()


@task
def double(x: int) -> int:
    return x * 2


@entrypoint(checkpointer=InMemorySaver(), store=store)
def flow(x: int, *, previous: int | None, store: BaseStore, writer, config: RunnableConfig) -> int:
    writer(f"got {x} after {previous}")
    store.put(("runs",), config["configurable"]["thread_id"], {"x": x})
    return double(x).result() + (previous or 0)


config = {"configurable": {"thread_id": "fx"}}
for mode, chunk in flow.stream(3, config, stream_mode=["custom", "updates"]):
    print(mode, chunk)
print(flow.invoke(4, config))
print(store.get(("runs",), "fx").value)
