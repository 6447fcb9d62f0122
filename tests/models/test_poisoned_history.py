"""Bad input from a model must not poison a thread (issue #28, item 4).

A weak model cut off by `max_tokens` mid-call leaves `InvalidToolCall(args='{"order_id":')`
in the history. The next request must still be one a strict server accepts, and a
server that refuses a request as malformed must not be asked the same thing again.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import httpx
import pytest

from flowgraph import START, MessagesState, StateGraph
from flowgraph.checkpoint import MemoryCheckpointer
from flowgraph.errors import BadRequestError, ServerError
from flowgraph.messages import (
    AIMessage,
    HumanMessage,
    InvalidToolCall,
    TextPart,
    ToolCallPart,
    ToolMessage,
)
from flowgraph.models import (
    AnthropicChatModel,
    ChatOptions,
    OllamaChatModel,
    OpenAIChatModel,
    ToolSpec,
)
from flowgraph.models._call import Call
from flowgraph.models._history import raw_arguments_note, request_history
from flowgraph.models._malformed import malformed_request
from flowgraph.nodes import ModelNode, ToolNode, tools_condition

from ._loopback import LoopbackServer, Recorded, Reply, sse
from .conftest import Runner
from .test_openai import USAGE, chunk, completion

URL = os.environ.get("FLOWGRAPH_TEST_OPENAI_URL")
needs_llama = pytest.mark.skipif(
    not URL,
    reason="FLOWGRAPH_TEST_OPENAI_URL is not set; start ../shared/tools/llama-server/start.sh "
    "PORT and export FLOWGRAPH_TEST_OPENAI_URL=http://127.0.0.1:PORT/v1",
)
HELLO = "Hello from a tiny scripted model."
CUT = '{"order_id":'
"""What llama.cpp's tiny model has written of its call when `max_tokens=55` stops it."""


def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    return f"order {order_id}: shipped"


def poisoned_history() -> list[Any]:
    """A user turn and the AI turn whose call was cut off mid-arguments."""
    return [
        HumanMessage("Where is order 42?", id="h1"),
        AIMessage(
            "",
            id="a1",
            invalid_tool_calls=[
                InvalidToolCall(
                    id="call_1",
                    name="lookup_order",
                    args=CUT,
                    error="arguments are not valid JSON: Expecting value: line 1 column 13",
                )
            ],
        ),
    ]


# ---------------------------------------------------------------- the real llama.cpp


@pytest.fixture
def llama() -> Any:
    with OpenAIChatModel("tiny", base_url=URL or "", timeout=120, backoff=0) as model:
        yield model


