"""Reducers: pure functions that merge a node's update into a state field.

`add_messages` is the one that matters most: it merges by message id, so a
retried or resumed step that re-emits its messages (with the same
deterministic ids) changes nothing the second time.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import count
from operator import attrgetter
from typing import Any

from flowgraph._ids import new_message_id
from flowgraph.errors import InvalidMessageError
from flowgraph.messages import (
    REMOVE_ALL_MESSAGES,
    AIMessage,
    AnyMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    coerce_message,
    coerce_messages,
)

__all__ = ["MessageList", "add_messages"]

_WITH_IDS = frozenset({SystemMessage, HumanMessage, AIMessage, ToolMessage, RemoveMessage})
_REMOVED: Any = object()
_ID = attrgetter("id")


class MessageList(list):  # type: ignore[type-arg]  # holds AnyMessage; list[...] subclassing needs no param
    """A message list that remembers where each id sits, so the next merge is O(update).

    `add_messages` returns one. Any in-place change to the list drops the
    remembered positions (the next merge rebuilds them), so mutating it by
    hand stays correct, only slower.
    """

    _positions: dict[str, int] | None = None
    """id -> index, while the list is unchanged since `add_messages` made it (else None).

    A class default, not an `__init__`: `MessageList(items)` stays the C-level list
    constructor, which every merge pays for."""

    def __copy__(self) -> MessageList:
        """A copy with positions of its own: a merge into one copy takes over (and extends)
        the positions it remembers, which must not move under the other."""
        twin = MessageList(self)
        if self._positions is not None:
            twin._positions = self._positions.copy()
        return twin


def _remembering(items: list[Any], positions: dict[str, int]) -> MessageList:
    result = MessageList(items)
    result._positions = positions
    return result


def with_positions(messages: list[Any], ids: list[str]) -> list[Any]:
    """`messages` (plain messages with these `ids`) as a MessageList that knows its positions.

    `add_messages` writing it into an empty list takes the positions over
    instead of reading every id again: the engine does this for a run's
    input, often a whole conversation passed back in. If an id repeats the
    list is returned as it is, for the merge to resolve.
    """
    positions = dict(zip(ids, count()))
    return _remembering(messages, positions) if len(positions) == len(ids) else messages


def with_known_positions(messages: list[Any], positions: dict[str, int]) -> MessageList:
    """`messages` as a MessageList with `positions`, an id -> index map the caller built.

    The caller vouches that every message has a distinct id and `positions`
    maps each to its index (what `with_positions` would compute).
    """
    return _remembering(messages, positions)


def _forgetting(name: str) -> Any:
    method = getattr(list, name)

    def mutate(self: MessageList, *args: Any, **kwargs: Any) -> Any:
        self._positions = None
        return method(self, *args, **kwargs)  # sort(key=..., reverse=...) takes keywords

    mutate.__name__ = name
    return mutate


for _name in (
    "append",
    "extend",
    "insert",
    "pop",
    "remove",
    "clear",
    "sort",
    "reverse",
    "__setitem__",
    "__delitem__",
    "__iadd__",
    "__imul__",
):
    setattr(MessageList, _name, _forgetting(_name))


def _positions_of(messages: object) -> dict[str, int] | None:
    """id -> index of a clean message list (unique ids, all set), else None.

    A `MessageList` hands its remembered positions over to the merge that
    extends it (it will rebuild them if it is ever merged into again, as on
    a fork), so the common path copies nothing of size O(history).
    """
    if isinstance(messages, MessageList):
        known = messages._positions
        if known is not None:
            messages._positions = None
            return known
    if not isinstance(messages, list):
        return None
    try:
        positions = {m.id: i for i, m in enumerate(messages)}
    except AttributeError:
        return None
    if len(positions) != len(messages) or None in positions:
        return None
    return positions


def _merge(merged: list[Any], positions: dict[str, int], updates: Sequence[Any]) -> bool:
    """Apply `updates` to `merged` in order; True if a RemoveMessage left a hole.

    The first branch is the hot path (a message with an id); coercion,
    id assignment and removal take the second.
    """
    get_position = positions.get
    append = _append.__get__(merged)  # list's own methods: `merged` may be a MessageList
    removed = False
    for message in updates:
        cls = type(message)
        if cls in _PLAIN:
            message_id = message.id
            if message_id is not None:
                position = get_position(message_id)
                if position is None:
                    positions[message_id] = len(merged)
                    append(message)
                else:
                    _setitem(merged, position, message)
                continue
        if cls not in _WITH_IDS:
            message = coerce_message(message)
            cls = type(message)
        message_id = message.id
        if message_id is None:
            message_id = new_message_id()
            message = message.model_copy(update={"id": message_id})
        if cls is RemoveMessage:
            if message_id == REMOVE_ALL_MESSAGES:
                list.clear(merged)
                positions.clear()
                removed = False
                continue
            position = positions.pop(message_id, None)
            if position is None:
                raise InvalidMessageError(
                    f"RemoveMessage names id {message_id!r}, but no message in the list has "
                    f"it ({len(positions)} messages); pass the id of a message that is there",
                    message_id=message_id,
                )
            _setitem(merged, position, _REMOVED)
            removed = True
            continue
        position = get_position(message_id)
        if position is None:
            positions[message_id] = len(merged)
            append(message)
        else:
            _setitem(merged, position, message)
    return removed


def add_messages(left: Sequence[Any] | Any, right: Sequence[Any] | Any) -> list[AnyMessage]:
    """Merge `right` into `left` by message id, in time linear in both.

    - a message whose id is already in `left` replaces it in place;
    - a new message is appended; one without an id first gets one
      (deterministic inside a run, a uuid outside);
    - `RemoveMessage(id)` deletes that message (an unknown id is an error);
      `RemoveMessage(REMOVE_ALL_MESSAGES)` clears everything before it;
    - dicts, `(role, content)` tuples and strings are coerced to messages.

    Neither argument is modified; messages are never mutated. The result
    is a `MessageList` that remembers its ids' positions, so merging a
    small update into a long history costs O(update), not O(history).
    """
    if not left and type(right) in _LISTS:
        # a first write (a new thread's input, or a history passed back in): when every
        # item is a plain message with a distinct id, its positions are all there is to do
        if isinstance(right, MessageList) and right._positions is not None:
            known, right._positions = right._positions, None  # handed over, as from `left`
            return _remembering(right, known)
        if _PLAIN.issuperset(map(type, right)):
            fresh = dict(zip(map(_ID, right), count()))  # C-level passes: O(n), no Python loop
            if len(fresh) == len(right) and None not in fresh:
                return _remembering(right, fresh)  # type: ignore[arg-type]  # a list, by type
    positions = _positions_of(left)
    if (
        positions is not None
        and type(right) in _LISTS
        and len(right) > _FEW
        and _PLAIN.issuperset(map(type, right))
    ):
        return _merge_plain(left, positions, right)  # many messages, no removals
    if positions is None:
        merged: list[Any] = []
        positions = {}
        if left and _merge(merged, positions, coerce_messages(left)):
            merged, positions = _compacted(merged)
    else:
        merged = MessageList(left)  # the one copy; `_merge` extends it with list's own methods
    if isinstance(right, list):
        updates = right
    elif isinstance(right, tuple) and not (len(right) == 2 and isinstance(right[0], str)):
        updates = list(right)  # a tuple of messages, not one (role, content) pair
    else:
        updates = coerce_messages(right)
    if _merge(merged, positions, updates):
        merged, positions = _compacted(merged)
    if type(merged) is MessageList:
        merged._positions = positions
        return merged
    return _remembering(merged, positions)


def _merge_plain(left: Any, positions: dict[str, int], updates: Sequence[Any]) -> MessageList:
    """`add_messages` for plain messages into a list (`left`) whose positions are known.

    Per update message one dict lookup and one list store, as a bare loop
    would do (benchmarks: `merge_into_state` and its floor); the copy of
    `left` is a plain list's (C-level `list.copy`, fast even for a
    MessageList), wrapped once at the end.
    """
    merged = _copy(left)
    find = positions.get
    append = merged.append
    for message in updates:
        message_id = message.id
        position = find(message_id)
        if position is None:
            if message_id is None:
                message_id = new_message_id()
                message = message.model_copy(update={"id": message_id})
                position = find(message_id)
                if position is not None:
                    merged[position] = message
                    continue
            positions[message_id] = len(merged)
            append(message)
        else:
            merged[position] = message
    return _remembering(merged, positions)


def _compacted(merged: list[Any]) -> tuple[list[Any], dict[str, int]]:
    """The list without removed slots, and its positions renumbered."""
    kept = [m for m in merged if m is not _REMOVED]
    return kept, {m.id: i for i, m in enumerate(kept)}


_append = list.append
_copy = list.copy
_FEW = 8
"""Up to this many update messages the general loop is as quick (one copy, list's own
methods); beyond it `_merge_plain` (a plain list's copy and stores, wrapped once)."""
_setitem = list.__setitem__
_PLAIN = frozenset({SystemMessage, HumanMessage, AIMessage, ToolMessage})
_LISTS = frozenset({list, MessageList})
