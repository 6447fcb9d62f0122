"""Fixtures for the chat model tests: a loopback server per test, and sync/async parity."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from flowgraph.messages import AIMessage, AIMessageChunk
from flowgraph.models import BaseChatModel, HttpChatModel

from ._loopback import LoopbackServer


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    loopback = LoopbackServer().start()
    try:
        yield loopback
    finally:
        loopback.stop()


class Runner:
    """Calls a model the sync or the async way, so every behaviour is checked on both."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def invoke(self, model: BaseChatModel, *args: Any, **kwargs: Any) -> AIMessage:
        if self.mode == "sync":
            try:
                return model.invoke(*args, **kwargs)
            finally:
                if isinstance(model, HttpChatModel):
                    model.close()

        async def run() -> AIMessage:
            try:
                return await model.ainvoke(*args, **kwargs)
            finally:
                if isinstance(model, HttpChatModel):
                    await model.aclose()

        return asyncio.run(run())

    def stream(self, model: BaseChatModel, *args: Any, **kwargs: Any) -> list[AIMessageChunk]:
        if self.mode == "sync":
            try:
                return list(model.stream(*args, **kwargs))
            finally:
                if isinstance(model, HttpChatModel):
                    model.close()

        async def run() -> list[AIMessageChunk]:
            try:
                return [chunk async for chunk in model.astream(*args, **kwargs)]
            finally:
                if isinstance(model, HttpChatModel):
                    await model.aclose()

        return asyncio.run(run())


@pytest.fixture(params=["sync", "async"])
def runner(request: pytest.FixtureRequest) -> Runner:
    return Runner(request.param)