@needs_llama
def test_a_react_thread_resumes_past_a_cut_off_tool_call_on_llama_cpp(
    llama: OpenAIChatModel,
) -> None:
    """The stored thread holds the invalid call; ToolNode answers it; llama.cpp answers next.

    Before the fix llama.cpp refused the history with 500 "Failed to parse tool call
    arguments as JSON" (three times, with the retries), and every resume did the same.
    """
    graph = StateGraph(MessagesState)
    graph.add_node("agent", ModelNode(llama, tools=[lookup_order]))
    graph.add_node("tools", ToolNode([lookup_order]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    app = graph.compile(checkpointer=MemoryCheckpointer())
    app.update_state("t1", {"messages": poisoned_history()}, as_node="agent")
    assert app.get_state("t1").next == ("tools",)

    async def resume() -> dict[str, Any]:
        try:
            return await app.ainvoke(None, thread_id="t1")
        finally:
            await llama.aclose()  # its connections belong to this loop

    final = asyncio.run(resume())

    messages = final["messages"]
    assert [m.type for m in messages] == ["human", "ai", "tool", "ai"]
    answer = messages[2]
    assert isinstance(answer, ToolMessage)
    assert (answer.tool_call_id, answer.status) == ("call_1", "error")
    assert messages[3].text == HELLO
    assert messages[3].response_metadata["finish_reason"] == "stop"
    # the stored thread is not rewritten: the cut-off call is kept as the model wrote it
    stored = app.get_state("t1").values["messages"][1]
    assert stored.invalid_tool_calls[0].args == CUT
    assert stored.tool_calls == []


@needs_llama
def test_a_call_cut_off_by_max_tokens_on_llama_cpp_then_the_next_turn(
    llama: OpenAIChatModel,
) -> None:
    """The whole story against the real server: the cut, ToolNode's answer, the next turn."""
    asked = HumanMessage("Where is order 42?")
    streamed = sum(
        llama.stream(
            [asked],
            tools=[lookup_order],
            options=ChatOptions(max_tokens=55, tool_choice="required"),
        )
    ).to_message()
    assert streamed.response_metadata["finish_reason"] == "length"
    assert [c.args for c in streamed.invalid_tool_calls] == [CUT]
    answers = ToolNode([lookup_order]).invoke({"messages": [asked, streamed]})
    assert isinstance(answers, dict)
    (answer,) = answers["messages"]
    assert answer.status == "error"

    sent: list[Any] = []
    with (
        httpx.Client(
            event_hooks={"request": [lambda r: sent.append(json.loads(r.content))]}
        ) as http,
        OpenAIChatModel("tiny", base_url=URL or "", http_client=http, backoff=0) as watched,
    ):
        reply = watched.invoke([asked, streamed, answer], tools=[lookup_order])

    assert reply.text == HELLO
    assert reply.response_metadata["finish_reason"] == "stop"
    (body,) = sent  # llama.cpp accepted the first request
    assert body["messages"][1]["tool_calls"][0]["function"] == {
        "name": "lookup_order",
        "arguments": "{}",
    }
    assert body["messages"][2]["content"] == f"{answer.text}\n\n{raw_arguments_note(CUT)}"


@needs_llama
def test_llama_cpps_refusal_of_arguments_is_not_retried_and_says_what_to_do() -> None:
    """A valid call whose arguments hold NaN (Python's json reads it, llama.cpp's does not):
    the 500 that follows is a BadRequestError after one request, not three."""
    sent: list[Any] = []
    nan_call = AIMessage(
        content=[ToolCallPart(id="c", name="lookup_order", args={"x": float("nan")})]
    )
    history = [HumanMessage("hi"), nan_call, ToolMessage("?", tool_call_id="c")]
    with (
        httpx.Client(event_hooks={"request": [lambda r: sent.append(r.content)]}) as http,
        OpenAIChatModel("tiny", base_url=URL or "", http_client=http, backoff=0) as model,
        pytest.raises(BadRequestError) as caught,
    ):
        model.invoke(history)

    assert len(sent) == 1
    assert b'"arguments":"{\\"x\\":NaN}"' in sent[0]
    assert caught.value.status_code == 500
    message = str(caught.value)
    assert message.startswith(
        f"openai at {URL}/chat/completions (server: llama.cpp) refused the request: it holds "
        "tool call arguments that are not valid JSON (500 Internal Server Error: Failed to "
        "parse tool call arguments as JSON: "
    )
    assert message.endswith("(app.update_state, or RemoveMessage(id)) and resume the thread")


# ---------------------------------------------------------------- the request sent

ERROR_TEXT = "Error: the arguments of your call to `lookup_order` are not valid JSON."
NOTE = (
    "The arguments you wrote for this call (sent back as {} because they are not a "
    'JSON object): {"order_id":'
)
LOOKUP = ToolSpec(
    "lookup_order",
    "Look up an order by its id.",
    {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
)


def answered_history() -> list[Any]:
    """The poisoned history and ToolNode-style error result that answers the cut call."""
    return [
        *poisoned_history(),
        ToolMessage(ERROR_TEXT, tool_call_id="call_1", name="lookup_order", status="error"),
    ]


ANTHROPIC_REPLY = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test",
    "content": [{"type": "text", "text": "Let me try again."}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 20, "output_tokens": 5},
}
OLLAMA_REPLY = {
    "model": "qwen3:8b",
    "message": {"role": "assistant", "content": "Let me try again."},
    "done": True,
    "done_reason": "stop",
    "prompt_eval_count": 20,
    "eval_count": 5,
}


def openai_for(server: LoopbackServer, **kwargs: Any) -> OpenAIChatModel:
    kwargs.setdefault("backoff", 0)
    return OpenAIChatModel("gpt-test", base_url=f"{server.url}/v1", api_key="sk-test", **kwargs)


def test_openai_sends_empty_arguments_and_quotes_the_raw_text_in_the_result(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [Reply.json(completion("Let me try again."))]
    history = answered_history()
    before = [m.model_copy(deep=True) for m in history]

    runner.invoke(openai_for(server), history, tools=[LOOKUP])

    assert server.requests[0].json["messages"] == [
        {"role": "user", "content": "Where is order 42?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "lookup_order", "arguments": "{}"},
                }
            ],
        },
        {
            "role": "tool",
            "content": f"{ERROR_TEXT}\n\n{NOTE}",
            "name": "lookup_order",
            "tool_call_id": "call_1",
        },
    ]
    assert history == before  # only the request changed, not the messages given
    assert len(server.requests) == 1


def test_openai_streaming_sends_the_same_repaired_messages(server: LoopbackServer) -> None:
    server.replies = [Reply(pieces=[sse(chunk({"content": "ok"}, "stop"), chunk({}, usage=USAGE))])]
    with openai_for(server) as model:
        assert sum(model.stream(answered_history())).text == "ok"
    sent = server.requests[0].json["messages"]
    assert sent[1]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert sent[2]["content"] == f"{ERROR_TEXT}\n\n{NOTE}"


@pytest.mark.parametrize(
    ("raw", "sent", "quoted"),
    [
        ('{"order_id":', "{}", True),  # cut off by max_tokens
        ("[1, 2]", "{}", True),  # JSON, but not an object
        ('"42"', "{}", True),
        ('{"order_id": NaN}', "{}", True),  # Python's json reads NaN; strict parsers do not
        ('{"order_id": "42"}', '{"order_id": "42"}', False),  # an object: sent as it is
        ("", "{}", False),  # nothing to quote
    ],
)
def test_which_arguments_are_replaced(raw: str, sent: str, quoted: bool) -> None:
    from flowgraph.models.openai import build_openai_body

    ai = AIMessage(
        "", invalid_tool_calls=[InvalidToolCall(id="c", name="lookup_order", args=raw, error="x")]
    )
    result = ToolMessage("Error.", tool_call_id="c", status="error")
    history: list[Any] = [HumanMessage("hi"), ai, result]
    body = build_openai_body(
        Call(model="m", messages=history, tools=(), options=ChatOptions(), stream=False)
    )
    assert body["messages"][1]["tool_calls"][0]["function"]["arguments"] == sent
    expected_note = (
        "The arguments you wrote for this call (sent back as {} because they are not a JSON "
        f"object): {raw}"
    )
    assert body["messages"][2]["content"] == (f"Error.\n\n{expected_note}" if quoted else "Error.")


def test_a_history_with_nothing_to_repair_is_sent_as_the_very_same_list() -> None:
    valid = AIMessage("", tool_calls=[{"id": "c", "name": "lookup_order", "args": {"a": 1}}])
    history = [HumanMessage("hi"), valid, ToolMessage("ok", tool_call_id="c")]
    assert request_history(history) is history


def test_only_the_result_after_the_cut_call_gets_the_note_when_ids_repeat() -> None:
    """Providers reuse ids ("call_0") across turns: a result answers the nearest call."""
    cut = AIMessage(
        "", invalid_tool_calls=[InvalidToolCall(id="call_0", name="f", args="{", error="x")]
    )
    good = AIMessage("", tool_calls=[{"id": "call_0", "name": "f", "args": {}}])
    history = [
        HumanMessage("hi"),
        cut,
        ToolMessage("bad", tool_call_id="call_0", status="error"),
        good,
        ToolMessage("fine", tool_call_id="call_0"),
    ]
    sent = request_history(history)
    assert [m.text for m in sent if isinstance(m, ToolMessage)] == [
        "bad\n\nThe arguments you wrote for this call (sent back as {} because they are not a "
        "JSON object): {",
        "fine",
    ]
    assert sent[3] is good and sent[4] is history[4] and sent[0] is history[0]


def test_a_result_that_quotes_the_raw_text_already_or_parts_content() -> None:
    raw = '{"order_id":'
    cut = AIMessage("", invalid_tool_calls=[InvalidToolCall(id="c", name="f", args=raw)])
    quoting = ToolMessage(f"Your arguments {raw} are cut off.", tool_call_id="c")
    assert request_history([cut, quoting])[1] is quoting
    parts = ToolMessage(content=[TextPart(text="Error.")], tool_call_id="c")
    sent = request_history([cut, parts])[1]
    assert sent.content == [
        TextPart(text="Error."),
        TextPart(
            text="The arguments you wrote for this call (sent back as {} because they are "
            'not a JSON object): {"order_id":'
        ),
    ]


def test_a_runaway_call_is_quoted_only_up_to_two_thousand_characters() -> None:
    raw = '{"text": "' + "la" * 3_000
    cut = AIMessage("", invalid_tool_calls=[InvalidToolCall(id="c", name="f", args=raw)])
    sent = request_history([cut, ToolMessage("Error.", tool_call_id="c")])[1]
    assert sent.text.endswith(f": {raw[:2_000]}... ({len(raw) - 2_000} more characters)")
    assert len(sent.text) == len("Error.\n\n") + len(raw_arguments_note(raw))
    assert len(raw_arguments_note(raw)) < 2_200


def test_anthropic_sends_an_empty_input_and_quotes_the_raw_text_in_the_tool_result(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [Reply.json(ANTHROPIC_REPLY)]
    history = answered_history()
    model = AnthropicChatModel("claude-test", base_url=server.url, api_key="sk-ant", backoff=0)

    runner.invoke(model, history, tools=[LOOKUP])

    assert server.requests[0].json["messages"] == [
        {"role": "user", "content": "Where is order 42?"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "call_1", "name": "lookup_order", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_1",
                    "content": f"{ERROR_TEXT}\n\n{NOTE}",
                    "is_error": True,
                }
            ],
        },
    ]
    assert history == answered_history()


