"""add_messages (DESIGN §2): merge by id, removal, coercion, ids, purity, MessageList."""

from __future__ import annotations

import copy
import pickle
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowgraph._context import message_id_factory
from flowgraph._ids import deterministic_id_factory
from flowgraph.errors import InvalidMessageError
from flowgraph.messages import (
    REMOVE_ALL_MESSAGES,
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from flowgraph.reducers import MessageList, add_messages


def H(text: str, id: str | None = None) -> HumanMessage:
    return HumanMessage(text, id=id)


def A(text: str, id: str | None = None) -> AIMessage:
    return AIMessage(text, id=id)


def contents(messages: list[Any]) -> list[Any]:
    return [(m.id, m.content) for m in messages]


@contextmanager
def id_factory(factory: Callable[[], str] | None) -> Iterator[None]:
    token = message_id_factory.set(factory)
    try:
        yield
    finally:
        message_id_factory.reset(token)


# -------------------------------------------------------------- by id


def test_new_messages_are_appended_in_order() -> None:
    result = add_messages([H("a", "1")], [A("b", "2"), H("c", "3")])
    assert contents(result) == [("1", "a"), ("2", "b"), ("3", "c")]


def test_same_id_replaces_in_place() -> None:
    left = [SystemMessage("s", id="s"), H("q", "h"), A("draft", "a"), H("more", "h2")]
    result = add_messages(left, [A("final", "a")])
    assert contents(result) == [("s", "s"), ("h", "q"), ("a", "final"), ("h2", "more")]
    assert type(result[2]) is AIMessage


def test_replacement_may_change_the_message_type() -> None:
    result = add_messages([H("q", "x")], [A("now an answer", "x")])
    assert result == [A("now an answer", "x")]


def test_duplicated_id_inside_one_update_last_wins_in_place() -> None:
    result = add_messages(
        [H("a", "1"), H("b", "2")], [A("x", "2"), H("new", "3"), A("y", "2"), H("z", "3")]
    )
    assert contents(result) == [("1", "a"), ("2", "y"), ("3", "z")]


def test_duplicated_ids_in_left_are_merged_like_updates() -> None:
    result = add_messages([H("a", "1"), H("b", "1"), H("c", "2")], [])
    assert contents(result) == [("1", "b"), ("2", "c")]


def test_empty_and_none_left() -> None:
    assert add_messages([], [H("a", "1")]) == [H("a", "1")]
    assert add_messages(None, [H("a", "1")]) == [H("a", "1")]
    assert add_messages([H("a", "1")], []) == [H("a", "1")]


# ------------------------------------------------------------- removal


def test_remove_message_deletes_by_id() -> None:
    left = [H("a", "1"), A("b", "2"), H("c", "3")]
    result = add_messages(left, [RemoveMessage("2")])
    assert contents(result) == [("1", "a"), ("3", "c")]
    # positions are renumbered: a later replacement lands in the right slot
    result = add_messages(result, [H("C", "3"), RemoveMessage("1"), H("d", "4")])
    assert contents(result) == [("3", "C"), ("4", "d")]


def test_removed_then_re_added_goes_to_the_end() -> None:
    result = add_messages([H("a", "1"), H("b", "2")], [RemoveMessage("1"), H("a again", "1")])
    assert contents(result) == [("2", "b"), ("1", "a again")]


def test_remove_of_unknown_id_names_it() -> None:
    left = [H("a", "1")]
    with pytest.raises(InvalidMessageError, match="'ghost'") as info:
        add_messages(left, [RemoveMessage("ghost")])
    assert info.value.message_id == "ghost"
    assert isinstance(info.value, ValueError)
    assert left == [H("a", "1")]


def test_remove_of_an_id_removed_earlier_in_the_same_update_is_unknown() -> None:
    with pytest.raises(InvalidMessageError, match="'1'"):
        add_messages([H("a", "1")], [RemoveMessage("1"), RemoveMessage("1")])


def test_remove_all_clears_and_keeps_what_follows() -> None:
    left = [SystemMessage("s", id="s"), H("a", "1"), A("b", "2")]
    result = add_messages(
        left, [H("ignored", "1"), RemoveMessage(REMOVE_ALL_MESSAGES), H("fresh", "9"), A("b2", "2")]
    )
    assert contents(result) == [("9", "fresh"), ("2", "b2")]
    assert add_messages(left, RemoveMessage(REMOVE_ALL_MESSAGES)) == []
    # after a clear, an earlier id is unknown again
    with pytest.raises(InvalidMessageError, match="'s'"):
        add_messages(left, [RemoveMessage(REMOVE_ALL_MESSAGES), RemoveMessage("s")])


def test_remove_all_after_a_removal_in_the_same_update() -> None:
    result = add_messages(
        [H("a", "1"), H("b", "2")],
        [RemoveMessage("1"), RemoveMessage(REMOVE_ALL_MESSAGES), H("c", "3")],
    )
    assert contents(result) == [("3", "c")]


# ------------------------------------------------------------ coercion


def test_dicts_tuples_and_strings_are_coerced() -> None:
    result = add_messages(
        [{"role": "system", "content": "rules", "id": "s"}],
        [
            ("user", "hi"),
            "bare string",
            {"role": "assistant", "content": "yo", "id": "a"},
            {"type": "tool", "content": "r", "tool_call_id": "c", "id": "t"},
            ("ai", "second"),
        ],
    )
    assert [type(m) for m in result] == [
        SystemMessage,
        HumanMessage,
        HumanMessage,
        AIMessage,
        ToolMessage,
        AIMessage,
    ]
    assert [m.text for m in result] == ["rules", "hi", "bare string", "yo", "r", "second"]
    assert result[0].id == "s"
    assert all(isinstance(m.id, str) and m.id for m in result)


def test_a_single_update_need_not_be_a_list() -> None:
    assert contents(add_messages([], H("a", "1"))) == [("1", "a")]
    assert [m.text for m in add_messages([], ("user", "hi"))] == ["hi"]
    assert [m.text for m in add_messages([], "hi")] == ["hi"]
    assert [m.text for m in add_messages([], {"role": "user", "content": "hi"})] == ["hi"]
    assert contents(add_messages([], (H("a", "1"), H("b", "2")))) == [("1", "a"), ("2", "b")]


def test_openai_shaped_updates_are_coerced() -> None:
    result = add_messages(
        [H("weather?", "h")],
        [
            {
                "role": "assistant",
                "id": "a",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{}"}}
                ],
            }
        ],
    )
    assert result[1] == AIMessage(id="a", tool_calls=[ToolCall(id="c1", name="w")])


