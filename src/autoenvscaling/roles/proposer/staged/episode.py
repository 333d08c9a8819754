"""A staged episode: the harness drives the order, the model writes one piece per call, real runs decide.

Stages (every model call a short fresh prompt and an ATIF step; every harness run a user step)::

    idea         constrained JSON: operator on the parent, one-sentence task, output path, comparison
    data         lines added to the main input file, when the idea asks for them
    instruction  plain text
    solution     a bash block; the harness runs it in the draft's image (observe) ...
    decide       ... and the model judges the output (ok | fix_solution | fix_data | fix_instruction)
    record       the solution runs twice in fresh containers; guards; the outputs become the tests' answers
    novelty      the parent's solution must fail the child (cross-oracle); not similar to a reference
    check        the validator (lint, build, oracle, nop, leakage) on the finished task dir
    submit       the task dir goes to the candidate dir

The one-shot recorded baseline (``oneshot.propose_oneshot_recorded``) asks for idea, data, instruction and solution in
one JSON reply and then runs the same record and novelty steps: no observe, no fix.

Episode dir: ``trajectory.json``, ``staged.json`` (the decisions and what the harness saw), ``work/``
(drafts), ``check/`` (the validator's trials), ``generation.json``.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from autoenvscaling import __version__
from autoenvscaling.agent.trajectory import AgentInfo, TrajectoryRecorder
from autoenvscaling.errors import AutoEnvError
from autoenvscaling.llm.base import Model
from autoenvscaling.roles.proposer import prompts
from autoenvscaling.roles.proposer.domain import DomainContext
from autoenvscaling.roles.proposer.novelty import DUPLICATE_CHECK, check_novelty
from autoenvscaling.roles.proposer.records import GenerationResult, Mode
from autoenvscaling.roles.proposer.staged import record as rec
from autoenvscaling.roles.proposer.staged.calls import BudgetSpent, StageCaller, fenced_or_plain, parse_json
from autoenvscaling.roles.proposer.staged.config import StagedConfig
from autoenvscaling.roles.proposer.staged.parents import Parent
from autoenvscaling.roles.proposer.staged.render import write_draft
from autoenvscaling.roles.proposer.staged.spec import (
    COMPARE_HELP,
    DECISION_SCHEMA,
    OPERATOR_HELP,
    Compare,
    DraftFiles,
    Idea,
    idea_schema,
    json_format,
    safe_output_path,
)
from autoenvscaling.roles.proposer.staged.text import (
    answer_in_instruction,
    clip_data,
    ensure_output_named,
    looks_like_prose,
    slug,
    with_format_hint,
)
from autoenvscaling.sandbox.base import BuildError, SandboxBackend
from autoenvscaling.validate.validator import TaskValidator, ValidationConfig

STAGED_AGENT = "autoenv-proposer-staged"
IDEA_UNPARSEABLE = "idea-unparseable"
ANSWER_IN_INSTRUCTION = "answer-in-instruction"
NO_SOLUTION = "no-working-solution"
NOT_NEW = DUPLICATE_CHECK
DEFAULT_OUTPUT = "/app/result.txt"


class Decision(BaseModel):
    decision: Literal["ok", "fix_solution", "fix_data", "fix_instruction"]
    reason: str = ""


class StagedLog(BaseModel):
    """``staged.json``: what the episode decided and saw, stage by stage."""

    parent: str
    idea: Idea | None = None
    output: str | None = None
    observations: list[str] = Field(default_factory=list)
    decisions: list[str] = Field(default_factory=list)
    solution_attempts: int = 0
    repairs: int = 0
    recorded: bool = False
    guard: str | None = None
    guard_detail: str = ""
    cross_oracle_passed: bool | None = None
    check_passed: bool | None = None
    check_failed: list[str] = Field(default_factory=list)


class StagedContext(BaseModel):
    """Everything an episode reads besides the model and the backend."""

    model_config = {"arbitrary_types_allowed": True}

    domain: DomainContext
    parent: Parent
    findings: list[str] = Field(default_factory=list)
    references: list[Path] = Field(default_factory=list)  # novelty: tasks the child must not copy
    novelty_threshold: float = 0.8
    run_id: str | None = None
    validation: ValidationConfig = Field(default_factory=ValidationConfig)


class Episode:
    """State shared by the stages of one episode."""

    def __init__(
        self,
        model: Model,
        backend: SandboxBackend,
        ctx: StagedContext,
        config: StagedConfig,
        episode_dir: Path,
        task_id: str,
        mode: Mode,
    ) -> None:
        self.ctx = ctx
        self.config = config
        self.episode_dir = episode_dir
        self.task_id = task_id
        self.runner = rec.DraftRunner(backend, run_id=ctx.run_id, timeout_sec=config.run_timeout_sec)
        self.backend = backend
        info = AgentInfo(name=STAGED_AGENT, version=__version__, model_name=model.name, extra={"mode": mode})
        self.recorder = TrajectoryRecorder(episode_dir / "trajectory.json", agent=info)
        system = prompts.render("staged/system.j2", domain=ctx.domain.name, description=ctx.domain.description)
        self.caller = StageCaller(
            model,
            self.recorder,
            system,
            max_calls=config.max_calls,
            max_wall_sec=config.max_wall_sec,
            sampling=config.sampling,
        )
        self.log = StagedLog(parent=ctx.parent.name)
        self.files = DraftFiles()
        self.output = DEFAULT_OUTPUT
        self.compare: Compare = "exact"
        self.parent_block = prompts.render("staged/parent.j2", parent=ctx.parent)
        self.draft_no = 0
        self.last_run: rec.SolutionRun | None = None

    # -- helpers ------------------------------------------------------------------------------------------
    @property
    def inputs(self) -> dict[str, str]:
        """Container path -> full text of every input file, as the child has them."""
        changed = {c: self.files.data[r] for c, r in self.ctx.parent.sources.items() if r in self.files.data}
        return {**self.ctx.parent.data, **changed}

    def input_heads(self) -> dict[str, str]:
        heads = dict(self.ctx.parent.inputs)
        for path, text in self.inputs.items():
            if path in heads and text != self.ctx.parent.data.get(path):
                lines = text.splitlines()
                more = f"\n... ({len(lines)} lines in all)" if len(lines) > 12 else ""
                heads[path] = "\n".join(lines[:12]) + more
        return heads

    def extend_input(self, lines: list[str]) -> None:
        """Append ``lines`` to the main input file (a small model's "new file" is often one line long)."""
        main = self.ctx.parent.main_input
        if main is None or not lines:
            return
        base = self.ctx.parent.data[main].rstrip("\n")
        self.files.data = {self.ctx.parent.sources[main]: base + "\n" + "\n".join(lines)}

    def write(self, dest: Path, **kw: Any) -> Path:
        idea = self.log.idea
        return write_draft(
            dest,
            parent=self.ctx.parent.path,
            files=self.files,
            name=slug(idea.change if idea else self.task_id),
            description=(idea.change if idea else "")[:200],
            category=self.ctx.domain.name,
            outputs=[self.output],
            lineage={"parent": self.ctx.parent.name, "operator": idea.operator if idea else ""},
            **kw,
        )

    def draft(self) -> Path:
        self.draft_no += 1
        return self.write(self.episode_dir / "work" / f"draft-{self.draft_no:02d}" / self.task_id)

    # -- model stages ---------------------------------------------------------------------------------------
    def ask_idea(self) -> bool:
        findings = self.ctx.findings
        for _ in range(2):  # one retry: a constrained reply rarely fails, a cut-off one can
            reply = self.caller.ask(
                "idea",
                "idea.j2",
                max_tokens=self.config.sampling.idea_max_tokens,
                schema=json_format("idea", idea_schema(len(findings))),
                parent_block=self.parent_block,
                findings=findings,
                operators=OPERATOR_HELP,
                compares=COMPARE_HELP,
            )
            idea = parse_json(reply, Idea)
            if isinstance(idea, Idea):
                self.log.idea = idea
                self.output = safe_output_path(idea.output_file) or DEFAULT_OUTPUT
                self.compare = idea.compare
                self.log.output = self.output
                return True
        return False

    def wants_data(self) -> bool:
        idea = self.log.idea
        return (
            idea is not None
            and self.ctx.parent.main_input is not None
            and (idea.new_data or idea.operator == "edge_case")
        )

    def ask_data(self) -> None:
        name = self.ctx.parent.main_input
        assert name is not None and self.log.idea is not None
        lo, hi = self.config.data_lines
        reply = self.caller.ask(
            "data",
            "data.j2",
            max_tokens=self.config.sampling.data_max_tokens,
            parent_block=self.parent_block,
            idea=self.log.idea,
            file_name=name,
            min_lines=lo,
            max_lines=hi,
        )
        self.extend_input([ln for ln in clip_data(fenced_or_plain(reply)).splitlines() if ln.strip()])

    def ask_instruction(self) -> None:
        """Up to two samples; a reply that is not prose falls back to the idea's sentence plus the paths."""
        assert self.log.idea is not None
        inputs = list(self.ctx.parent.inputs)
        self.sample_instruction(
            "instruction.j2", parent_block=self.parent_block, idea=self.log.idea, inputs=inputs or ["(see the parent)"]
        )

    def sample_instruction(self, template: str, **variables: Any) -> None:
        """Up to two samples; a reply that is not prose falls back to the idea's sentence plus the paths."""
        assert self.log.idea is not None
        for _ in range(2):
            reply = self.caller.ask(
                "instruction", template, max_tokens=self.config.sampling.instruction_max_tokens, **variables
            )
            text = fenced_or_plain(reply).strip()
            if looks_like_prose(text):
                self.files.instruction = ensure_output_named(text, self.output)
                return
        inputs = list(self.ctx.parent.inputs)
        source = f"The input is {', '.join(inputs)}. " if inputs else ""
        self.files.instruction = f"{self.log.idea.change}\n{source}Write the result to {self.output}."
        self.caller.note("instruction", "the instruction is the idea's sentence (no usable reply)")

    def ask_solution(self, previous: str = "", problem: str = "") -> None:
        reply = self.caller.ask(
            "solution",
            "solution.j2",
            max_tokens=self.config.sampling.solution_max_tokens,
            instruction=self.files.instruction,
            inputs=self.input_heads(),
            dockerfile=self.ctx.parent.dockerfile,
            parent_solve_sh=self.ctx.parent.solve_sh,
            previous=previous,
            problem=problem,
            output_file=self.output,
        )
        self.files.solve_sh = fenced_or_plain(reply)

    def ask_decision(self, observation: str) -> Decision:
        reply = self.caller.ask(
            "decide",
            "decide.j2",
            max_tokens=self.config.sampling.decision_max_tokens,
            schema=json_format("decision", DECISION_SCHEMA),
            instruction=self.files.instruction,
            solve_sh=self.files.solve_sh,
            observation=observation,
        )
        decision = parse_json(reply, Decision)
        return decision if isinstance(decision, Decision) else Decision(decision="ok", reason="(unparseable: ok)")

    # -- harness stages --------------------------------------------------------------------------------------
    def observe(self) -> tuple[str, tuple[str, str] | None]:
        draft = self.draft()
        try:
            run = self.runner.run(draft, self.files.solve_sh, [self.output])
        except BuildError as e:
            text = f"the draft's image did not build: {e}"
            self.caller.note("observe", text)
            self.log.observations.append(text)
            return text, (rec.DRAFT_BUILD, text)
        self.last_run = run
        text = rec.describe_run(run)
        self.caller.note("observe", text)
        self.log.observations.append(text)
        return text, rec.mechanical_problem(run, self.inputs)

    def retry(self, ask: Callable[..., None], attempt: int, problem: str) -> None:
        """Alternate a repair (error shown) with a fresh sample: small models often repeat a broken script."""
        if attempt % 2 == 0:
            ask(self.files.solve_sh, problem)
        else:
            ask()

    def solve_loop(self) -> bool:
        """Solutions until one runs cleanly and the model calls its output ok.

        A small model's self-critique flip-flops: when the repairs run out without an ``ok``, the first clean
        solution is kept (its reading of the instruction is as good as any later one, and the blind
        reproduction judges it anyway).
        """
        self.ask_solution()
        first_clean: DraftFiles | None = None
        attempts = 1
        while True:
            self.log.solution_attempts = attempts
            observation, problem = self.observe()
            if problem is None:
                if first_clean is None:
                    first_clean = self.files.model_copy(deep=True)
                decision = self.ask_decision(observation)
                self.log.decisions.append(f"{decision.decision}: {decision.reason}"[:300])
                if decision.decision == "ok":
                    return True
                if self.log.repairs >= self.config.max_repairs or attempts >= self.config.solution_samples:
                    self.files = first_clean
                    return True
                self.log.repairs += 1
                if decision.decision == "fix_data" and self.wants_data():
                    self.ask_data()
                elif decision.decision == "fix_instruction":
                    self.ask_instruction()
                else:
                    attempts += 1
                    self.ask_solution(self.files.solve_sh, decision.reason or "the output is not what was asked")
                continue
            self.log.guard, self.log.guard_detail = problem
            if attempts >= self.config.solution_samples:
                if first_clean is not None:
                    self.files = first_clean
                    return True
                return False
            attempts += 1
            self.retry(self.ask_solution, attempts, problem[1])

    def ask_solution_first(self, previous: str = "", problem: str = "") -> None:
        assert self.log.idea is not None
        reply = self.caller.ask(
            "solution",
            "solution_first.j2",
            max_tokens=self.config.sampling.solution_max_tokens,
            parent_block=self.parent_block,
            idea=self.log.idea,
            inputs=self.input_heads(),
            previous=previous,
            problem=problem,
            output_file=self.output,
        )
        self.files.solve_sh = fenced_or_plain(reply)

    def ask_describe(self) -> None:
        """The instruction, written from the script and the output it really produced."""
        assert self.log.idea is not None and self.last_run is not None
        text = self.last_run.outputs.get(self.output) or ""
        lines = text.splitlines()
        head = "\n".join(ln[:160] for ln in lines[:8]) + (
            f"\n... ({len(lines)} lines in all)" if len(lines) > 8 else ""
        )
        self.sample_instruction(
            "describe.j2",
            idea=self.log.idea,
            inputs=self.input_heads(),
            solve_sh=self.files.solve_sh,
            output_file=self.output,
            output_head=head,
        )

    def solution_first_loop(self) -> bool:
        """Code first, words after: a script that runs cleanly, then the instruction that describes what it
        wrote (a coder model explains code it sees more reliably than it writes code to match vague words)."""
        self.ask_solution_first()
        attempts = 1
        while True:
            self.log.solution_attempts = attempts
            observation, problem = self.observe()
            if problem is None:
                break
            self.log.guard, self.log.guard_detail = problem
            if attempts >= self.config.solution_samples:
                return False
            attempts += 1
            self.retry(self.ask_solution_first, attempts, problem[1])
        self.log.guard, self.log.guard_detail = None, ""
        self.ask_describe()
        decision = self.ask_decision(observation)
        self.log.decisions.append(f"{decision.decision}: {decision.reason}"[:300])
        if decision.decision == "fix_instruction" and self.config.max_repairs > 0:
            self.log.repairs += 1
            self.ask_describe()
        return True

    def finish(self, result: GenerationResult, candidate_dir: Path, *, check: bool) -> None:
        """Record, novelty, check, submit: the steps both staged arms share."""
        self.log.guard, self.log.guard_detail = None, ""
        draft = self.draft()
        recording, expectations = rec.record_expectations(
            self.runner, draft, self.files.solve_sh, {self.output: self.compare}, self.inputs
        )
        if not recording.ok:
            self.log.guard, self.log.guard_detail = recording.check, recording.detail
            self.caller.note("record", f"not recorded: {recording.check}: {recording.detail}")
            result.failed_checks = [recording.check or "record"]
            return
        leak = answer_in_instruction(self.files.instruction, recording.outputs)
        if leak:
            self.log.guard, self.log.guard_detail = ANSWER_IN_INSTRUCTION, leak
            self.caller.note("record", f"not recorded: {ANSWER_IN_INSTRUCTION}: {leak}")
            result.failed_checks = [ANSWER_IN_INSTRUCTION]
            return
        self.log.recorded = True
        if self.config.format_hint:
            self.files.instruction = with_format_hint(
                self.files.instruction, self.output, recording.outputs, self.compare
            )
        final = self.write(
            self.episode_dir / "final" / self.task_id, expectations=expectations, expected=recording.outputs
        )
        self.caller.note("record", "recorded: " + ", ".join(f"{e.path} ({e.compare})" for e in expectations))
        if self.config.cross_oracle:
            same = rec.cross_oracle(self.runner, final, self.ctx.parent.solve_sh, expectations, recording.outputs)
            self.log.cross_oracle_passed = not same
            if same:
                self.caller.note("novelty", "the parent's solution already passes this task: not new")
                result.failed_checks = [rec.CROSS_ORACLE]
                return
        novelty = check_novelty(final, self.ctx.references, self.ctx.novelty_threshold)
        if not novelty.is_new:
            self.caller.note("novelty", f"too similar to {novelty.duplicate_of}")
            result.failed_checks = [NOT_NEW]
            return
        if check:
            validator = TaskValidator(
                self.backend,
                self.runner.builder,
                self.ctx.validation.model_copy(update={"repeats": 1, "network": False}),
                self.episode_dir / "check" / "trials",
                run_id=self.ctx.run_id,
            )
            report = validator.validate(final)
            self.log.check_passed = report.verdict.value == "valid"
            self.log.check_failed = list(report.failed_checks) or ([report.error] if report.error else [])
            self.caller.note("check", f"check: {report.verdict.value} {' '.join(report.failed_checks)}".strip())
            if report.verdict.value == "error":
                raise AutoEnvError(f"check could not run: {report.error}")
            if not self.log.check_passed:
                result.failed_checks = list(report.failed_checks)
                return
        shutil.rmtree(candidate_dir, ignore_errors=True)
        shutil.copytree(final, candidate_dir)
        result.candidate_dir, result.chosen_draft = str(candidate_dir), "current"
        result.last_check_passed = self.log.check_passed
        result.exit_reason = "submitted"

    def close(self, result: GenerationResult, started: float) -> GenerationResult:
        result.turns = self.caller.calls
        result.usage = self.caller.usage
        result.tries_used = self.log.solution_attempts
        result.checks_used = int(self.log.check_passed is not None)
        result.wall_sec = time.perf_counter() - started
        (self.episode_dir / "staged.json").write_text(self.log.model_dump_json(indent=2), encoding="utf-8")
        self.recorder.finish(
            exit_reason=result.exit_reason,
            failed_checks=result.failed_checks,
            parent=self.ctx.parent.name,
            wall_sec=round(result.wall_sec, 3),
        )
        (self.episode_dir / "generation.json").write_text(result.model_dump_json(indent=2), encoding="utf-8")
        return result


def drive_episode(
    body: Callable[[Episode, GenerationResult], None],
    mode: Mode,
    model: Model,
    backend: SandboxBackend,
    ctx: StagedContext,
    *,
    episode_dir: Path,
    task_id: str,
    config: StagedConfig,
    exit_reason: str,
) -> GenerationResult:
    """Set up an episode, run ``body``, and close it: a spent budget is an exit reason, an endpoint or engine
    failure an error (never a rejection)."""
    shutil.rmtree(episode_dir, ignore_errors=True)
    episode_dir.mkdir(parents=True)
    started = time.perf_counter()
    result = GenerationResult(id=task_id, mode=mode, episode_dir=str(episode_dir), exit_reason=exit_reason)
    ep = Episode(model, backend, ctx, config, episode_dir, task_id, mode)
    try:
        body(ep, result)
    except BudgetSpent as e:
        result.exit_reason, result.failed_checks = e.reason, [e.reason]
    except AutoEnvError as e:
        result.exit_reason, result.error = "error", f"{type(e).__name__}: {e}"
    return ep.close(result, started)


def run_staged_episode(
    model: Model,
    backend: SandboxBackend,
    ctx: StagedContext,
    *,
    episode_dir: Path,
    candidate_dir: Path,
    task_id: str,
    config: StagedConfig | None = None,
) -> GenerationResult:
    """One staged episode; a task dir lands in ``candidate_dir`` only when every stage passed."""
    config = config or StagedConfig()

    def body(ep: Episode, result: GenerationResult) -> None:
        if not ep.ask_idea():
            result.failed_checks = [IDEA_UNPARSEABLE]
            return
        if ep.wants_data():
            ep.ask_data()
        if config.order == "solution_first":
            solved = ep.solution_first_loop()
        else:
            ep.ask_instruction()
            solved = ep.solve_loop()
        if not solved:
            result.failed_checks = [ep.log.guard or NO_SOLUTION]
            return
        ep.finish(result, candidate_dir, check=config.check)

    return drive_episode(
        body,
        "staged",
        model,
        backend,
        ctx,
        episode_dir=episode_dir,
        task_id=task_id,
        config=config,
        exit_reason="rejected",
    )
