"""The P1 baseline: one reply holds every staged piece (a JSON object under a schema, or header lines and fenced
blocks: ``StagedConfig.oneshot_format``); then the same record and novelty steps as a staged episode
(``flow.finish``), with no observe and no fix. It is offered the same operators as the staged arm (``combine``
when the context has a second parent), so the two arms stay paired."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel

from autoenvscaling.llm.base import Model
from autoenvscaling.roles.proposer.records import GenerationResult
from autoenvscaling.roles.proposer.staged.calls import parse_json
from autoenvscaling.roles.proposer.staged.config import StagedConfig
from autoenvscaling.roles.proposer.staged.episode import DEFAULT_OUTPUT, IDEA_UNPARSEABLE, Episode
from autoenvscaling.roles.proposer.staged.flow import drive_episode, finish
from autoenvscaling.roles.proposer.staged.spec import (
    COMPARE_HELP,
    Compare,
    Idea,
    Operator,
    json_format,
)
from autoenvscaling.roles.proposer.staged.state import StagedContext
from autoenvscaling.roles.proposer.staged.text import clip_data, ensure_output_named
from autoenvscaling.sandbox.base import SandboxBackend


class OneShot(BaseModel):
    """The one-shot recorded baseline's reply: the staged pieces in one JSON object."""

    operator: Operator = "new_question"
    change: str = ""
    output_file: str = DEFAULT_OUTPUT
    compare: Compare = "exact"
    data: str = ""
    instruction: str
    solve_sh: str


def oneshot_schema(operators: list[str]) -> dict[str, Any]:
    """JSON schema of ``OneShot`` for constrained decoding, offering ``operators``."""
    props: dict[str, Any] = {
        "operator": {"type": "string", "enum": list(operators)},
        "change": {"type": "string"},
        "output_file": {"type": "string"},
        "compare": {"type": "string", "enum": list(COMPARE_HELP)},
        "data": {"type": "string"},
        "instruction": {"type": "string"},
        "solve_sh": {"type": "string"},
    }
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


_HEADER = re.compile(r"^\W*(operator|change|output_file|compare)\W*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_BLOCK = re.compile(r"^```[ \t]*([\w.+-]*)[ \t]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
_KINDS = {"data": "data", "text": "data", "instruction": "instruction", "md": "instruction", "markdown": "instruction",
          "bash": "solve_sh", "sh": "solve_sh", "shell": "solve_sh"}  # fmt: skip


def parse_sections(text: str) -> OneShot | None:
    """A sections reply (``oneshot_format = "sections"``): the header lines, then the ``data``, ``instruction``
    and ``bash`` blocks (by their tag; the last block is the script when none is tagged so, and untagged ones
    before it are the instruction, then the data; of two blocks of one kind the first counts). An
    operator or comparison that is none of the offered ones is the default; no script: None."""
    fields: dict[str, Any] = {}
    for m in _HEADER.finditer(text.split("```", 1)[0]):
        fields.setdefault(m.group(1).lower(), m.group(2).strip("`\"' "))
    if fields.get("operator") not in get_args(Operator):
        fields.pop("operator", None)
    if fields.get("compare") not in get_args(Compare):
        fields.pop("compare", None)
    blocks = [(m.group(1).lower(), m.group(2)) for m in _BLOCK.finditer(text)]
    kinds = [_KINDS.get(tag) for tag, _ in blocks]
    if "solve_sh" not in kinds and blocks:
        kinds[-1] = "solve_sh"
    # untagged blocks from the end: the one before the script is the instruction, the one before that the data
    untagged = iter(k for k in ("instruction", "data") if k not in kinds)
    for (_, body), kind in reversed(list(zip(blocks, kinds, strict=True))):
        key = kind or next(untagged, None)
        if key is not None:
            fields[key] = body.strip("\n")
    if not (fields.get("solve_sh") or "").strip() or not (fields.get("instruction") or "").strip():
        return None
    return OneShot.model_validate(fields)


def propose_oneshot_recorded(
    model: Model,
    backend: SandboxBackend,
    ctx: StagedContext,
    *,
    episode_dir: Path,
    candidate_dir: Path,
    task_id: str,
    config: StagedConfig | None = None,
) -> GenerationResult:
    """The P1 baseline: one reply with every piece, then the same record and novelty steps."""
    config = config or StagedConfig()

    def body(ep: Episode, result: GenerationResult) -> None:
        sections = config.oneshot_format == "sections"
        reply = ep.caller.ask(
            "oneshot",
            "oneshot.j2",
            max_tokens=config.sampling.oneshot_max_tokens,
            schema=None if sections else json_format("task", oneshot_schema(list(ep.operators))),
            sections=sections,
            parent_block=ep.parent_block,
            parent=ctx.parent,
            findings=ctx.findings,
            operators=ep.operators,
            compares=COMPARE_HELP,
        )
        shot = parse_sections(reply) if sections else parse_json(reply, OneShot)
        if not isinstance(shot, OneShot) or not shot.solve_sh.strip():
            result.failed_checks = [IDEA_UNPARSEABLE]
            return
        ep.choose(
            Idea(
                operator=shot.operator,
                change=shot.change or shot.instruction,
                output_file=shot.output_file,
                compare=shot.compare,
            )
        )
        ep.extend_input([ln for ln in clip_data(shot.data).splitlines() if ln.strip()])
        ep.files.instruction = ensure_output_named(shot.instruction.strip(), ep.output)
        ep.files.solve_sh = shot.solve_sh
        finish(ep, result, candidate_dir, check=False)

    return drive_episode(
        body,
        "prompt-recorded",
        model,
        backend,
        ctx,
        episode_dir=episode_dir,
        task_id=task_id,
        config=config,
        exit_reason="answered",
    )