def test_bad_updates_raise_invalid_message_error() -> None:
    with pytest.raises(InvalidMessageError, match="tool_call_id"):
        add_messages([], [{"role": "tool", "content": "x"}])
    with pytest.raises(InvalidMessageError, match="'robot'"):
        add_messages([], [("robot", "x")])
    with pytest.raises(InvalidMessageError, match="int"):
        add_messages([], [42])


# ----------------------------------------------------------------- ids


def test_id_less_messages_get_fresh_uuids_outside_a_run() -> None:
    first = add_messages([H("a")], [A("b"), H("c")])
    again = add_messages([H("a")], [A("b"), H("c")])
    ids = [m.id for m in first]
    assert all(str(uuid.UUID(i)) == i for i in ids)  # type: ignore[arg-type]  # ids are set
    assert len(set(ids)) == 3
    assert not set(ids) & {m.id for m in again}


def test_ids_are_deterministic_inside_a_run() -> None:
    def run() -> list[Any]:
        with id_factory(deterministic_id_factory("t1", 3, 0)):
            return add_messages([H("kept", "k")], [A("b"), ("user", "c"), "d"])

    first, second = run(), run()
    assert first == second
    assert [m.id for m in first] == [m.id for m in second]
    assert first[0].id == "k"
    assert len({m.id for m in first}) == 4
    assert all(isinstance(m.id, str) and m.id for m in first)
    with id_factory(deterministic_id_factory("t1", 3, 1)):
        other_task = add_messages([H("kept", "k")], [A("b"), ("user", "c"), "d"])
    assert not {m.id for m in other_task[1:]} & {m.id for m in first[1:]}


