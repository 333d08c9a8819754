"""One agentic proposer episode: the terminal agent loop in the workshop, with ``check`` and ``try``.

``ProposerAgent`` is the shared ``Agent`` with one step overridden: ``execute`` intercepts a command that is
exactly ``check`` or ``try <cmd>`` (in every action format) and answers it from the harness. Everything else
(budgets, history, ATIF recording) is the agent loop's.

Episode dir::

    trajectory.json            the ATIF trajectory (training data for the proposer role)
    start/starting-draft/      the first draft (template or example copy)
    checks/<nn>/...            each check's draft snapshot, report and feedback (see ``tools``)
    final/<task-id>/           the draft at the end
    generation.json            the GenerationResult
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from jinja2 import ChoiceLoader, DictLoader, Environment, FileSystemLoader, StrictUndefined

from autoenvscaling.agent.actions import Action
from autoenvscaling.agent.config import AgentConfig
from autoenvscaling.agent.errors import FormatError, Submitted
from autoenvscaling.agent.loop import TEMPLATES_DIR, Agent
from autoenvscaling.agent.trajectory import TrajectoryRecorder
from autoenvscaling.errors import AutoEnvError
from autoenvscaling.llm.base import Model, ModelResponse
from autoenvscaling.roles.proposer import prompts
from autoenvscaling.roles.proposer.config import ProposerConfig
from autoenvscaling.roles.proposer.domain import DomainContext
from autoenvscaling.roles.proposer.records import GenerationResult
from autoenvscaling.roles.proposer.tools import DraftTools, harness_tool
from autoenvscaling.roles.proposer.workshop import (
    START_NAME,
    Workshop,
    prepare_start,
    safe_copy_tree,
    stage_workshop,
)
from autoenvscaling.sandbox.base import EngineUnavailableError, ExecResult, Sandbox, SandboxBackend
from autoenvscaling.tasks.model import task_content_hash
from autoenvscaling.validate.model_probes import ModelProbes
from autoenvscaling.validate.validator import ValidationConfig

Chosen = Literal["current", "best", "none"]


class ProposerAgent(Agent):
    """The agent loop plus the harness tools. Running out of checks ends the episode like a submission."""

    def __init__(
        self,
        model: Model,
        sandbox: Sandbox,
        config: AgentConfig,
        recorder: TrajectoryRecorder,
        *,
        tools: DraftTools,
        try_timeout_sec: float = 30.0,
        require_check: bool = True,
    ) -> None:
        super().__init__(model, sandbox, config, recorder)
        # Proposer templates first (system prompt, formats), then the agent's (observation, errors...).
        self.templates = Environment(
            loader=ChoiceLoader(
                [
                    DictLoader(self.config.templates),
                    FileSystemLoader(prompts.PROPOSER_TEMPLATES),
                    FileSystemLoader(TEMPLATES_DIR),
                ]
            ),
            undefined=StrictUndefined,
            autoescape=False,
            auto_reload=False,
        )
        self.tools = tools
        self.try_timeout_sec = try_timeout_sec
        self.require_check = require_check and tools.config.max_checks > 0
        self.stop_reason: str | None = None

    def parse(self, response: ModelResponse) -> Action:
        action = self.action_format.parse(response)  # pure: parsed again by the loop's own rules below
        if action.kind == "submit" and self.require_check and not self.tools.checks:
            ids = (action.tool_call_id,) if action.tool_call_id else ()
            raise FormatError(
                "Submission refused: run `check` first. Your draft is only handed in after the harness has "
                "validated it at least once.",
                ids,
            )
        return super().parse(response)

    def check_limits(self) -> None:
        if self.stop_reason is not None:
            raise Submitted(self.stop_reason)
        super().check_limits()

    def execute(self, action: Action) -> ExecResult:
        tool = harness_tool(action.command)
        if tool is None:
            return super().execute(action)
        name, argument = tool
        self.commands_run += 1  # a check or try is a command: a submit after it is not premature
        started = time.perf_counter()
        if name == "try":
            out = self.tools.try_command(argument)
        elif self.tools.checks_left > 0:
            out = self.tools.check()
        else:
            out = self.tools.no_checks_left()
            self.stop_reason = "max_checks"
        return ExecResult(stdout=out.text, exit_code=0 if out.ok else 1, duration_sec=time.perf_counter() - started)

    def render(self, name: str, **variables: Any) -> str:
        variables.setdefault("max_checks", self.tools.config.max_checks)
        variables.setdefault("try_timeout_sec", self.try_timeout_sec)
        return super().render(name, **variables)


def _choose(tools: DraftTools, final_root: Path, submitted: bool) -> tuple[Path | None, Chosen]:
    """The draft to hand in: the current one if it passed its check or was never checked (on submit), else
    the last draft that passed; a budget-ended episode prefers the last passing draft to a half edit."""
    final = tools.snapshot(final_root)
    best = tools.best
    if not final.ok:
        return (best.draft_dir, "best") if best else (None, "none")
    digest = task_content_hash(final.path)
    same = [c for c in tools.checks if c.content_hash == digest]
    if same:
        if same[-1].passed or best is None:
            return final.path, "current"
        return best.draft_dir, "best"
    if submitted or best is None:
        return final.path, "current"
    return best.draft_dir, "best"


def _workshop_inputs(
    tmp: Path,
    episode_dir: Path,
    domain: DomainContext,
    config: ProposerConfig,
    *,
    task_id: str,
    index: int,
    digest_md: str,
    trial_dirs: list[Path],
) -> tuple[Path, Path, str]:
    """Stage the /workshop tree; returns (staging dir, start draft, task prompt)."""
    start = episode_dir / "start" / START_NAME
    shutil.rmtree(start.parent, ignore_errors=True)
    start_desc = prepare_start(start, domain, config.start_from, index)
    names = dict(domain=domain.name, description=domain.description, has_trajectories=bool(trial_dirs))
    readme = prompts.render(
        "workshop_readme.md.j2",
        **names,
        start=start_desc,
        examples=[e.name for e in domain.examples],
        images=domain.images,
        max_checks=config.max_checks,
        try_timeout_sec=config.try_timeout_sec,
    )
    staging = tmp / "workshop"
    stage_workshop(staging, domain=domain, readme=readme, digest_md=digest_md, trial_dirs=trial_dirs, start_dir=start)
    return staging, start, prompts.render("task.j2", **names, start=start_desc)


def run_episode(
    model: Model,
    backend: SandboxBackend,
    domain: DomainContext,
    *,
    episode_dir: Path,
    candidate_dir: Path,
    task_id: str,
    config: ProposerConfig | None = None,
    digest_md: str = "",
    trial_dirs: list[Path] | None = None,
    validation: ValidationConfig | None = None,
    index: int = 0,
    run_id: str | None = None,
    model_probes: ModelProbes | None = None,
) -> GenerationResult:
    """Run one episode; the chosen draft is copied to ``candidate_dir`` (a Harbor task dir)."""
    config = config or ProposerConfig()
    trial_dirs = list(trial_dirs or [])[: config.workshop.max_trajectories]
    episode_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    result = GenerationResult(id=task_id, mode="agentic", episode_dir=str(episode_dir))
    recorder = TrajectoryRecorder(episode_dir / "trajectory.json")
    workshop = Workshop(backend, domain.image, config.workshop, name_hint=f"{task_id}__workshop", run_id=run_id)
    try:
        with tempfile.TemporaryDirectory(prefix="autoenv-workshop-") as tmp:
            staging, start, task_prompt = _workshop_inputs(
                Path(tmp),
                episode_dir,
                domain,
                config,
                task_id=task_id,
                index=index,
                digest_md=digest_md,
                trial_dirs=trial_dirs,
            )
            workshop.start(staging)
        tools = DraftTools(
            workshop,
            backend,
            episode_dir,
            task_id,
            config=config.tools_config(),
            validation=validation,
            references=[start, *domain.examples],
            images=domain.images,
            run_id=run_id,
            model_probes=model_probes,
        )
        agent = ProposerAgent(
            model,
            workshop.sandbox,
            config.agent_config(),
            recorder,
            tools=tools,
            try_timeout_sec=config.try_timeout_sec,
            require_check=config.require_check,
        )
        try:
            outcome = agent.run(task_prompt)
            result.exit_reason = agent.stop_reason or outcome.exit_reason
            result.usage = outcome.usage
        except EngineUnavailableError:
            raise
        except AutoEnvError as e:  # the model endpoint or the workshop failed: keep what was built so far
            result.exit_reason, result.error = "error", f"{type(e).__name__}: {e}"
            result.usage = agent.usage
        result.turns = agent.turns
        result.checks_used, result.tries_used = len(tools.checks), tools.tries
        result.last_check_passed = tools.checks[-1].passed if tools.checks else None
        chosen, result.chosen_draft = _choose(tools, episode_dir / "final", result.exit_reason == "submitted")
        if chosen is not None:
            shutil.rmtree(candidate_dir, ignore_errors=True)
            safe_copy_tree(chosen, candidate_dir, max_bytes=config.workshop.max_draft_bytes)
            result.candidate_dir = str(candidate_dir)
    except EngineUnavailableError:
        raise
    except AutoEnvError as e:  # the workshop never started
        result.exit_reason, result.error = "error", f"{type(e).__name__}: {e}"
    finally:
        workshop.stop()
        result.wall_sec = time.perf_counter() - started
        if recorder.agent is not None:
            recorder.finish(**result.model_dump(mode="json", include={"exit_reason", "checks_used", "chosen_draft"}))
        (episode_dir / "generation.json").write_text(result.model_dump_json(indent=2), encoding="utf-8")
    return result
