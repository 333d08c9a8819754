"""Fixtures for the proposer tests: a terminal domain context and scripted replies."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoenvscaling.roles.proposer.domain import DomainContext

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "terminal"


@pytest.fixture
def terminal_domain() -> DomainContext:
    # One small example keeps staging and the prompt-only prompt small.
    return DomainContext(
        name="terminal",
        description="files, logs, text and data wrangling",
        image="autoenv/terminal:latest",
        guide="# Terminal tasks\n\nSmall, self-contained shell tasks graded on the files they produce.\n",
        examples=[EXAMPLES / "ini-to-json"],
    )
