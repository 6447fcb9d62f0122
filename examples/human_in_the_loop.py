"""Human in the loop: a person approves (or declines) every tool call before it runs.

The agent may ask for tools; an "approve" node then calls interrupt(), which
pauses the run and records the question in the checkpoint. The caller sees
it in get_state(thread).interrupts -- possibly hours later, in another
process -- and answers with invoke(Command(resume=...), thread_id=...). An
approval routes to the tools; a refusal answers each call with an error
ToolMessage the model can read, so the transcript stays well-formed.

In this offline run the script plays the human: it approves the first
request and declines the second. Then it asks "what if?": it forks the
thread at the first question and answers no there, then yes again. The
yes branch does not book a second table: a branch takes the result its
origin stored for the same tool call (docs/human-in-the-loop.md, "A fork
does not repeat the world"). And for the call a crash cuts off mid-way, which has no
stored result, `book_table` hands its tool call id to the restaurant as an
idempotency key: the call id is the same in every retry and every branch.

Runs with a scripted model; set FLOWGRAPH_MODEL (and FLOWGRAPH_BASE_URL /
FLOWGRAPH_API_KEY) to use a real one.

    python examples/human_in_the_loop.py [path/to/checkpoints.db]

From the command line you are the human. On a terminal, `flowgraph run`
asks for the answer at the pause (type yes, or a reason to decline);
otherwise it exits with status 3 and prints the command that resumes:

    flowgraph run examples/human_in_the_loop.py \
        "Book a table for two at Chez Paul at 20:00." --thread dinner
    flowgraph resume dinner --value '{"approved": true}'     # or --value '"no, not tonight"'

`app` below is what `flowgraph run` (and `draw`) loads; main() puts the same
app on a SQLite file of its own with `app.with_checkpointer(...)`.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

from flowgraph import (
    END,
    START,
    AIMessage,
    Command,
    HumanMessage,
    InjectedToolCallId,
    MessagesState,
    ModelNode,
    StateGraph,
    ToolMessage,
    ToolNode,
    interrupt,
    tool,
    tools_condition,
)
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer
from flowgraph.models import ScriptedChatModel, init_chat_model

BOOKINGS: list[str] = []
"""What the tools really did: a declined call must never land here."""
REQUESTS: list[str] = []
"""Every request the restaurant's booking service received, with its idempotency key."""
CONFIRMATIONS: dict[str, str] = {}


def reserve(key: str, booking: str) -> str:
    """The restaurant's booking service: a request it has seen (same key) books nothing new."""
    REQUESTS.append(key)
    if key not in CONFIRMATIONS:
        BOOKINGS.append(booking)
        CONFIRMATIONS[key] = f"FG-{len(BOOKINGS)}"
    return CONFIRMATIONS[key]


@tool
def book_table(
    restaurant: str, people: int, time: str, call_id: Annotated[str, InjectedToolCallId]
) -> str:
    """Book a table at a restaurant.

    Args:
        restaurant: The restaurant's name.
        people: How many people.
        time: When, e.g. "20:00".
    """
    # The call id is the model's name for this request, the same in a retry, a resume
    # after a crash and a fork: the service books once per key, whatever happens here.
    confirmation = reserve(call_id, f"{restaurant}, {people} people at {time}")
    return f"Booked {restaurant} for {people} at {time} (confirmation {confirmation})."


@tool
def send_invitations(message: str) -> str:
    """Email a message to everyone in the user's address book."""
    BOOKINGS.append(f"mass email: {message}")
    return "Sent to 312 contacts."


def approve(state: MessagesState) -> Command:
    """Pause for a human decision on the last AI message's tool calls.

    The node runs again from the top when the thread is resumed, and this
    time interrupt() returns the human's answer: nothing before the call
    may have side effects.
    """
    last = state.messages[-1]
    assert isinstance(last, AIMessage)
    decision = interrupt(
        {
            "question": "Run these tool calls?",
            "tool_calls": [{"name": c.name, "args": c.args} for c in last.tool_calls],
        }
    )
    if not isinstance(decision, dict):  # a plain answer, as typed at `flowgraph run`'s prompt
        text = str(decision).strip()
        yes = text.lower() in ("y", "yes", "ok", "approve", "approved", "true")
        decision = {"approved": yes, "reason": text}
    if decision.get("approved"):
        return Command(goto="tools")
    refusals = [
        ToolMessage(
            f"The user declined this call: {decision.get('reason') or 'no reason given'}",
            tool_call_id=call.id,
            name=call.name,
            status="error",
        )
        for call in last.tool_calls
    ]
    return Command(goto="agent", update={"messages": refusals})


NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def scripted_reply(messages: list[Any]) -> Any:
    """The offline model: asks for a tool per request, then reports what happened."""
    last = messages[-1]
    if last.type == "tool":
        if last.status == "error":
            verb = "send" if last.name == "send_invitations" else "book"
            return f"Understood, I did not {verb} anything."
        return f"Done: {last.text}"
    text = last.text
    if "invite" in text.lower():
        args = {"message": "Dinner at Chez Paul, 20:00!"}
        return {"tool_calls": [{"name": "send_invitations", "args": args, "id": "call_invite"}]}
    if "book" not in text.lower():
        return (
            "I am the offline stand-in for a model (set FLOWGRAPH_MODEL for a real one); "
            'I book tables, with your approval: "Book a table for two at Chez Paul at 20:00."'
        )
    place = re.search(r"\bat ((?:[A-Z][\w']* ?)+)", text)
    time = re.search(r"\d{1,2}:\d{2}", text)
    people = re.search(r"\bfor (\d+|one|two|three|four|five|six)\b", text)
    booking: dict[str, Any] = {
        "restaurant": place[1].strip() if place else "Chez Paul",
        "people": (NUMBERS.get(people[1]) or int(people[1])) if people else 2,
        "time": time[0] if time else "20:00",
    }
    return {"tool_calls": [{"name": "book_table", "args": booking, "id": "call_book"}]}


def pick_model() -> Any:
    """The real model named by FLOWGRAPH_MODEL, or a scripted one for offline runs."""
    if os.environ.get("FLOWGRAPH_MODEL"):
        return init_chat_model()
    return ScriptedChatModel(scripted_reply)


TOOLS = [book_table, send_invitations]
graph = StateGraph(MessagesState)
graph.add_node("agent", ModelNode(pick_model(), tools=TOOLS, system="You book restaurants."))
graph.add_node("approve", approve, destinations=["tools", "agent"])
graph.add_node("tools", ToolNode(TOOLS))
graph.add_edge(START, "agent")
# a tool call goes to the human first, never straight to the tools
graph.add_conditional_edges("agent", tools_condition, {"tools": "approve", END: END})
graph.add_edge("tools", "agent")
# No checkpointer here: `flowgraph run` keeps threads in its own store (--db), main() in a
# file. A run can only pause with one: the checkpoint is where it waits for the answer.
app = graph.compile()


def main() -> int:
    db = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "hitl.db"
    agent = app.with_checkpointer(SQLiteCheckpointer(db))
    thread = "dinner"
    # The "human" of this offline run: yes to the booking, no to the mass email.
    answers = [
        {"approved": True},
        {"approved": False, "reason": "do not email all my contacts"},
    ]
    for request, answer in zip(
        ["Book a table for two at Chez Paul at 20:00.", "Now invite all my contacts."],
        answers,
        strict=True,
    ):
        print(f"user  > {request}")
        agent.invoke({"messages": [HumanMessage(request)]}, thread_id=thread)
        paused = agent.get_state(thread)
        for pending in paused.interrupts:
            # What a UI would show, read back from the checkpoint.
            print(f"paused in '{pending.node}': {pending.value['question']}")
            for call in pending.value["tool_calls"]:
                print(f"  {call['name']}({call['args']})")
            print(f"human > {answer}")
        if paused.interrupts:
            agent.invoke(Command(resume=answer), thread_id=thread)
        print(f"agent > {agent.get_state(thread).values.messages[-1].text}\n")

    print("Tool results in the transcript:")
    for message in agent.get_state(thread).values.messages:
        if message.type == "tool":
            print(f"  {message.name} [{message.status}]: {message.text}")
    print(f"What the tools actually did: {BOOKINGS}")

    # What if the human had said no to the booking? Fork at the first question (its
    # interrupt was answered since) with the other answer: a new branch, the first kept.
    history = list(agent.get_state_history(thread))  # newest first
    asked = next(s for s in reversed(history) if s.next == ("approve",))
    fork = asked.checkpoint_id
    assert fork is not None  # a stored checkpoint has an id (only an empty thread's has none)
    print(f"\nwhat if > no, at checkpoint {fork[:12]}...")
    no = {"approved": False, "reason": "what if I had said no"}
    branch = agent.invoke(Command(resume=no), thread_id=thread, checkpoint_id=fork)
    print(f"agent > {branch.messages[-1].text}")
    # ... and yes again: the tool call is the one the first branch ran, so its stored result
    # is taken instead of booking again (rerun_tool_calls=True would call the tool)
    print(f"what if > yes, at checkpoint {fork[:12]}...")
    yes = {"approved": True}
    branch = agent.invoke(Command(resume=yes), thread_id=thread, checkpoint_id=fork)
    print(f"agent > {branch.messages[-1].text}")
    print(f"Requests the booking service received: {len(REQUESTS)}; bookings: {BOOKINGS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
