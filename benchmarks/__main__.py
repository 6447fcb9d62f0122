"""Run the benchmark scenarios and print a table of figures and ratios.

python -m benchmarks            # every scenario
python -m benchmarks codec      # scenarios whose name contains "codec"
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

from benchmarks._harness import SCENARIOS, Figure, has_langgraph


def _load_scenarios() -> None:
    for module in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if module.name.startswith("bench_"):
            importlib.import_module(f"benchmarks.{module.name}")


def _format(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.1f}" if value >= 10 else f"{value:,.3g}"


def _row(scenario: str, figure: Figure) -> str:
    ratio = figure.ratio
    verdict = ""
    if ratio is not None and figure.target is not None:
        verdict = "  meets target" if ratio >= figure.target else "  BELOW target"
        verdict += f" ({figure.target:.3g}x)"
    return (
        f"{scenario:<22} {figure.name:<38} {_format(figure.ours):>12} {_format(figure.theirs):>12}"
        f" {figure.unit:<8} {(_format(ratio) + 'x') if ratio else '-':>8}{verdict}"
    )


def main(argv: list[str]) -> int:
    _load_scenarios()
    wanted = [name for name in SCENARIOS if not argv or any(a in name for a in argv)]
    if not wanted:
        print(f"no scenario matches {argv}; known: {', '.join(sorted(SCENARIOS))}")
        return 2
    print(f"LangGraph side by side: {'yes' if has_langgraph() else 'no (pip install -e .[bench])'}")
    header = (
        f"{'scenario':<22} {'figure':<38} {'flowgraph':>12} {'langgraph':>12}"
        f" {'unit':<8} {'ratio':>8}"
    )
    print(header)
    print("-" * len(header))
    for name in wanted:
        for figure in SCENARIOS[name]():
            print(_row(name, figure), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
