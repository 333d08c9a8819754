"""The prompt-only baseline: ONE model call returns every file of one task as JSON; no tools, no retries.

It gets what the agentic proposer gets (domain guide, example tasks, solver digest), inlined as text instead
of laid out as files, so the comparison isolates the ability to act, observe and fix. The call is recorded as
an ATIF trajectory (system, user, one agent step) like an episode.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import tomli_w
from pydantic import BaseModel, Field, ValidationError

from autoenvscaling import __version__
from autoenvscaling.agent.actions import json_objects
from autoenvscaling.agent.trajectory import AgentInfo, TrajectoryRecorder, metrics_from_response
from autoenvscaling.errors import AutoEnvError
from autoenvscaling.llm.base import Message, Model
from autoenvscaling.roles.proposer import prompts
from autoenvscaling.roles.proposer.domain import DomainContext
from autoenvscaling.roles.proposer.outputs import image_paths, task_outputs
from autoenvscaling.roles.proposer.records import GenerationResult
from autoenvscaling.tasks.model import iter_task_files
from autoenvscaling.tasks.names import slug

AGENT_NAME = "autoenv-proposer-prompt"
UNPARSEABLE = "proposal-unparseable"
_FILE_LINES = 40
_FILE_CHARS = 2500
_FILE_ORDER = ("instruction.md", "task.toml", "environment/Dockerfile")


class ProposedFile(BaseModel):
    path: str
    content: str


class PromptProposal(BaseModel):
    name: str
    description: str = ""
    difficulty: Literal["easy", "medium", "hard"] = "medium"
    instruction: str
    dockerfile: str
    environment_files: list[ProposedFile] = Field(default_factory=list)
    solve_sh: str
    test_sh: str
    test_files: list[ProposedFile] = Field(default_factory=list)
    outputs: list[str] = Field(default_factory=list)  # the files the solution writes that the tests read


_FILES_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
        "additionalProperties": False,
    },
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "difficulty": {"type": "string", "enum": ["easy", "medium", "hard"]},
        "instruction": {"type": "string"},
        "dockerfile": {"type": "string"},
        "environment_files": _FILES_SCHEMA,
        "solve_sh": {"type": "string"},
        "test_sh": {"type": "string"},
        "test_files": _FILES_SCHEMA,
        "outputs": {"type": "array", "items": {"type": "string"}},
    },
    "required": list(PromptProposal.model_fields),  # strict mode: every field
    "additionalProperties": False,
}
RESPONSE_FORMAT: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {"name": "task", "strict": True, "schema": SCHEMA},
}


def _file_text(path: Path) -> str | None:
    data = path.read_bytes()
    if b"\0" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = text.splitlines()
    kept = "\n".join(lines[:_FILE_LINES])[:_FILE_CHARS]
    if len(kept) < len(text.rstrip("\n")):
        kept += f"\n[... truncated: {len(lines)} lines, {len(text)} characters in all]"
    return kept


def _order(rel: str) -> tuple[int, str]:
    return (_FILE_ORDER.index(rel) if rel in _FILE_ORDER else len(_FILE_ORDER), rel)


def inline_examples(examples: list[Path], max_chars: int = 16000) -> str:
    """Example tasks as markdown, every text file shown (long ones cut), within ``max_chars``."""
    parts: list[str] = []
    used = 0
    for example in examples:
        files = sorted(iter_task_files(example), key=lambda p: _order(p.relative_to(example).as_posix()))
        blocks = [f"## Example: {example.name}"]
        for f in files:
            text = _file_text(f)
            rel = f.relative_to(example).as_posix()
            blocks.append(f"### {rel}\n(binary file)" if text is None else f"### {rel}\n```\n{text}\n```")
        block = "\n\n".join(blocks)
        if parts and used + len(block) > max_chars:
            parts.append(f"({len(examples) - len(parts)} more examples omitted for length)")
            break
        parts.append(block)
        used += len(block)
    return "\n\n".join(parts) if parts else "(no examples)"


def _safe_rel(path: str, prefix: str) -> str | None:
    """A relative posix path inside the task's ``prefix`` dir, or None if it would escape it."""
    p = PurePosixPath(path.strip().removeprefix("./"))
    if p.parts[:1] == (prefix,):
        p = PurePosixPath(*p.parts[1:]) if len(p.parts) > 1 else PurePosixPath()
    if p.is_absolute() or not p.parts or ".." in p.parts:
        return None
    return p.as_posix()


