import time
import uuid

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import entrypoint, task
from langgraph.types import Command, interrupt


@task
def write_essay(topic: str) -> str:
    time.sleep(0.1)
    return f"An essay about topic: {topic}"


@entrypoint(checkpointer=InMemorySaver())
def workflow(topic: str) -> dict:
    essay = write_essay("cat").result()
    is_approved = interrupt(
        {
            "essay": essay,
            "action": "Please approve/reject the essay",
        }
    )
    return {
        "essay": essay,
        "is_approved": is_approved,
    }


thread_id = str(uuid.uuid4())
config = {"configurable": {"thread_id": thread_id}}
for item in workflow.stream("cat", config):
    print(item)

human_review = True
for item in workflow.stream(Command(resume=human_review), config):
    print(item)


@task
def is_even(number: int) -> bool:
    return number % 2 == 0


@task
def format_message(is_even: bool) -> str:
    return "The number is even." if is_even else "The number is odd."


@entrypoint(checkpointer=InMemorySaver())
def numbers(inputs: dict) -> str:
    even = is_even(inputs["number"]).result()
    return format_message(even).result()


print(numbers.invoke({"number": 7}, {"configurable": {"thread_id": "n"}}))


@entrypoint(checkpointer=InMemorySaver())
def accumulate(n: int, *, previous: int | None = None) -> entrypoint.final[int, int]:
    previous = previous or 0
    total = previous + n
    return entrypoint.final(value=previous, save=total)


acc_config = {"configurable": {"thread_id": "acc"}}
print(accumulate.invoke(1, acc_config))
print(accumulate.invoke(2, acc_config))
print(accumulate.invoke(3, acc_config))
print(accumulate.get_state(acc_config).values)