def test_a_retried_step_is_idempotent() -> None:
    def step(history: list[Any]) -> list[Any]:
        with id_factory(deterministic_id_factory("t1", 4, 0)):
            return add_messages(history, [A("answer"), ToolMessage("r", tool_call_id="c")])

    history = add_messages([], [H("q", "q")])
    once = step(history)
    twice = step(once)
    assert twice == once
    assert len(twice) == 3


def test_the_deterministic_id_is_not_written_back_to_the_input() -> None:
    message = A("x")
    with id_factory(deterministic_id_factory("t", 0, 0)):
        result = add_messages([], [message])
    assert message.id is None
    assert result[0].id is not None
    assert result[0].content == "x"


# --------------------------------------------------------------- purity


def test_inputs_are_never_mutated() -> None:
    left = [SystemMessage("s", id="s"), H("a", "1"), A("b", "2")]
    right = [A("b2", "2"), RemoveMessage("1"), H("new"), ("user", "t"), RemoveMessage("s")]
    left_before, right_before = list(left), list(right)
    left_dumps = [m.model_dump() for m in left]
    right_dumps = [m.model_dump() if not isinstance(m, tuple) else m for m in right]
    result = add_messages(left, right)
    assert left == left_before and all(a is b for a, b in zip(left, left_before, strict=True))
    assert right == right_before and all(a is b for a, b in zip(right, right_before, strict=True))
    assert [m.model_dump() for m in left] == left_dumps
    assert [m.model_dump() if not isinstance(m, tuple) else m for m in right] == right_dumps
    assert result is not left and result is not right
    assert contents(result)[0] == ("2", "b2")


def test_a_message_list_argument_is_not_changed_either() -> None:
    state = add_messages([], [H("a", "1"), H("b", "2")])
    snapshot = list(state)
    add_messages(state, [H("B", "2"), RemoveMessage("1")])
    assert state == snapshot
    assert isinstance(state, MessageList)


# ---------------------------------------------------------- MessageList


def test_result_is_a_message_list() -> None:
    result = add_messages([], [H("a", "1")])
    assert isinstance(result, MessageList)
    assert isinstance(result, list)
    assert result == [H("a", "1")]


def test_chained_merges_use_remembered_positions_correctly() -> None:
    state: list[Any] = []
    for i in range(50):
        state = add_messages(state, [H(f"m{i}", str(i))])
    state = add_messages(state, [A("replaced 10", "10"), RemoveMessage("20"), H("m50", "50")])
    state = add_messages(state, [A("replaced 30", "30"), A("replaced 0", "0")])
    assert len(state) == 50
    assert state[0] == A("replaced 0", "0")
    assert state[10] == A("replaced 10", "10")
    assert state[29] == A("replaced 30", "30")  # shifted left by the removal of "20"
    assert state[-1] == H("m50", "50")


def test_forking_a_state_merges_both_branches_correctly() -> None:
    base = add_messages([], [H("a", "1"), H("b", "2")])
    left_branch = add_messages(base, [H("x", "3")])
    right_branch = add_messages(base, [H("B", "2"), H("y", "4")])
    assert contents(left_branch) == [("1", "a"), ("2", "b"), ("3", "x")]
    assert contents(right_branch) == [("1", "a"), ("2", "B"), ("4", "y")]
    assert contents(base) == [("1", "a"), ("2", "b")]


MUTATIONS: list[tuple[str, Callable[[MessageList], Any]]] = [
    ("append", lambda ml: ml.append(H("appended", "x"))),
    ("extend", lambda ml: ml.extend([H("e1", "x"), H("e2", "y")])),
    ("insert", lambda ml: ml.insert(0, H("inserted", "x"))),
    ("pop", lambda ml: ml.pop(0)),
    ("remove", lambda ml: ml.remove(ml[1])),
    ("clear", lambda ml: ml.clear()),
    ("sort", lambda ml: ml.sort(key=lambda m: m.id, reverse=True)),
    ("reverse", lambda ml: ml.reverse()),
    ("setitem", lambda ml: ml.__setitem__(0, H("set", "x"))),
    ("setslice", lambda ml: ml.__setitem__(slice(0, 2), [H("s", "x")])),
    ("delitem", lambda ml: ml.__delitem__(0)),
    ("delslice", lambda ml: ml.__delitem__(slice(1, None))),
    ("iadd", lambda ml: ml.__iadd__([H("plus", "x")])),
    ("imul", lambda ml: ml.__imul__(1)),
]


