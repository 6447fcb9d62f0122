from langgraph.func import entrypoint, task
from langgraph.types import RetryPolicy

tries = []


class Flaky(Exception):
    pass


@task(retry_policy=RetryPolicy(max_attempts=4, initial_interval=0.01))
def unreliable(x: int) -> int:
    tries.append(x)
    if len(tries) < 3:
        raise Flaky("not yet")
    return x + 100


@entrypoint()
def flow(x: int) -> int:
    return unreliable(x).result()


print(flow.invoke(5), len(tries))
