from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    n: int


def route(state: State) -> str:
    return "more"


builder = StateGraph(State)
builder.add_node("count", lambda s: {"n": s["n"] + 1})
builder.add_node("report", lambda s: {})
builder.add_edge(START, "count")
builder.add_conditional_edges(
    "count",
    route,
    {
        "more": "count",
        "we have counted far enough so write the report for the user now": "report",
    },
)
builder.add_edge("report", END)
drawing = builder.compile().get_graph()
print(drawing.draw_mermaid(with_styles=False))
print(drawing.draw_mermaid(with_styles=False, wrap_label_n_words=4))
print(
    drawing.draw_mermaid(
        frontmatter_config={
            "title": "Counter: v2",
            "config": {
                "theme": "neutral",
                "look": "handDrawn",
                "flowchart": {"htmlLabels": False},
                "themeVariables": {"primaryColor": "#e2e2e2", "fontSize": 16},
            },
        }
    )
)
