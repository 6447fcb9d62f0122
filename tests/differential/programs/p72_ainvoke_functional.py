import asyncio

from langgraph.func import entrypoint, task


@task
async def fetch(n: int) -> int:
    await asyncio.sleep(0)
    return n * 3


@entrypoint()
async def gather(numbers: list[int]) -> list[int]:
    return [await fetch(n) for n in numbers]


print(asyncio.run(gather.ainvoke([1, 2, 3])))
