"""The harness-side tools of a proposer episode: ``check`` and ``try``, and the best draft seen.

Both copy ``/workshop/task`` out first (regular files only, see ``workshop``); the harness then does the
Docker work the workshop cannot: ``check`` first compares the snapshot with the references (a near-copy is
answered at once, without Docker), then runs the real validator (lint, build, oracle x K, nop, leakage) and
answers with the first failing check only (see ``feedback``); ``try`` runs one command in a fresh,
network-less container of the draft's image.

Episode dir::

    checks/<nn>/<task-id>/     the draft as checked (a Harbor task dir)
    checks/<nn>/report.json    the ValidationReport (none when the draft was still a copy: nothing ran)
    checks/<nn>/feedback.txt   what the proposer read
    checks/<nn>/trials/        the validator's trial dirs
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

from pydantic import BaseModel, Field

from autoenvscaling.errors import AutoEnvError
from autoenvscaling.roles.proposer.feedback import MAX_DETAIL, CheckFeedback, novelty_feedback, render_feedback
from autoenvscaling.roles.proposer.novelty import DUPLICATE_CHECK, check_novelty
from autoenvscaling.roles.proposer.workshop import DRAFT_DIR, DraftCopy, Workshop
from autoenvscaling.sandbox.base import BuildError, EngineUnavailableError, SandboxBackend, SandboxError
from autoenvscaling.tasks import TaskFormatError, load_task
from autoenvscaling.tasks.model import task_content_hash
from autoenvscaling.validate.model_probes import ModelProbes
from autoenvscaling.validate.probes import GENERATED_PROBES
from autoenvscaling.validate.validator import TaskValidator, ValidationConfig
from autoenvscaling.verify.environment import EnvironmentBuilder

_TRY = re.compile(r"^try(?:\s+(.*))?$", re.DOTALL)
_TRY_OUTPUT_CHARS = 3000


def harness_tool(command: str) -> tuple[str, str] | None:
    """``("check", "")`` or ``("try", cmd)`` when a whole command names a harness tool, else None."""
    text = command.strip()
    if text == "check":
        return "check", ""
    m = _TRY.match(text)
    return ("try", (m.group(1) or "").strip()) if m else None


class ToolsConfig(BaseModel):
    max_checks: int = Field(default=6, ge=0, description="check calls per episode")
    check_repeats: int = Field(default=1, ge=1, description="reference-solution runs per check (all must score 1)")
    try_timeout_sec: float = Field(default=30.0, gt=0)
    novelty_threshold: float = Field(default=0.8, gt=0, le=1)


class ToolOutput(BaseModel):
    text: str
    ok: bool


class CheckRecord(BaseModel):
    index: int
    draft_dir: Path
    content_hash: str | None
    passed: bool
    failed_checks: list[str] = Field(default_factory=list)
    wall_sec: float = 0.0


class DraftTools:
    """``check``/``try`` for one episode; remembers every check, so the best draft survives later edits."""

    def __init__(
        self,
        workshop: Workshop,
        backend: SandboxBackend,
        episode_dir: Path,
        task_id: str,
        *,
        config: ToolsConfig | None = None,
        validation: ValidationConfig | None = None,
        references: list[Path] | None = None,
        images: list[str] | None = None,
        run_id: str | None = None,
        model_probes: ModelProbes | None = None,
    ) -> None:
        """``model_probes``: the judge and adversary ``validation.probes`` asks for (none: it must ask for none)."""
        self.workshop = workshop
        self.backend = backend
        self.episode_dir = episode_dir
        self.task_id = task_id
        self.config = config or ToolsConfig()
        base = validation or ValidationConfig(probes=GENERATED_PROBES)
        # Drafts run without network outside their build.
        self.validation = base.model_copy(update={"repeats": self.config.check_repeats, "network": False})
        self.references = list(references or [])
        self.images = list(images or [])
        self.run_id = run_id
        self.model_probes = model_probes or ModelProbes()
        self.model_probes.require(self.validation.probes)  # refused at the episode's start, not at its first check
        self.builder = EnvironmentBuilder(backend)
        self.checks: list[CheckRecord] = []
        self.tries = 0

    @property
    def checks_left(self) -> int:
        return self.config.max_checks - len(self.checks)

    @property
    def best(self) -> CheckRecord | None:
        """The last draft whose check passed."""
        return next((c for c in reversed(self.checks) if c.passed), None)

    def snapshot(self, dest_root: Path) -> DraftCopy:
        """Copy the draft out to ``dest_root/<task-id>`` (the dir name is the task's name)."""
        return self.workshop.copy_draft(dest_root / self.task_id)

    # -- check -----------------------------------------------------------------------------------------
    def check(self) -> ToolOutput:
        """Validate a snapshot of the draft. A near-copy of a reference is told so before any Docker work: it
        costs a check but no build and no container runs."""
        index = len(self.checks) + 1
        check_dir = self.episode_dir / "checks" / f"{index:02d}"
        shutil.rmtree(check_dir, ignore_errors=True)
        started = time.perf_counter()
        copy = self.snapshot(check_dir)
        digest: str | None = None
        if not copy.ok:
            problem = copy.error or "the draft could not be copied out"
            feedback, failed = CheckFeedback(passed=False, problem=problem, problems=1), ["copy"]
        else:
            digest = task_content_hash(copy.path)
            novelty = check_novelty(copy.path, self.references, self.config.novelty_threshold)
            if novelty.is_new:
                feedback, failed = self._validate(copy, check_dir)
            else:
                feedback = novelty_feedback(novelty, copy.path, self.config.novelty_threshold)
                failed = [DUPLICATE_CHECK]
        record = CheckRecord(
            index=index,
            draft_dir=copy.path,
            content_hash=digest,
            passed=feedback.passed,
            failed_checks=failed,
            wall_sec=time.perf_counter() - started,
        )
        self.checks.append(record)
        text = self._check_text(record, feedback)
        (check_dir / "feedback.txt").write_text(text + "\n", encoding="utf-8")
        return ToolOutput(text=text, ok=feedback.passed)

    def _validate(self, copy: DraftCopy, check_dir: Path) -> tuple[CheckFeedback, list[str]]:
        """The real validator on the snapshot (build, reference solution, do-nothing run, leaks)."""
        with TaskValidator(
            self.backend,
            self.builder,
            self.validation,
            check_dir / "trials",
            run_id=self.run_id,
            model_probes=self.model_probes,
        ) as validator:
            report = validator.validate(copy.path)
        (check_dir / "report.json").write_text(report.model_dump_json(indent=2), encoding="utf-8")
        feedback = render_feedback(report, copy.path, check_dir / "trials", images=self.images, skipped=copy.skipped)
        return feedback, list(report.failed_checks)

    def _check_text(self, record: CheckRecord, feedback: CheckFeedback) -> str:
        """PASSED with its notes, or the first problem, the file to change, its evidence and the budget."""
        budget = f"check {record.index}/{self.config.max_checks}"
        if record.passed:
            head = (
                f"{budget}: PASSED. It builds, solution/solve.sh scores 1, doing nothing scores 0, nothing leaks. "
                "Reply `submit` to hand it in (or improve it and check again)."
            )
            lines = [head, *(f"- note: {n}" for n in feedback.notes)]
        else:
            more = f" ({feedback.problems} problems; the first one is shown)" if feedback.problems > 1 else ""
            lines = [f"{budget}: FAILED{more}.", f"Problem: {feedback.problem}"]
            if feedback.files:
                label = "File to change" if len(feedback.files) == 1 else "Files to change"
                lines.append(f"{label}: {', '.join(f'{DRAFT_DIR}/{f}' for f in feedback.files)}")
            lines += [f"  | {ln}" for ln in feedback.detail[:MAX_DETAIL]]
        left = self.checks_left
        if left <= 0:
            lines.append("That was your last check: reply `submit` now.")
        elif not record.passed:
            lines.append(f"Checks left: {left} of {self.config.max_checks}. Fix this, then run `check` again.")
        return "\n".join(lines)

    def no_checks_left(self) -> ToolOutput:
        return ToolOutput(
            text=f"No checks left (all {self.config.max_checks} used): the episode ends and your best draft "
            "is handed in.",
            ok=False,
        )

    # -- try -------------------------------------------------------------------------------------------
    def try_command(self, command: str) -> ToolOutput:
        if not command:
            return ToolOutput(text="`try` needs a command, e.g. `try ls -la /app`.", ok=False)
        self.tries += 1
        try_dir = self.episode_dir / "tries" / f"{self.tries:02d}"
        copy = self.snapshot(try_dir)
        try:
            if not copy.ok:
                return ToolOutput(text=copy.error or "the draft could not be copied out", ok=False)
            return self._run_in_image(copy.path, command)
        finally:
            shutil.rmtree(try_dir, ignore_errors=True)  # tries are cheap to redo; keep the episode dir small

    def _run_in_image(self, draft: Path, command: str) -> ToolOutput:
        try:
            task = load_task(draft)
            image = self.builder.image_for(task)
        except TaskFormatError as e:
            return ToolOutput(text=f"cannot read the draft: {e}", ok=False)
        except BuildError as e:
            tail = "\n".join(e.log_tail.splitlines()[-8:])
            return ToolOutput(text=f"the draft's image did not build: {e}\n{tail}", ok=False)
        except EngineUnavailableError:
            raise  # not the draft's fault: never shown to the model as feedback
        except AutoEnvError as e:
            return ToolOutput(text=f"cannot build the draft: {e}", ok=False)
        spec = self.builder.spec_for(task, image, name_hint=f"{self.task_id}__try", run_id=self.run_id, network=False)
        try:
            with self.backend.create(spec) as sandbox:
                res = sandbox.exec(command, timeout=self.config.try_timeout_sec)
        except EngineUnavailableError:
            raise
        except SandboxError as e:
            return ToolOutput(text=f"the container failed: {e}", ok=False)
        output = res.output.rstrip("\n")
        if len(output) > _TRY_OUTPUT_CHARS:
            half = _TRY_OUTPUT_CHARS // 2
            output = f"{output[:half]}\n[... {len(output) - 2 * half} characters omitted ...]\n{output[-half:]}"
        head = f"timed out after {self.config.try_timeout_sec:g} s" if res.timed_out else f"exit code {res.exit_code}"
        return ToolOutput(
            text=f"(in a fresh container of your draft's image, without /tests and /solution) {head}\n{output}",
            ok=res.ok,
        )
