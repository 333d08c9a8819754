"""The proposer's prompt templates (``templates/*.j2``), rendered with undefined variables as errors."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

PROPOSER_TEMPLATES = Path(__file__).parent / "templates"


@cache
def _env() -> Environment:
    return Environment(
        loader=FileSystemLoader(PROPOSER_TEMPLATES),
        undefined=StrictUndefined,
        autoescape=False,  # prompts and markdown, not HTML
        keep_trailing_newline=True,
    )


def render(name: str, **variables: Any) -> str:
    return _env().get_template(name).render(**variables).strip() + "\n"
