"""The scripted chat model the programs import: the same line on both sides.

`FakeChat(replies)` answers each call with the next reply: a string, or a dict with
`content` and `tool_calls` (`{"name", "args", "id"}`). Under LangGraph
(`DIFFERENTIAL_LIB=langgraph`, set by the harness) it is langchain_core's
`FakeMessagesListChatModel`, taught to bind tools and to stream word by word; under
flowgraph it is `ScriptedChatModel`, which streams the same way, without the usage and
provider metadata LangChain's fake model does not report either.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

_WORDS = re.compile(r"\s*\S+\s*|\s+")
_ARGS_SLICE = 8


def FakeChat(replies: list[Any]) -> Any:
    """A chat model answering with `replies` in turn, on the library the harness runs."""
    if os.environ.get("DIFFERENTIAL_LIB") == "flowgraph":
        return _flowgraph(replies)
    return _langchain(replies)


def _flowgraph(replies: list[Any]) -> Any:
    from flowgraph import ScriptedChatModel
    from flowgraph.models._call import Output

    class Bare(ScriptedChatModel):
        # LangChain's fake model reports no usage and no provider metadata (finish_reason,
        # model_name): neither does this one, so a printed message reads the same
        def _source(self, call: Any, state: Any) -> Any:
            for effect in super()._source(call, state):
                if isinstance(effect, Output):
                    bare = {"usage": None, "response_metadata": {}}
                    effect = Output(effect.chunk.model_copy(update=bare))
                yield effect

    return Bare(replies)


def _langchain(replies: list[Any]) -> Any:
    import json

    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, AIMessageChunk
    from langchain_core.outputs import ChatGenerationChunk, ChatResult

    class Scripted(FakeMessagesListChatModel):
        def _generate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> ChatResult:
            if self.i >= len(self.responses):
                raise RuntimeError(f"the script has {len(self.responses)} replies")
            result = super()._generate(messages, stop, run_manager, **kw)
            self.i = self.i if self.i else len(self.responses)  # no cycling: exhausted
            return result

        def _stream(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> Iterator[ChatGenerationChunk]:
            whole = self._generate(messages, stop, run_manager, **kw).generations[0].message
            assert isinstance(whole, AIMessage)
            pieces: list[AIMessageChunk] = []
            if whole.content:
                for word in _WORDS.findall(str(whole.content)):
                    pieces.append(AIMessageChunk(content=word, id=whole.id))
            for index, call in enumerate(whole.tool_calls):
                args = json.dumps(call["args"])
                for at in range(0, len(args), _ARGS_SLICE) or [0]:
                    head = at == 0
                    chunk = {
                        "index": index,
                        "args": args[at : at + _ARGS_SLICE],
                        "type": "tool_call_chunk",
                        "id": call["id"] if head else None,
                        "name": call["name"] if head else None,
                    }
                    pieces.append(AIMessageChunk(content="", id=whole.id, tool_call_chunks=[chunk]))
            pieces.append(AIMessageChunk(content="", id=whole.id, chunk_position="last"))
            for piece in pieces:
                if run_manager is not None and isinstance(piece.content, str) and piece.content:
                    run_manager.on_llm_new_token(
                        piece.content, chunk=ChatGenerationChunk(message=piece)
                    )
                yield ChatGenerationChunk(message=piece)

        def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kw: Any) -> Any:
            return self

    messages = []
    for reply in replies:
        if isinstance(reply, str):
            messages.append(AIMessage(content=reply))
        else:
            calls = [{**call, "type": "tool_call"} for call in reply.get("tool_calls", [])]
            messages.append(AIMessage(content=reply.get("content", ""), tool_calls=calls))
    return Scripted(responses=messages)