def reference(left: list[Any], right: list[Any]) -> list[Any]:
    """An obviously correct O(n²) add_messages for messages that all carry ids."""
    result: list[Any] = []
    for message in [*left, *right]:
        if isinstance(message, RemoveMessage):
            if message.id == REMOVE_ALL_MESSAGES:
                result = []
                continue
            matches = [i for i, kept in enumerate(result) if kept.id == message.id]
            if not matches:
                raise InvalidMessageError(f"unknown id {message.id!r}")
            del result[matches[0]]
            continue
        for i, kept in enumerate(result):
            if kept.id == message.id:
                result[i] = message
                break
        else:
            result.append(message)
    return result


def _made_by_a_first_write() -> MessageList:
    return add_messages([], [H("a", "1"), H("b", "2"), H("c", "3")])  # type: ignore[return-value]


def _made_by_a_long_update() -> MessageList:
    """More than 8 plain messages into a list with positions: `_merge_plain`'s result."""
    fill = [H(f"filler {i}", f"f{i}") for i in range(9)]
    state = add_messages(add_messages([], [H("a", "1")]), [H("b", "2"), H("c", "3"), *fill])
    assert isinstance(state, MessageList) and state._positions is not None
    return state


@pytest.mark.parametrize("made", [_made_by_a_first_write, _made_by_a_long_update])
@pytest.mark.parametrize(("name", "mutate"), MUTATIONS, ids=[name for name, _ in MUTATIONS])
def test_in_place_mutation_of_the_result_keeps_later_merges_correct(
    name: str, mutate: Callable[[MessageList], Any], made: Callable[[], MessageList]
) -> None:
    state = made()
    mutate(state)
    by_hand = list(state)
    update = [A("A", "1"), A("C", "3"), A("X", "x"), A("new", "n")]
    assert add_messages(state, update) == reference(by_hand, update)
    if any(m.id == "2" for m in by_hand):
        assert add_messages(state, [RemoveMessage("2")]) == reference(by_hand, [RemoveMessage("2")])


def test_copies_and_pickles_of_a_message_list_merge_correctly() -> None:
    state = add_messages([], [H("a", "1"), H("b", "2")])
    copied, deep, pickled = (
        copy.copy(state),
        copy.deepcopy(state),
        pickle.loads(pickle.dumps(state)),
    )
    add_messages(state, [H("c", "3")])  # consumes the original's positions
    for other in (copied, deep, pickled):
        assert add_messages(other, [H("C", "3"), H("B", "2")]) == [
            H("a", "1"),
            H("B", "2"),
            H("C", "3"),
        ]


def test_a_shallow_copy_of_a_message_list_keeps_positions_of_its_own() -> None:
    state = add_messages([], [H("a", "1"), H("b", "2")])
    twin = copy.copy(state)
    assert isinstance(twin, MessageList) and twin == state
    assert twin._positions == {"1": 0, "2": 1}  # remembered: its next merge reads no ids
    assert twin._positions is not state._positions
    add_messages(state, [H("c", "3")])  # takes over and extends the original's positions
    assert twin._positions == {"1": 0, "2": 1}
    merged = add_messages(twin, [H("B", "2"), H("d", "4")])
    assert merged == [H("a", "1"), H("B", "2"), H("d", "4")]
    assert merged._positions == {"1": 0, "2": 1, "4": 2}  # type: ignore[attr-defined]


FIRST_WRITE_EDITS: list[tuple[str, Callable[[MessageList], Any]]] = [
    ("append-tuple", lambda ml: ml.append(("ai", "a tuple"))),
    ("append-repeated-id", lambda ml: ml.append(A("B", "2"))),
    (
        "extend-dict-and-repeat",
        lambda ml: ml.extend([{"role": "user", "content": "d"}, A("B", "2")]),
    ),
    ("insert-tuple", lambda ml: ml.insert(1, ("human", "inserted"))),
    ("setitem-repeated-id", lambda ml: ml.__setitem__(0, A("B", "2"))),
    ("iadd-tuple", lambda ml: ml.__iadd__([("ai", "a tuple")])),
]


