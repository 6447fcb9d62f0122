"""The graphs the server tests serve, loaded by `flowgraph serve` in a subprocess.

- `agent`: a reply, then a question to a human (interrupt) that a resume answers;
- `slow`: two steps that sleep `delay` seconds each (busy threads, multitask, cancel);
- `chat`: a model node streaming its reply token by token: an OpenAI-compatible
  provider at $FG_TEST_LLM_URL when set (a loopback server the test runs), else a
  ScriptedChatModel;
- `fail`: a node that raises;
- `configured`: a node that answers with the run's `configurable["user"]` (and its
  context's "team", when the run has a context);
- `nested`: `prep` (writes `{"stage": "prep"}` to the custom stream) then `child`, a
  subgraph whose node `work` writes its progress there and answers "worked";
- `remember`: compiled with a long-term store (the server's replaces it): stores the
  last message under ("notes", configurable["user"]) and answers with every note there.
"""

from __future__ import annotations

import asyncio
import operator
import os
from typing import Annotated, Any

from pydantic import Field

from flowgraph import (
    END,
    START,
    AIMessage,
    MessagesState,
    ModelNode,
    OpenAIChatModel,
    Runtime,
    ScriptedChatModel,
    StateGraph,
    get_stream_writer,
    interrupt,
)
from flowgraph.store import BaseStore, InMemoryStore


class AgentState(MessagesState):
    n: int = 0


def reply(state: AgentState) -> dict[str, Any]:
    return {"messages": [AIMessage("echo: " + state.messages[-1].text)], "n": state.n + 1}


def ask(state: AgentState) -> dict[str, Any]:
    answer = interrupt({"question": "Approve?"})
    return {"messages": [AIMessage(f"answer: {answer}")]}


_agent = StateGraph(AgentState)
_agent.add_node("reply", reply)
_agent.add_node("ask", ask)
_agent.add_edge(START, "reply")
_agent.add_edge("reply", "ask")
_agent.add_edge("ask", END)
agent = _agent.compile()


class SlowState(MessagesState):
    steps: Annotated[list[str], operator.add] = Field(default_factory=list)
    delay: float = 0.5


async def one(state: SlowState) -> dict[str, Any]:
    await asyncio.sleep(state.delay)
    return {"steps": ["one"]}


async def two(state: SlowState) -> dict[str, Any]:
    await asyncio.sleep(state.delay)
    return {"steps": ["two"], "messages": [AIMessage(f"done after {state.steps[-1]}")]}


_slow = StateGraph(SlowState)
_slow.add_node("one", one)
_slow.add_node("two", two)
_slow.add_edge(START, "one")
_slow.add_edge("one", "two")
_slow.add_edge("two", END)
slow = _slow.compile()


def _model() -> Any:
    url = os.environ.get("FG_TEST_LLM_URL")
    if url:
        return OpenAIChatModel("loopback", base_url=url, api_key="test")
    return ScriptedChatModel(lambda messages: f"You said {messages[-1].text} and I agree")


_chat = StateGraph(MessagesState)
_chat.add_node("model", ModelNode(_model()))
_chat.add_edge(START, "model")
_chat.add_edge("model", END)
chat = _chat.compile()


def explode(state: MessagesState) -> dict[str, Any]:
    raise ValueError("the node blew up")


_fail = StateGraph(MessagesState)
_fail.add_node("explode", explode)
_fail.add_edge(START, "explode")
_fail.add_edge("explode", END)
fail = _fail.compile()


def greet(state: MessagesState, config: dict[str, Any], runtime: Runtime[Any]) -> dict[str, Any]:
    team = f" of team {runtime.context['team']}" if runtime.context else ""
    return {"messages": [AIMessage(f"hello {config['configurable']['user']}{team}")]}


_configured = StateGraph(MessagesState)
_configured.add_node("greet", greet)
_configured.add_edge(START, "greet")
_configured.add_edge("greet", END)
configured = _configured.compile()


def prep(state: MessagesState) -> dict[str, Any]:
    get_stream_writer()({"stage": "prep"})
    return {"messages": [AIMessage("prepared")]}


def work(state: MessagesState) -> dict[str, Any]:
    write = get_stream_writer()
    write({"progress": 0.5})
    write({"progress": 1.0})
    return {"messages": [AIMessage("worked")]}


_inner = StateGraph(MessagesState)
_inner.add_node("work", work)
_inner.add_edge(START, "work")
_inner.add_edge("work", END)
_nested = StateGraph(MessagesState)
_nested.add_node("prep", prep)
_nested.add_node("child", _inner.compile())
_nested.add_edge(START, "prep")
_nested.add_edge("prep", "child")
_nested.add_edge("child", END)
nested = _nested.compile()


def note(state: MessagesState, config: dict[str, Any], store: BaseStore) -> dict[str, Any]:
    namespace = ("notes", config["configurable"]["user"])
    store.put(namespace, f"n{len(state.messages)}", {"text": state.messages[-1].text})
    notes = sorted(item.value["text"] for item in store.search(namespace, limit=100))
    return {"messages": [AIMessage("notes: " + ", ".join(notes))]}


_remember = StateGraph(MessagesState)
_remember.add_node("note", note)
_remember.add_edge(START, "note")
_remember.add_edge("note", END)
remember = _remember.compile(store=InMemoryStore())


def where(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage(f"ran in process {os.getpid()}")]}


def confirm(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage(f"confirmed: {interrupt('Confirm?')}")]}


whoami_graph = StateGraph(MessagesState)
"""Uncompiled, for Celery workers (`make_thread_task` compiles it with the shared store)."""
whoami_graph.add_node("where", where)
whoami_graph.add_node("confirm", confirm)
whoami_graph.add_edge(START, "where")
whoami_graph.add_edge("where", "confirm")
whoami_graph.add_edge("confirm", END)
whoami = whoami_graph.compile()