def proposal_outputs(proposal: PromptProposal) -> tuple[list[str], list[str]]:
    """The task's artifacts: the outputs the proposal lists, plus those its tests and solution show (outputs.py)."""
    tests = [proposal.test_sh, *(f.content for f in proposal.test_files)]
    outputs, notes = task_outputs(proposal.outputs, tests, [proposal.solve_sh], image_paths(proposal.dockerfile))
    if not outputs:
        notes.append("no outputs listed or found in the tests: they will see only what the image holds")
    return outputs, notes


def write_proposal(proposal: PromptProposal, dest: Path, domain: str) -> list[str]:
    """Write ``proposal`` as a Harbor task dir; returns notes on what was left out (unsafe paths or outputs)."""
    outputs, notes = proposal_outputs(proposal)
    config = {
        "schema_version": "1.4",
        # The files the tests grade: they run in a fresh container of the image holding only these.
        "artifacts": outputs,
        "task": {
            "name": f"autoenv/{slug(proposal.name, lower=True, keep='', max_len=50)}",
            "description": proposal.description,
        },
        "metadata": {"difficulty": proposal.difficulty, "category": domain, "tags": []},
        "verifier": {"timeout_sec": 120, "environment_mode": "separate"},
        "agent": {"timeout_sec": 600},
        "environment": {"build_timeout_sec": 600, "cpus": 1, "memory_mb": 1024},
    }
    files: dict[str, str] = {
        "task.toml": tomli_w.dumps(config),
        "instruction.md": proposal.instruction,
        "environment/Dockerfile": proposal.dockerfile,
        "solution/solve.sh": proposal.solve_sh,
        "tests/test.sh": proposal.test_sh,
    }
    for prefix, extra in (("environment", proposal.environment_files), ("tests", proposal.test_files)):
        for f in extra:
            rel = _safe_rel(f.path, prefix)
            if rel is None or f"{prefix}/{rel}" in files:
                notes.append(f"left out {prefix} file {f.path!r} (unsafe or duplicate path)")
                continue
            files[f"{prefix}/{rel}"] = f.content
    for rel, content in files.items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if content.endswith("\n") else content + "\n", encoding="utf-8")
        if rel.endswith(".sh"):
            os.chmod(path, 0o755)
    return notes


def parse_proposal(content: str) -> PromptProposal | None:
    for obj, _, _ in json_objects(content):
        if "instruction" in obj:
            try:
                return PromptProposal.model_validate(obj)
            except ValidationError:
                return None
    return None


def propose_once(
    model: Model,
    domain: DomainContext,
    *,
    episode_dir: Path,
    candidate_dir: Path,
    task_id: str,
    digest_md: str = "",
    has_trajectories: bool = False,
    examples_chars: int = 16000,
) -> GenerationResult:
    """One call, one candidate (or none, when the reply is not a usable task)."""
    episode_dir.mkdir(parents=True, exist_ok=True)
    result = GenerationResult(id=task_id, mode="prompt", episode_dir=str(episode_dir), exit_reason="answered")
    info = AgentInfo(name=AGENT_NAME, version=__version__, model_name=model.name, extra={"mode": "prompt"})
    recorder = TrajectoryRecorder(episode_dir / "trajectory.json", agent=info)
    system = prompts.render("prompt_only_system.j2")
    user = prompts.render(
        "prompt_only_user.j2",
        domain=domain.name,
        description=domain.description,
        guide=domain.guide or domain.description,
        examples=inline_examples(domain.examples, examples_chars),
        digest=digest_md,
        has_trajectories=has_trajectories,
        images=domain.images,
    )
    recorder.add_step("system", system)
    recorder.add_step("user", user)
    started = time.perf_counter()
    try:
        messages = [Message(role="system", content=system), Message(role="user", content=user)]
        response = model.complete(messages, response_format=RESPONSE_FORMAT)
    except AutoEnvError as e:
        result.exit_reason, result.error = "error", f"{type(e).__name__}: {e}"
    else:
        result.usage, result.turns = response.usage, 1
        recorder.add_step(
            "agent",
            response.content,
            reasoning_content=response.reasoning_content,
            metrics=metrics_from_response(response),
        )
        proposal = parse_proposal(response.content)
        if proposal is None:
            result.failed_checks = [UNPARSEABLE]
        else:
            notes = write_proposal(proposal, candidate_dir, domain.name)
            result.candidate_dir, result.chosen_draft = str(candidate_dir), "current"
            (episode_dir / "notes.json").write_text(json.dumps(notes, indent=2), encoding="utf-8")
    result.wall_sec = time.perf_counter() - started
    recorder.finish(exit_reason=result.exit_reason, wall_sec=round(result.wall_sec, 6), error=result.error)
    (episode_dir / "generation.json").write_text(result.model_dump_json(indent=2), encoding="utf-8")
    return result