def test_ollama_sends_the_cut_call_with_object_arguments_and_the_raw_text_in_the_result(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [Reply.json(OLLAMA_REPLY)]
    model = OllamaChatModel("qwen3:8b", base_url=server.url, backoff=0)

    runner.invoke(model, answered_history(), tools=[LOOKUP])

    assert server.requests[0].json["messages"] == [
        {"role": "user", "content": "Where is order 42?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "lookup_order", "arguments": {}}}],
        },
        {"role": "tool", "content": f"{ERROR_TEXT}\n\n{NOTE}", "tool_name": "lookup_order"},
    ]


def test_ollama_sends_an_invalid_call_whose_arguments_are_an_object_with_them() -> None:
    from flowgraph.models.ollama import ollama_messages

    odd = AIMessage(
        "",
        tool_calls=[{"id": "a", "name": "f", "args": {"x": 1}}],
        invalid_tool_calls=[
            InvalidToolCall(id="b", name="g", args='{"y": 2}', error="unknown tool"),
            InvalidToolCall(id=None, name="h", args="{", error="no id"),  # cannot be answered
        ],
    )
    assert ollama_messages([odd])[0]["tool_calls"] == [
        {"function": {"name": "f", "arguments": {"x": 1}}},
        {"function": {"name": "g", "arguments": {"y": 2}}},
    ]


# ---------------------------------------------------------------- a strict server


def refuse(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def strict_server(request: Recorded) -> Reply:
    """A strict server: every tool call's arguments must parse as a JSON object, else
    llama.cpp's 500; a reply cut off mid-call when asked with max_tokens=55."""
    for message in request.json["messages"]:
        for call in message.get("tool_calls") or ():
            try:
                arguments = json.loads(call["function"]["arguments"], parse_constant=refuse)
            except ValueError:
                arguments = None
            if not isinstance(arguments, dict):
                return Reply.json(LLAMA_500, status=500, headers={"server": "llama.cpp"})
    if request.json.get("max_tokens") == 55:  # the weak model, cut off mid-call
        function = {"name": "lookup_order", "arguments": CUT}
        cut = {"id": "call_1", "type": "function", "function": function}
        return Reply.json({**completion(None, tool_calls=[cut], finish="length"), "id": "cut"})
    return Reply.json({**completion("Order 42 has shipped."), "id": "answer"})


def test_a_react_loop_goes_on_after_a_cut_off_call_on_a_strict_server(
    server: LoopbackServer,
) -> None:
    """Agent (cut off) -> ToolNode's error -> agent again: two requests, the second accepted."""
    server.handler = strict_server
    calls = iter([ChatOptions(max_tokens=55, tool_choice="required"), ChatOptions()])
    model = openai_for(server)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state.messages, tools=[LOOKUP], options=next(calls))]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([lookup_order]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    app = graph.compile(checkpointer=MemoryCheckpointer())
    try:
        final = app.invoke({"messages": [HumanMessage("Where is order 42?")]}, thread_id="t")
    finally:
        model.close()

    assert final["messages"][-1].text == "Order 42 has shipped."
    assert len(server.requests) == 2
    second = server.requests[1].json["messages"]
    assert second[1]["tool_calls"][0]["function"]["arguments"] == "{}"
    answer = final["messages"][2]
    assert second[2]["content"] == f"{answer.text}\n\n{NOTE}"
    assert app.get_state("t").values["messages"][1].invalid_tool_calls[0].args == CUT


# ---------------------------------------------------------------- the classifier

LLAMA_500 = {
    "error": {
        "code": 500,
        "message": "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] "
        "parse error at line 1, column 13: syntax error while parsing value - unexpected end "
        "of input; expected '[', '{', or a literal",
        "type": "server_error",
    }
}
LLAMA_MESSAGES_500 = {
    "error": {
        "code": 500,
        "message": 'Failed to parse messages: Missing tool call function: {"id":"c1"}',
        "type": "server_error",
    }
}


def test_llama_cpps_500_for_unparseable_arguments_is_raised_at_once_naming_the_fix(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [Reply.json(LLAMA_500, status=500, headers={"server": "llama.cpp"})]
    with pytest.raises(BadRequestError) as caught:
        runner.invoke(openai_for(server, max_retries=3), "hi")
    assert len(server.requests) == 1  # not retried
    error = caught.value
    assert error.status_code == 500
    assert error.provider_message == LLAMA_500["error"]["message"]
    assert str(error) == (
        f"openai at {server.url}/v1/chat/completions (server: llama.cpp) refused the request: "
        "it holds tool call arguments that are not valid JSON (500 Internal Server Error: "
        f"{LLAMA_500['error']['message']}). Sending it again would fail the same way, so it "
        "was not retried. flowgraph sends {} for arguments that are not a JSON object, so "
        "these came in another form: a message built by hand or by another client, or a "
        "value Python's json reads and strict parsers refuse (NaN, Infinity). Correct or "
        "remove the AI message with those arguments (app.update_state, or RemoveMessage(id)) "
        "and resume the thread"
    )


def test_a_streamed_call_refused_as_malformed_is_not_retried_either(
    server: LoopbackServer, runner: Runner
) -> None:
    server.replies = [Reply.json(LLAMA_MESSAGES_500, status=500)]
    with pytest.raises(BadRequestError, match="it holds a message the server cannot read"):
        runner.stream(openai_for(server), "hi")
    assert len(server.requests) == 1


def test_a_malformed_request_error_event_in_a_stream_is_not_retried(
    server: LoopbackServer,
) -> None:
    server.replies = [Reply(pieces=[sse(LLAMA_500, done=False)])]
    with openai_for(server) as model, pytest.raises(BadRequestError, match="RemoveMessage"):
        list(model.stream("hi"))
    assert len(server.requests) == 1


def test_ollamas_and_anthropics_answers_go_through_the_same_classifier(
    server: LoopbackServer,
) -> None:
    server.replies = [Reply.json({"error": "invalid request: messages[1] is malformed"}, 500)]
    with (
        OllamaChatModel("q", base_url=server.url, backoff=0) as ollama,
        pytest.raises(BadRequestError, match="the server calls it invalid"),
    ):
        ollama.invoke("hi")
    assert len(server.requests) == 1
    server.requests.clear()
    refused = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
    server.replies = [Reply.json(refused, status=500)]
    with (
        AnthropicChatModel("c", base_url=server.url, api_key="k", backoff=0) as claude,
        pytest.raises(BadRequestError, match="the server calls it invalid"),
    ):
        claude.invoke("hi")
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (500, {"error": {"message": "boom", "type": "server_error"}}),
        # about the model's output, not the request: sampling again may succeed
        (500, {"error": {"message": "Failed to parse input at pos 12: <tool_call>", "code": 500}}),
        # a gateway or an unavailable server says nothing about the request
        (503, {"error": {"message": "invalid request queue state", "type": "x"}}),
        (502, LLAMA_500),
    ],
)
def test_transient_server_errors_are_still_retried(
    server: LoopbackServer, status: int, body: dict[str, Any]
) -> None:
    server.replies = [Reply.json(body, status=status)]
    with openai_for(server) as model, pytest.raises(ServerError) as caught:
        model.invoke("hi")
    assert len(server.requests) == 3  # the first attempt and max_retries=2
    assert caught.value.status_code == status