@pytest.mark.parametrize(
    ("name", "edit"), FIRST_WRITE_EDITS, ids=[name for name, _ in FIRST_WRITE_EDITS]
)
def test_a_hand_edited_message_list_as_a_first_write_is_coerced_and_deduplicated(
    name: str, edit: Callable[[MessageList], Any]
) -> None:
    """A MessageList add_messages made, then edited by hand, written into an empty list
    (a new thread's input, a history passed back in): the edit dropped the remembered
    positions, so the merge coerces and de-duplicates as for any list."""
    written = add_messages([], [H("a", "1"), H("b", "2")])
    edit(written)
    by_hand = list(written)
    merged = add_messages([], written)
    assert all(isinstance(m, BaseMessage) for m in merged)
    ids = [m.id for m in merged]
    assert None not in ids and len(set(ids)) == len(ids)
    expected = reference([], [coerce(m, i) for i, m in enumerate(by_hand)])
    assert [(m.type, m.text) for m in merged] == [(m.type, m.text) for m in expected]
    again = add_messages(merged, [A("later", "later")])  # and the result merges on as usual
    assert [m.id for m in again] == [*ids, "later"]


def coerce(message: Any, index: int) -> BaseMessage:
    """What add_messages makes of an item: a message, with an id of its own if it had none."""
    coerced = add_messages([], [message])[0]
    return coerced if message_id(message) else coerced.model_copy(update={"id": f"new-{index}"})


def message_id(item: Any) -> str | None:
    return item.id if isinstance(item, BaseMessage) else None


def test_merging_into_a_long_history_reads_none_of_its_ids() -> None:
    """The O(update) promise, observed without a clock: the history's items are swapped for
    stand-ins that count reads of `.id` (behind the list's back, so the remembered
    positions stay); merging updates into it must not read one of them."""
    reads = [0]

    class CountingReads:
        def __init__(self, message: BaseMessage) -> None:
            self.message = message

        @property
        def id(self) -> str | None:
            reads[0] += 1
            return self.message.id

    history = add_messages([], [H(f"m{i}", str(i)) for i in range(500)])
    for i, message in enumerate(history):
        list.__setitem__(history, i, CountingReads(message))
    merged = add_messages(history, [A("new", "new"), A("replaced", "7")])
    merged = add_messages(merged, [A("newer", "newer"), A("replaced again", "new")])
    merged = add_messages(merged, [("ai", "coerced, id-less")])
    assert reads == [0]
    assert len(merged) == 503
    assert (merged[7].text, merged[500].text, merged[501].text) == (
        "replaced",
        "replaced again",
        "newer",
    )
    assert merged[502].text == "coerced, id-less" and merged[502].id
    assert isinstance(merged[8], CountingReads) and merged[8].message.text == "m8"


def test_id_less_messages_merged_into_a_remembered_list_get_the_factorys_ids() -> None:
    """The plain-list path (a MessageList left, more than 8 plain messages) gives id-less
    messages the ids the general path does, and a fresh id already in the list replaces
    there."""
    padding = [H(f"pad {i}", f"p{i}") for i in range(7)]
    update = [A("new"), A("replaces k"), H("again", "o"), *padding]
    ids = iter(["fresh", "k"])  # the second fresh id names a message already in the list
    history = add_messages([], [H("kept", "k"), H("other", "o")])
    assert isinstance(history, MessageList)
    with id_factory(lambda: next(ids)):
        merged = add_messages(history, update)
    assert contents(merged)[:3] == [("k", "replaces k"), ("o", "again"), ("fresh", "new")]
    assert len(merged) == 10
    assert add_messages(merged, [A("newest", "fresh")])[2].text == "newest"  # positions kept
    ids = iter(["fresh", "k"])
    with id_factory(lambda: next(ids)):  # the general path (a plain list left) agrees
        general = add_messages(list(history), update)
    assert contents(general) == contents(merged)


# ------------------------------------------------------------ properties

