"""`flowgraph draw`: the app's diagram, and a thread's path over it."""

from __future__ import annotations

from pathlib import Path

from .conftest import Cli


def test_draw_writes_mermaid_with_the_path_a_thread_took(cli: Cli, workdir: Path) -> None:
    assert cli("run", "weather.py", "Weather in Paris?", "--thread", "t1", "-q").code == 0

    plain = cli("draw", "weather.py", "-o", "plain.mmd")
    traced = cli("draw", "weather.py", "-o", "traced.mmd", "--thread", "t1")

    assert plain.code == 0 and traced.code == 0, plain.err + traced.err
    assert plain.err == f"Wrote {workdir / 'plain.mmd'}\n" or plain.err == "Wrote plain.mmd\n"
    drawn = (workdir / "plain.mmd").read_text()
    assert "agent" in drawn and "tools" in drawn
    assert (workdir / "traced.mmd").read_text() != drawn  # the thread's path is marked


def test_draw_svg_offline(cli: Cli, workdir: Path) -> None:
    done = cli("draw", "weather.py", "-o", "graph.svg")

    assert done.code == 0, done.err
    svg = (workdir / "graph.svg").read_text()
    assert svg.lstrip().startswith(("<svg", "<?xml")) and "agent" in svg


def test_draw_errors(cli: Cli) -> None:
    suffix = cli("draw", "weather.py", "-o", "graph.xyz")
    thread = cli("draw", "weather.py", "-o", "graph.mmd", "--thread", "nope")

    assert suffix.code == 1 and len(suffix.err_lines) == 1
    assert "unknown suffix '.xyz'" in suffix.err
    assert thread.code == 1 and len(thread.err_lines) == 1
