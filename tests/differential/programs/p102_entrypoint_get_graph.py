from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import entrypoint, task


@task
def double(x: int) -> int:
    return x * 2


@entrypoint(checkpointer=InMemorySaver())
def workflow(x: int) -> int:
    return double(x).result() + 1


drawing = workflow.get_graph()
print(drawing.draw_mermaid())
print(list(drawing.nodes), drawing.edges)
print(drawing.first_node().id, drawing.last_node().id)
print(workflow.invoke(3, {"configurable": {"thread_id": "t"}}))
