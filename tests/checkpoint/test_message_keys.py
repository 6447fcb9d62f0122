"""Message keys: an equal message sent again, even in a new object, is stored once per thread."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from flowgraph import HumanMessage
from flowgraph.checkpoint.base import BaseCheckpointer
from flowgraph.graph._thread.record import referenced_messages

from ._apps import chat_app

Tid = Callable[[str], str]


@pytest.mark.parametrize("cold", [False, True], ids=["same-app", "cold-app"])
def test_an_equal_message_sent_again_in_a_new_object_is_stored_once(
    checkpointer: BaseCheckpointer, tid: Tid, cold: bool
) -> None:
    """A cold app (no cache: a restart, or another process) reuses the stored message's key too."""
    thread = tid("again")
    app = chat_app(checkpointer)
    app.invoke({"messages": [HumanMessage("hello", id="h1")]}, thread_id=thread)
    state = chat_app(checkpointer).engine.state
    before = referenced_messages(checkpointer, state, thread)
    assert len(before) == 2
    if cold:
        app = chat_app(checkpointer)
    for turn in range(3):  # the first message again, equal but a new object, with a new one
        again = HumanMessage("hello", id="h1")
        app.invoke({"messages": [again, HumanMessage(f"more {turn}")]}, thread_id=thread)
    after = referenced_messages(checkpointer, state, thread)
    assert before < after
    assert len(after) == 2 + 3 * 2  # the re-sent message added nothing
    values = app.get_state(thread).values
    assert [m.text for m in values.messages][:2] == ["hello", "reply 1"]
    assert len(values.messages) == 8
