from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import entrypoint, task
from langgraph.types import Command, interrupt

runs = []


@task
def draft(topic: str) -> str:
    runs.append(topic)
    return f"An essay on {topic}"


@entrypoint(checkpointer=InMemorySaver())
def review(topic: str) -> dict:
    essay = draft(topic).result()
    verdict = interrupt({"essay": essay, "action": "approve?"})
    return {"essay": essay, "approved": verdict}


config = {"configurable": {"thread_id": "r"}}
for chunk in review.stream("tides", config):
    if "__interrupt__" in chunk:
        print("paused with", chunk["__interrupt__"][0].value)
    else:
        print(chunk)
print(review.invoke(Command(resume=True), config))
print(runs)
