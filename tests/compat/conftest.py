"""Compat tests run one program under flowgraph and, when it is installed, under LangGraph.

A test that takes the `lib` fixture runs twice, once per library, and asserts
the same values both times: that is the claim "LangGraph code runs as
written" (issue 18), checked against LangGraph itself. The LangGraph run is
skipped only when LangGraph is not installed (the `test` extra installs it).
"""

from __future__ import annotations

import pytest

from tests.compat._libs import LIBRARIES, Lib, load


@pytest.fixture(params=LIBRARIES)
def lib(request: pytest.FixtureRequest) -> Lib:
    return load(request.param)