_pool = st.sampled_from(["a", "b", "c", "d", "e", "f"])
_with_id = st.one_of(
    st.builds(HumanMessage, content=st.text(max_size=3), id=_pool),
    st.builds(AIMessage, content=st.text(max_size=3), id=_pool),
    st.builds(SystemMessage, content=st.text(max_size=3), id=_pool),
    st.builds(ToolMessage, content=st.text(max_size=3), id=_pool, tool_call_id=st.just("c")),
)
_removal = st.one_of(
    st.builds(RemoveMessage, id=_pool), st.just(RemoveMessage(REMOVE_ALL_MESSAGES))
)
_update = st.lists(_with_id | _removal, max_size=8)
_no_removes = st.lists(_with_id, max_size=8)


def _merge_or_error(left: Any, right: list[Any]) -> list[Any] | type[Exception]:
    try:
        return add_messages(left, right)
    except InvalidMessageError:
        return InvalidMessageError


def _reference_or_error(left: list[Any], right: list[Any]) -> list[Any] | type[Exception]:
    try:
        return reference(left, right)
    except InvalidMessageError:
        return InvalidMessageError


@given(_no_removes, _no_removes)
def test_property_idempotent_for_messages_with_ids(left: list[Any], right: list[Any]) -> None:
    """add(add(l, r), r) == add(l, r) when every message carries an id (no RemoveMessage)."""
    once = add_messages(left, right)
    assert add_messages(once, right) == once


@given(_no_removes, _no_removes, _no_removes)
def test_property_associative_when_all_ids_set_and_no_removes(
    a: list[Any], b: list[Any], c: list[Any]
) -> None:
    """add(add(a, b), c) == add(a, add(b, c)) holds when every message has an id and no
    update holds a RemoveMessage (a removal in c of an id only a holds would fail on the
    right-hand side, and id-less messages get fresh ids on each side)."""
    assert add_messages(add_messages(a, b), c) == add_messages(a, add_messages(b, c))


@given(_no_removes, st.lists(_update, max_size=5))
def test_property_equals_the_reference_model(start: list[Any], updates: list[list[Any]]) -> None:
    """A chain of merges (exercising remembered positions) equals the O(n²) reference."""
    state: Any = start
    expected: Any = list(start)
    for update in updates:
        got = _merge_or_error(state, update)
        want = _reference_or_error(expected, update)
        assert got == want
        if got is InvalidMessageError:
            continue  # a failed merge leaves the state as it was
        state, expected = got, want
        ids = [m.id for m in state]
        assert len(ids) == len(set(ids)), "result ids must be unique"


@given(
    _no_removes,
    st.lists(st.sampled_from(range(len(MUTATIONS))), max_size=4),
    _update,
)
def test_property_hand_mutations_then_merge_equal_the_reference(
    start: list[Any], mutation_indexes: list[int], update: list[Any]
) -> None:
    state = add_messages([], start)
    for index in mutation_indexes:
        try:
            MUTATIONS[index][1](state)
        except (IndexError, ValueError):
            pass  # pop/remove on a too-short list: nothing changed
    assert _merge_or_error(state, update) == _reference_or_error(list(state), update)


@given(st.lists(st.builds(HumanMessage, content=st.text(max_size=3)) | _with_id, max_size=8))
def test_property_every_result_message_has_a_unique_id(right: list[BaseMessage]) -> None:
    result = add_messages([], right)
    ids = [m.id for m in result]
    assert None not in ids
    assert len(ids) == len(set(ids))
    assert [m.content for m in result if m.id not in {"a", "b", "c", "d", "e", "f"}] == [
        m.content for m in right if m.id is None
    ]


@given(_no_removes, st.lists(st.lists(_with_id, min_size=9, max_size=20), max_size=4))
def test_property_long_plain_updates_equal_the_reference_model(
    start: list[Any], updates: list[list[Any]]
) -> None:
    """Updates of more than 8 plain messages take the plain-list path; it equals the
    reference too, through a chain of merges that hands positions on."""
    state: Any = start
    expected: Any = list(start)
    for update in updates:
        state = add_messages(state, update)
        expected = reference(expected, update)
        assert state == expected
        assert isinstance(state, MessageList) and state._positions is not None
