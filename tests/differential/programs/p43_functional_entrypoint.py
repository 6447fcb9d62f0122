from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import entrypoint, task


@task
def square(x: int) -> int:
    return x * x


@task
def describe(total: int) -> str:
    return f"sum of squares is {total}"


@entrypoint(checkpointer=InMemorySaver())
def workflow(numbers: list[int]) -> str:
    futures = [square(n) for n in numbers]
    total = sum(f.result() for f in futures)
    return describe(total).result()


config = {"configurable": {"thread_id": "fn"}}
print(workflow.invoke([1, 2, 3], config))
for chunk in workflow.stream([4], {"configurable": {"thread_id": "fn2"}}):
    print(chunk)
