"""The graphs the server benchmarks serve, for flowgraph and (as source text) for LangGraph.

- `echo`: one node appending an AI message (the cost of a run, not of work);
- `chat`: a model node streaming a reply of `TOKENS` words, one chunk per word, with
  no delay (what the server adds to a token, not what a model takes).

LangGraph's side is written out as a `langgraph dev` project: the same two graphs with
a chat model that streams the same chunks.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from flowgraph import (
    END,
    START,
    AIMessage,
    MessagesState,
    ModelNode,
    ScriptedChatModel,
    StateGraph,
)
from flowgraph.checkpoint import MemoryCheckpointer, open_checkpointer

TOKENS = 200
REPLY = " ".join(f"word{i}" for i in range(TOKENS))


def echo_node(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage("ok")]}


def build() -> dict[str, Any]:
    echo = StateGraph(MessagesState)
    echo.add_node("reply", echo_node)
    echo.add_edge(START, "reply")
    echo.add_edge("reply", END)
    chat = StateGraph(MessagesState)
    chat.add_node("model", ModelNode(ScriptedChatModel(lambda messages: REPLY)))
    chat.add_edge(START, "model")
    chat.add_edge("model", END)
    return {"echo": echo.compile(), "chat": chat.compile()}


LANGGRAPH_PROJECT = '''
from typing import Any, Iterator
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langgraph.graph import END, START, MessagesState, StateGraph

REPLY = {reply!r}


class Streaming(BaseChatModel):
    """Streams REPLY one word per chunk, as flowgraph's ScriptedChatModel does."""

    @property
    def _llm_type(self) -> str:
        return "bench"

    def _generate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=REPLY))])

    def _stream(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Iterator[ChatGenerationChunk]:
        words = REPLY.split(" ")
        for index, word in enumerate(words):
            text = word if index == len(words) - 1 else word + " "
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=text))
            if run_manager is not None:
                run_manager.on_llm_new_token(text, chunk=chunk)
            yield chunk


model = Streaming()


def reply(state: MessagesState) -> dict:
    return {{"messages": [AIMessage(content="ok")]}}


async def call_model(state: MessagesState) -> dict:
    return {{"messages": [await model.ainvoke(state["messages"])]}}


_echo = StateGraph(MessagesState)
_echo.add_node("reply", reply)
_echo.add_edge(START, "reply")
_echo.add_edge("reply", END)
echo = _echo.compile()

_chat = StateGraph(MessagesState)
_chat.add_node("model", call_model)
_chat.add_edge(START, "model")
_chat.add_edge("model", END)
chat = _chat.compile()
'''


def write_langgraph_project(folder: Path) -> None:
    (folder / "bench_graphs.py").write_text(LANGGRAPH_PROJECT.format(reply=REPLY))
    (folder / "langgraph.json").write_text(
        '{"dependencies": ["."], "graphs": {"echo": "./bench_graphs.py:echo", '
        '"chat": "./bench_graphs.py:chat"}}'
    )


def main() -> None:
    """`python -m benchmarks._server_apps PORT STORE`: serve both graphs (memory or a URL)."""
    from flowgraph.server import serve

    port, store = int(sys.argv[1]), sys.argv[2]
    checkpointer = MemoryCheckpointer() if store == "memory" else open_checkpointer(store)
    serve(build(), checkpointer=checkpointer, port=port, log_level="warning")


if __name__ == "__main__":
    main()
