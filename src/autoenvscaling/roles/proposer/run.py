"""A propose run: N independent episodes (or prompt-only calls), then the pipeline's own validation of each.

Run dir::

    OUT/config.resolved.toml
    OUT/digest.md                    the solver digest every episode saw
    OUT/episodes/<id>/               trajectory.json, generation.json, checks/ (agentic)
    OUT/candidates/<id>/             one Harbor task dir per candidate
    OUT/generations.jsonl            one GenerationResult per finished episode, appended as each ends
    OUT/validation/                  a ValidationRun (K=3 + nop + leakage): results.jsonl, summary.json, trials/
    OUT/reproduce/                   the blind solver's attempts: results.jsonl, one trial dir per attempt
    OUT/results.jsonl                one ProposalRecord per generation
    OUT/summary.json                 verdict counts, rejection reasons, tokens, cost, wall

The proposer's own checks never decide the verdict: every candidate is validated afresh. A resumed run
(``resume=True``) keeps every episode, validation and blind reproduction already logged and redoes the others
from scratch (an unfinished episode's dirs are cleared first).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import BaseModel, Field

from autoenvscaling.agent.config import AgentConfig, guarded_solver
from autoenvscaling.execution.executors import Executor, LocalExecutor
from autoenvscaling.execution.rundir import ResultsLog, write_atomic
from autoenvscaling.execution.runner import ItemRunner
from autoenvscaling.llm.base import Model
from autoenvscaling.roles.adversary import model_probes_for
from autoenvscaling.roles.proposer.config import ProposerConfig
from autoenvscaling.roles.proposer.digest import digest_trials, find_trial_dirs, render_digest
from autoenvscaling.roles.proposer.domain import DomainContext
from autoenvscaling.roles.proposer.episode import run_episode
from autoenvscaling.roles.proposer.novelty import DUPLICATE_CHECK, DUPLICATE_IN_RUN, check_novelty
from autoenvscaling.roles.proposer.outcome import proposal_record, summarize
from autoenvscaling.roles.proposer.prompt_only import propose_once
from autoenvscaling.roles.proposer.records import (
    NOT_REPRODUCED,
    GenerationResult,
    Mode,
    ProposalRecord,
)
from autoenvscaling.roles.proposer.reproduce import Reproduction, Reproductions
from autoenvscaling.roles.proposer.staged.flow import run_staged_episode
from autoenvscaling.roles.proposer.staged.oneshot import propose_oneshot_recorded
from autoenvscaling.roles.proposer.staged.parents import (
    Parent,
    idea_of,
    pack_parents,
    parent_candidates,
    parent_schedule,
    second_parent,
)
from autoenvscaling.roles.proposer.staged.state import StagedContext
from autoenvscaling.roles.proposer.staged.text import findings_from_digest
from autoenvscaling.roles.proposer.workshop import START_NAME, TEMPLATE_DIR
from autoenvscaling.roles.solver import SolverAgent
from autoenvscaling.sandbox.base import EngineUnavailableError, SandboxBackend
from autoenvscaling.validate.probes import GENERATED_PROBES
from autoenvscaling.validate.report import ValidationReport, Verdict
from autoenvscaling.validate.run import ValidationRun
from autoenvscaling.validate.validator import ValidationConfig
from autoenvscaling.verify.trial_agents import TrialAgent

OnGenerated = Callable[[GenerationResult], None]
OnValidated = Callable[[ValidationReport], None]
OnReproduced = Callable[[str, Reproduction], None]
STAGED_MODES = ("staged", "prompt-recorded")


class ProposeConfig(BaseModel):
    mode: Mode = "staged"
    n: int = Field(default=1, ge=1, description="independent episodes (or prompt-only calls)")
    first_index: int = Field(default=0, ge=0, description="index of the first episode (parent and digest choice)")
    concurrency: int = Field(default=1, ge=1, description="generations at once")
    validation_concurrency: int = Field(default=1, ge=1)
    from_path: Path | None = Field(default=None, description="solve run dir or trials dir; None: no trajectories")
    proposer: ProposerConfig = Field(default_factory=ProposerConfig)
    validation: ValidationConfig = Field(
        default_factory=lambda: ValidationConfig(repeats=3, probes=GENERATED_PROBES),
        description="quality probes on: generated environments are checked for exploits, leaks and weak tests",
    )
    examples_chars: int = Field(default=16000, ge=0, description="prompt-only: characters of inlined examples")
    parents: list[Path] = Field(default_factory=list, description="staged: pool environments to mutate, newest first")
    parent_history: dict[str, tuple[int, int]] = Field(
        default_factory=dict,
        description="staged: per parent name, children proposed and accepted before this run (earlier rounds or "
        "items); each episode starts from the parent whose children were accepted most often (parents.py)",
    )
    parent_children: dict[str, list[str]] = Field(
        default_factory=dict,
        description="staged: per parent name, what its accepted children asked (``parents.children_made``): an "
        "idea that asks one of them again is sampled again",
    )
    references: list[Path] = Field(
        default_factory=list,
        description="more tasks a candidate must not copy (besides the examples and the parents): earlier accepted "
        "candidates",
    )
    reproduce_attempts: int = Field(
        default=3, ge=0, description="blind solver attempts for recorded expectations (0: accept unreproduced)"
    )
    reproduce_one_shots: int = Field(
        default=2,
        ge=0,
        le=10,
        description="one-shot blind attempts (one script from the instruction, run once) before the agent loop's; "
        "a success is a reproduction (reproduce.py); 0: none",
    )
    reproduce_timeout_sec: float | None = Field(
        default=1800.0,
        gt=0,
        description="agent-phase limit of one blind attempt, in place of the task's own (None: the task's); its "
        "turns (solver.max_turns) bound the attempt, this only guards against a hang",
    )
    solver: AgentConfig = Field(
        default_factory=lambda: guarded_solver(max_turns=10),
        description="the blind solver's agent settings",
    )


class ProposeRun:
    def __init__(
        self,
        out_dir: Path,
        backend: SandboxBackend,
        model: Model,
        domain: DomainContext,
        config: ProposeConfig,
        *,
        resolved_extra: dict[str, Any] | None = None,
        solver_factory: Callable[[], TrialAgent] | None = None,
        executor: Executor | None = None,
        backend_name: str | None = None,
        probe_model: Model | None = None,
    ) -> None:
        """``executor``/``backend_name``: where the candidates' validation runs (see ``ValidationRun``).
        ``probe_model``: the model of the judge and the adversarial solver when ``validation.probes`` asks for them
        (in the proposer's check and the validation); asking for them without one is refused here."""
        self.out_dir = out_dir
        self.executor = executor
        self.backend_name = backend_name
        self.backend = backend
        self.model = model
        self.domain = domain
        self.config = config
        self.validation = domain.validation(config.validation)
        # The adversary is the solver's loop: the blind solver's agent settings (the round's, in the flywheel).
        self.model_probes = model_probes_for(self.validation.probes, probe_model, config.solver)
        self.model_probes.require(self.validation.probes)
        self.resolved_extra = resolved_extra or {}
        self.solver_factory = solver_factory or (lambda: SolverAgent(model, config.solver))
        self.log = ResultsLog(out_dir / "results.jsonl", ProposalRecord)
        self.generations = ResultsLog(out_dir / "generations.jsonl", GenerationResult)
        self._parents: list[Parent] | None = None
        self._schedule: list[int] | None = None

    @property
    def run_id(self) -> str:
        """Container label of this run: the dir name alone ("agentic", "prompt") is not unique across runs."""
        return f"{self.out_dir.name}-{hashlib.sha1(str(self.out_dir.resolve()).encode()).hexdigest()[:8]}"

    @property
    def parents(self) -> list[Parent]:
        if self._parents is None:
            self._parents = parent_candidates(
                self.domain, self.config.parents, self.config.proposer.staged.max_parent_solution_lines
            )
        return self._parents

    @property
    def schedule(self) -> list[int]:
        """The parent (an index into ``parents``) of each of this run's episodes, in order."""
        if self._schedule is None:
            self._schedule = parent_schedule(self.parents, self.config.parent_history, self.config.n)
        return self._schedule

    def references(self, gen: GenerationResult) -> list[Path]:
        """What a candidate must not copy: the examples, and what its episode started from."""
        refs = [*self.domain.examples, *self.config.references]
        if gen.mode in STAGED_MODES:
            refs += [p.path for p in self.parents] + pack_parents(self.domain)
        else:
            start = Path(gen.episode_dir) / "start" / START_NAME
            refs.append(start if start.is_dir() else TEMPLATE_DIR)
        return list(dict.fromkeys(refs))

    def _save_config(self) -> None:
        resolved = {
            "propose": self.config.model_dump(mode="json", exclude_none=True),
            "validation_effective": self.validation.model_dump(mode="json"),
            "domain": {"name": self.domain.name, "image": self.domain.image},
            "examples": [str(e) for e in self.domain.examples],
            "model": self.model.name,
            "backend": self.backend.name,
            **self.resolved_extra,
        }
        (self.out_dir / "config.resolved.toml").write_text(tomli_w.dumps(resolved), encoding="utf-8")

    def _digest(self) -> tuple[str, list[Path], list[str]]:
        if self.config.from_path is None:
            return render_digest([]), [], []
        trials = find_trial_dirs(self.config.from_path)
        digests = digest_trials(trials)
        solved = {d.trial for d in digests if d.solved}
        trials.sort(key=lambda t: (t.name in solved, t.name))  # failures first: they say the most
        digests.sort(key=lambda d: (d.solved, d.trial))
        return render_digest(digests), trials, findings_from_digest(digests)

    def _staged(self, i: int, gid: str, findings: list[str]) -> GenerationResult:
        episode_dir, candidate_dir = self.dirs(gid)
        if not self.parents:
            return GenerationResult(
                id=gid,
                mode=self.config.mode,
                episode_dir=str(episode_dir),
                error=f"domain {self.domain.name}: no parent task to start from (no worked example, examples or pool)",
            )
        chosen = self.schedule[i - self.config.first_index]
        parent = self.parents[chosen]
        ctx = StagedContext(
            domain=self.domain,
            parent=parent,
            second=second_parent(self.parents, chosen),
            findings=findings,
            made=[*self.config.parent_children.get(parent.name, []), *self._made_before(i, parent.name)],
            references=self.references(GenerationResult(id=gid, mode=self.config.mode, episode_dir="")),
            novelty_threshold=self.config.proposer.novelty_threshold,
            run_id=self.run_id,
            validation=self.validation,
            model_probes=self.model_probes,
        )
        episode = run_staged_episode if self.config.mode == "staged" else propose_oneshot_recorded
        result = episode(
            self.model,
            self.backend,
            ctx,
            episode_dir=episode_dir,
            candidate_dir=candidate_dir,
            task_id=gid,
            config=self.config.proposer.staged,
        )
        # The parent it was given, which the schedule counts (the idea may build on the second parent instead:
        # staged.json and the child's lineage name the one used). Counting the one used kept a parent whose
        # episodes always switched to their second parent untried, and so scheduled every other time (v18).
        return result.model_copy(update={"parent": parent.name})

    def _made_before(self, i: int, parent: str) -> list[str]:
        """What this run's episodes before ``i`` that submitted a candidate from ``parent`` asked (their ideas'
        sentences): an idea asking one of them again is sampled again, so a round's episodes from one parent ask
        different things (they are not validated yet, so they are no reason to reject a copy)."""
        made = []
        for j in range(self.config.first_index, i):
            episode_dir, candidate_dir = self.dirs(self.gid(j))
            used, change = idea_of(episode_dir)
            if candidate_dir.is_dir() and used == parent and change and change not in made:
                made.append(change)
        return made

    def gid(self, i: int) -> str:
        """Episode ``i``'s id: its dirs' name, its candidate's task name and its records' key."""
        return f"{self.config.mode}-{i:03d}"

    def dirs(self, gid: str) -> tuple[Path, Path]:
        """An episode's own dir and its candidate's."""
        return self.out_dir / "episodes" / gid, self.out_dir / "candidates" / gid

    def _generate(self, i: int, digest_md: str, trials: list[Path], findings: list[str]) -> GenerationResult:
        gid = self.gid(i)
        episode_dir, candidate_dir = self.dirs(gid)
        try:
            if self.config.mode in STAGED_MODES:
                return self._staged(i, gid, findings)
            if self.config.mode == "prompt":
                return propose_once(
                    self.model,
                    self.domain,
                    episode_dir=episode_dir,
                    candidate_dir=candidate_dir,
                    task_id=gid,
                    digest_md=digest_md,
                    has_trajectories=bool(trials),
                    examples_chars=self.config.examples_chars,
                )
            return run_episode(
                self.model,
                self.backend,
                self.domain,
                episode_dir=episode_dir,
                candidate_dir=candidate_dir,
                task_id=gid,
                config=self.config.proposer,
                digest_md=digest_md,
                trial_dirs=trials,
                validation=self.validation,
                index=i,
                run_id=self.run_id,
                model_probes=self.model_probes,
            )
        except EngineUnavailableError:
            raise  # the engine is gone for every generation: an infrastructure error, never a rejection
        except Exception as e:  # one broken generation must not sink the other N-1
            error = f"{type(e).__name__}: {e}"
            return GenerationResult(id=gid, mode=self.config.mode, episode_dir=str(episode_dir), error=error)

    def generate(self, on_generated: OnGenerated = lambda _g: None, *, resume: bool = False) -> list[GenerationResult]:
        """The run's episodes, each logged in ``generations.jsonl`` as it ends. ``resume``: the episodes logged
        there are kept (and reported to ``on_generated`` first), the others run from scratch."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self._save_config()
        digest_md, trials, findings = self._digest()
        write_atomic(self.out_dir / "digest.md", digest_md)
        first = self.config.first_index
        indices = list(range(first, first + self.config.n))
        runner: ItemRunner[int, GenerationResult] = ItemRunner(
            self.generations,
            item_key=self.gid,
            result_key=lambda g: g.id,
            executor=LocalExecutor("propose"),  # episodes drive a model served here and build in the local engine
            concurrency=self.config.concurrency,
        )
        done = runner.resume(resume)
        if resume:  # containers a killed run left behind
            self.backend.cleanup(self.run_id)
        for i in indices:
            gid = self.gid(i)
            if gid in done:
                on_generated(done[gid])
            else:  # what an unfinished episode left behind
                for d in self.dirs(gid):
                    shutil.rmtree(d, ignore_errors=True)
        generate = lambda i: self._generate(i, digest_md, trials, findings)  # noqa: E731
        return runner.run(indices, generate, on_done=on_generated)

    def _needs_reproduction(self, record: ProposalRecord) -> bool:
        """A valid candidate whose tests hold recorded outputs: a blind solver must reproduce them."""
        return bool(record.is_valid and record.validation.recorded and self.config.reproduce_attempts > 0)

    def _reproduced(self, record: ProposalRecord, result: Reproduction) -> ProposalRecord:
        """``record`` with its blind attempts: rejected when none reproduced, an error when too few got a reward."""
        validation = record.validation.model_copy(
            update={
                "reproduce_oneshots": result.oneshot_rewards,
                "reproduce_rewards": result.rewards,
                "reproduce_tokens": result.tokens,
                "reproduce_wall_sec": result.wall_sec,
            }
        )
        update: dict[str, Any] = {"validation": validation}
        if result.error is not None:
            update |= {"verdict": "error", "failed_checks": ["reproduce-error"]}
            validation.error = result.error
        elif not result.reproduced:
            update |= {"verdict": "invalid", "failed_checks": [NOT_REPRODUCED]}
        return record.model_copy(update=update)

    def validate(
        self,
        generations: list[GenerationResult],
        on_validated: OnValidated = lambda _r: None,
        on_reproduced: OnReproduced = lambda _i, _r: None,
        *,
        resume: bool = False,
    ) -> list[ProposalRecord]:
        """Validate every candidate, then the blind attempts of those that need them; ``resume`` keeps the
        validations and reproductions already logged (the candidates are those of the logged generations)."""
        candidates = [Path(g.candidate_dir) for g in generations if g.candidate_dir]
        reports: dict[str, ValidationReport] = {}
        if candidates:
            run = ValidationRun(
                self.out_dir / "validation",
                self.backend,
                self.validation,
                concurrency=self.config.validation_concurrency,
                executor=self.executor,
                backend_name=self.backend_name,
                model_probes=self.model_probes,
            )
            by_id = {g.id: g for g in generations}
            threshold = self.config.proposer.novelty_threshold

            def reported(report: ValidationReport) -> None:
                # The progress line must not say "valid" for a candidate the novelty check rejects.
                gen = by_id.get(Path(report.task_path).name)
                if gen is not None and report.verdict.value == "valid":
                    novelty = check_novelty(Path(report.task_path), self.references(gen), threshold)
                    if not novelty.is_new:
                        report = report.model_copy(
                            update={"verdict": Verdict.INVALID, "failed_checks": [DUPLICATE_CHECK]}
                        )
                on_validated(report)

            done, _ = run.run(candidates, on_done=reported, resume=resume)
            reports = {Path(r.task_path).name: r for r in done}
        threshold = self.config.proposer.novelty_threshold
        checked = [
            proposal_record(g, reports.get(g.id), self.references(g), threshold).model_copy(
                update={"domain": self.domain.name}
            )
            for g in sorted(generations, key=lambda g: g.id)
        ]
        # The blind attempts of every candidate that needs them, at once (on the executor when there is one). A
        # twin of an earlier valid candidate waits: it needs its own only if that one is not reproduced.
        repro = Reproductions(
            self.out_dir / "reproduce",
            self.solver_factory,
            self.backend,
            attempts=self.config.reproduce_attempts,
            run_id=self.run_id,
            agent_timeout_sec=self.config.reproduce_timeout_sec,
            executor=self.executor,
            backend_name=self.backend_name,
            resume=resume,
            one_shots=self.config.reproduce_one_shots,
        )
        first: list[Path] = []
        valid: list[Path] = []
        for rec in checked:
            if rec.is_valid and rec.candidate_dir:
                here = Path(rec.candidate_dir)
                twin = bool(valid) and not check_novelty(here, valid, threshold).is_new
                if self._needs_reproduction(rec) and not twin:
                    first.append(here)
                valid.append(here)
        if first:
            repro.run(first)
            for task in first:
                on_reproduced(task.name, repro.done[task.name])
        records: list[ProposalRecord] = []
        accepted: list[Path] = []
        for rec in checked:
            if rec.is_valid and rec.candidate_dir and accepted:
                twin_of_accepted = check_novelty(Path(rec.candidate_dir), accepted, threshold)
                if not twin_of_accepted.is_new:
                    rec = rec.model_copy(update={"verdict": "invalid", "failed_checks": [DUPLICATE_IN_RUN]})
            if self._needs_reproduction(rec):
                assert rec.candidate_dir is not None
                here = Path(rec.candidate_dir)
                if here.name not in repro.done:  # a twin whose earlier sibling was not reproduced
                    repro.run([here])
                    on_reproduced(here.name, repro.done[here.name])
                rec = self._reproduced(rec, repro.done[here.name])
            if rec.is_valid and rec.candidate_dir:
                accepted.append(Path(rec.candidate_dir))
            records.append(rec)
        self.log.reset()
        for r in records:
            self.log.append(r)
        summary = summarize(records, self.config.mode, self.domain.name)
        write_atomic(self.out_dir / "summary.json", json.dumps(summary.model_dump(), indent=2))
        return records

    def run(
        self,
        on_generated: OnGenerated = lambda _g: None,
        on_validated: OnValidated = lambda _r: None,
        *,
        resume: bool = False,
    ) -> list[ProposalRecord]:
        return self.validate(self.generate(on_generated, resume=resume), on_validated, resume=resume)