def test_a_transient_500_then_success_still_returns_the_reply(server: LoopbackServer) -> None:
    server.replies = [
        Reply.json({"error": {"message": "slot unavailable", "type": "server_error"}}, 500),
        Reply.json(completion("ok")),
    ]
    with openai_for(server) as model:
        assert model.invoke("hi").text == "ok"
    assert len(server.requests) == 2


def test_a_400_for_unparseable_arguments_gets_the_advice_too(server: LoopbackServer) -> None:
    refused = {"error": {"message": "Invalid tool_call arguments: not JSON", "type": "x"}}
    server.replies = [Reply.json(refused, status=400)]
    with openai_for(server) as model, pytest.raises(BadRequestError) as caught:
        model.invoke("hi")
    assert len(server.requests) == 1
    assert "resume the thread" in str(caught.value) and caught.value.status_code == 400


@pytest.mark.parametrize(
    ("status", "message", "body", "rule"),
    [
        (500, "Failed to parse tool call arguments as JSON: ...", {}, "tool-arguments"),
        (500, "could not parse tool_call arguments", {}, "tool-arguments"),
        (422, "Invalid tool call arguments for 'f'", {}, "tool-arguments"),
        (500, "Failed to parse messages: Missing tool call function", {}, "messages"),
        (400, "failed to parse messages: bad role", {}, "messages"),
        (500, "Malformed request body", {}, "invalid-request"),
        (500, "nope", {"error": {"type": "invalid_request_error"}}, "invalid-request"),
        (500, "nope", {"object": "error", "type": "BadRequestError"}, "invalid-request"),
        (501, "nope", {"error": {"code": "INVALID_ARGUMENT"}}, "invalid-request"),
        (500, None, {"error": "Failed to parse tool call arguments"}, "tool-arguments"),
        # not the request's fault, or nothing a 4xx needs beyond its own class
        (500, "boom", {"error": {"type": "server_error"}}, None),
        (500, "Failed to parse input at pos 0", {}, None),
        (503, "Failed to parse tool call arguments", {}, None),
        (504, "invalid request", {}, None),
        (429, "invalid request rate", {}, None),
        (401, "invalid request: bad key", {}, None),
        (400, "Invalid 'messages': empty.", {"error": {"type": "invalid_request_error"}}, None),
    ],
)
def test_the_classifier_rules(
    status: int, message: str | None, body: dict[str, Any], rule: str | None
) -> None:
    found = malformed_request(status, message, json.dumps(body).encode())
    assert (found.rule if found else None) == rule
