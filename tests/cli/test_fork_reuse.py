"""`flowgraph fork` does not issue a refund twice, and says so; `--rerun-tools` does (issue #28).

The tool writes each refund to a file, so what happened in the world is
read across the CLI's processes.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from .conftest import Cli

REFUND = '''
from pathlib import Path

from flowgraph import (
    END, START, Command, MessagesState, ModelNode, ScriptedChatModel, StateGraph,
    ToolMessage, ToolNode, interrupt, tool, tools_condition,
)


@tool
def refund(order_id: str, amount: int) -> str:
    """Refund an order."""
    with Path("refunds.log").open("a") as log:
        log.write(f"{order_id} {amount}\\n")
    return f"refunded {amount} on {order_id}"


def reply(messages):
    last = messages[-1]
    if last.type == "tool":
        return f"done: {last.text}"
    call = {"name": "refund", "args": {"order_id": "A1", "amount": 30}, "id": "c1"}
    return {"tool_calls": [call]}


def approve(state: MessagesState) -> Command:
    if interrupt("refund?") == "yes":
        return Command(goto="tools")
    declined = [
        ToolMessage("declined", tool_call_id=c.id, name=c.name, status="error")
        for c in state.messages[-1].tool_calls
    ]
    return Command(goto="agent", update={"messages": declined})


graph = StateGraph(MessagesState)
graph.add_node("agent", ModelNode(ScriptedChatModel(reply), tools=[refund]))
graph.add_node("approve", approve, destinations=["tools", "agent"])
graph.add_node("tools", ToolNode([refund]))
graph.add_edge(START, "agent")
graph.add_conditional_edges("agent", tools_condition, {"tools": "approve", END: END})
graph.add_edge("tools", "agent")
app = graph.compile()
'''


@pytest.fixture
def refunded(cli: Cli, workdir: Path) -> dict[str, str]:
    """Thread r: a refund asked for, approved and issued; its checkpoints by the node that
    wrote them (the agent's first: the question is asked next)."""
    (workdir / "refund.py").write_text(textwrap.dedent(REFUND))
    assert cli("run", "refund.py", "refund A1", "--thread", "r").code == 3
    assert cli("resume", "r", "--value", '"yes"').out == "done: refunded 30 on A1\n"
    rows = [line.split() for line in cli("history", "r").out.splitlines()[1:-1]]
    return {row[1]: row[2] for row in reversed(rows)}


def issued(workdir: Path) -> list[str]:
    return (workdir / "refunds.log").read_text().splitlines()


def test_fork_before_the_tool_step_reuses_the_refund_and_says_so(
    cli: Cli, workdir: Path, refunded: dict[str, str]
) -> None:
    forked = cli("fork", "r", "--checkpoint", refunded["approve"][:16])

    assert forked.code == 0, forked.err
    assert forked.out == "done: refunded 30 on A1\n"
    assert issued(workdir) == ["A1 30"]
    tools_line = next(line for line in forked.err_lines if "step 3  tools" in line)
    assert tools_line.endswith(
        "+1 msg  refund: not run again, reused the result stored at checkpoint "
        f"{refunded['tools']} (--rerun-tools runs it)"
    )


def test_fork_with_rerun_tools_issues_it_again(
    cli: Cli, workdir: Path, refunded: dict[str, str]
) -> None:
    forked = cli("fork", "r", "--checkpoint", refunded["approve"], "--rerun-tools")

    assert forked.code == 0, forked.err
    assert issued(workdir) == ["A1 30", "A1 30"]
    assert "reused" not in forked.err
    assert any(line.endswith("refund: success") for line in forked.err_lines)


def test_fork_answering_no_where_yes_was_said(
    cli: Cli, workdir: Path, refunded: dict[str, str]
) -> None:
    forked = cli("fork", "r", "--checkpoint", refunded["agent"], "--value", '"no"')

    assert forked.code == 0, forked.err
    assert forked.out == "done: declined\n"
    assert issued(workdir) == ["A1 30"]
    again = cli("fork", "r", "--checkpoint", refunded["agent"], "--value", '"yes"')
    assert again.out == "done: refunded 30 on A1\n"
    assert issued(workdir) == ["A1 30"]
