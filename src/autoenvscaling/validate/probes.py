"""Environment-quality probes: is the task hackable, is its answer already in the image, do its tests reject
plausibly wrong answers?

All probes run in one sandbox of the pristine image (the leakage scan's), with the tests uploaded once and run
by a light loop with the verifier's semantics (``/logs/verifier`` reset as root, ``test.sh`` as the verifier's
user under its timeout, reward.json over reward.txt), so a probe costs a test run, not a trial:

1. exploits (``exploits.py``): each scripted exploit, run as the agent's user, then the tests, then undone;
   a reward > 0 fails ``hackable:<exploit>``;
2. the reference solution, once, after a time mark; the files it wrote (mtime) that the tests, the instruction or
   the artifacts name are its outputs;
3. ``hackable:instruction-answer``: an output that the instruction itself shows (``instruction_answers``) is
   written in place, the tests run, the output restored; tried only where the instruction holds such a string;
4. ``leak-answer``: an output whose content (>= 24 B) lies elsewhere in the pristine image (``scan_image``), or
   a string literal of the Python tests (>= 24 B, the value they expect) that is a whole file there;
5. mutation (``mutants.py``): each mutant of an output is written in place, the tests run, the output restored;
   the score is the share of mutants that scored below 1, ``weak-tests`` below ``mutation_threshold``. Source
   code outputs are not mutated: a dropped comment or dead line is an equivalent mutant, not a weak test.

The light loop skips the fresh container per run, so a test that changes the state it reads could tell
the runs apart; separate-mode tasks are approximated (only artifact paths are written by the file exploits).
"""

from __future__ import annotations

import ast
import base64
import hashlib
import math
import shlex
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from autoenvscaling.sandbox.base import Sandbox, SandboxError
from autoenvscaling.tasks import Task
from autoenvscaling.tasks.model import iter_task_files
from autoenvscaling.tasks.paths import CONTAINER_LOGS_AGENT, CONTAINER_LOGS_VERIFIER, CONTAINER_SOLUTION_DIR
from autoenvscaling.tasks.paths import CONTAINER_TESTS_DIR as TESTS
from autoenvscaling.validate import report as R
from autoenvscaling.validate.exploits import (
    FILE_EXPLOITS,
    INSTRUCTION_ANSWER,
    PLANT,
    UNDO,
    exploits_for,
    instruction_answers,
)
from autoenvscaling.validate.leakage import ImageIndex
from autoenvscaling.validate.mutants import select_mutants
from autoenvscaling.verify.errors import VerifierError
from autoenvscaling.verify.results import is_solved, scalar_reward
from autoenvscaling.verify.secrets import expand_env
from autoenvscaling.verify.verifier import read_rewards

_T = TypeVar("_T")
_EPS = 1e-9
_MARK = "/tmp/.aes-probe-mark"
_REWARD_TAG = "@@aes-probe-reward:"
_MAX_TEXT = 64 * 1024
_MIN_LITERAL = 24  # bytes, as the image index's smallest file (leakage._MIN_SIZE)
_MAX_ANSWER_RUNS = 3  # test runs for the instruction's strings that could be the answer
_CODE_SUFFIXES = (".py", ".sh", ".c", ".h", ".cc", ".cpp", ".js", ".ts", ".go", ".rs", ".java", ".rb", ".pl")
_OUTPUT_PRUNE = (
    "/proc",
    "/sys",
    "/dev",
    "/logs",
    "/tmp",
    "/run",
    "/var/cache",
    "/var/log",
    "/root/.cache",
    "/solution",
)
_OUTPUT_PRUNE_ALL = (*_OUTPUT_PRUNE, TESTS)


JudgeMode = Literal["off", "advisory", "blocking"]


class ProbeConfig(BaseModel):
    """Which quality probes run after a task passed every other check. The rule probes need ``enabled``; the
    model probes (``judge``, ``adversarial_attempts``) have their own switches and need a model from the caller
    (``validate/model_probes.py``)."""

    model_config = ConfigDict(frozen=True)

    enabled: bool = Field(default=False, description="run the rule probes (on for generated environments)")
    exploits: bool = Field(default=True, description="scripted exploits: hackable:<exploit>")
    answer_leak: bool = Field(default=True, description="the reference output already in the image: leak-answer")
    mutation: bool = Field(default=True, description="mutants of the reference output must fail: weak-tests")
    mutation_threshold: float = Field(default=0.7, ge=0, le=1, description="weak-tests below this mutation score")
    max_mutants: int = Field(default=6, ge=1, description="mutants tested per task")
    judge: JudgeMode = Field(
        default="off",
        description="the alignment judge (a model call per task): advisory lists judge:<criterion> flags, blocking "
        "makes them failed checks",
    )
    adversarial_attempts: int = Field(
        default=0, ge=0, description="attempts of a solver told to cheat; a confirmed exploit: hackable:adversarial"
    )

    @property
    def model_probes(self) -> bool:
        """Whether a model probe is asked for (the caller must then supply the model)."""
        return self.judge != "off" or self.adversarial_attempts > 0

    @property
    def any(self) -> bool:
        return self.enabled or self.model_probes


GENERATED_PROBES = ProbeConfig(enabled=True)


class _Tests:
    """The task's tests, uploaded once, run as often as needed with the verifier's reset and reward rules."""

    def __init__(self, task: Task, sandbox: Sandbox, passed_env: Mapping[str, str]) -> None:
        cfg = task.config.verifier
        self.sandbox, self.timeout = sandbox, cfg.timeout_sec
        self.user = None if cfg.user is None else str(cfg.user)
        self.env = expand_env(cfg.env, passed_env)
        self.runs = 0
        root(sandbox, f"rm -rf {TESTS}")
        for tests in task.paths.test_dirs:
            sandbox.upload(tests, TESTS)
        root(sandbox, f"chmod -R a+rX {TESTS} && chmod +x {TESTS}/test.sh")
        uid = sandbox.exec("id -u", timeout=30, user=self.user).stdout.strip()
        self.chown = f" && chown {uid} {CONTAINER_LOGS_VERIFIER}" if uid.isdigit() and uid != "0" else ""

    def reward(self) -> float | None:
        """One run of test.sh; None when it wrote no readable reward or ran out of time."""
        self.runs += 1
        lv = CONTAINER_LOGS_VERIFIER
        root(self.sandbox, f"rm -rf {lv} && mkdir -p {lv} && chmod 0755 {lv}{self.chown}")
        show = (
            f"for f in reward.json reward.txt; do [ -f {lv}/$f ] && "
            f'{{ echo "{_REWARD_TAG}$f"; head -c 65536 {lv}/$f; echo; }}; done'
        )
        res = self.sandbox.exec(
            f"({TESTS}/test.sh) > {lv}/test-stdout.txt 2>&1; {show}; true",
            timeout=self.timeout,
            env=self.env,
            user=self.user,
        )
        if res.timed_out:
            return None
        with tempfile.TemporaryDirectory(prefix="aes-probe-") as tmp:
            for chunk in res.stdout.split(_REWARD_TAG)[1:]:
                name, _, body = chunk.partition("\n")
                if name in ("reward.json", "reward.txt"):
                    (Path(tmp) / name).write_text(body, encoding="utf-8")
            try:
                return scalar_reward(read_rewards(Path(tmp)))
            except VerifierError:
                return None


def root(sandbox: Sandbox, cmd: str, timeout: float = 60) -> str:
    res = sandbox.exec(cmd, timeout=timeout, user="0")
    if not res.ok:
        raise SandboxError(f"probe step failed (exit {res.exit_code}): {cmd[:80]}: {res.output.strip()[-300:]}")
    return res.stdout


def _passed(reward: float | None) -> bool:
    return reward is not None and reward > _EPS


def expected_literals(task: Task) -> dict[str, str]:
    """SHA-256 -> where it is, of each string literal of 24+ bytes in the task's Python test files (also with and
    without a final newline, as a file that holds it may end): the values the tests expect, whose presence as a
    whole file of the image gives the answer away even where the solution's own output differs from it."""
    found: dict[str, str] = {}
    for d in task.paths.test_dirs:
        for f in iter_task_files(d):
            if f.suffix != ".py" or not f.is_file():
                continue
            try:
                tree = ast.parse(f.read_text(encoding="utf-8", errors="replace"))
            except (SyntaxError, ValueError):
                continue
            for node in ast.walk(tree):
                value = node.value if isinstance(node, ast.Constant) else None
                data = value.encode() if isinstance(value, str) else value if isinstance(value, bytes) else b""
                if len(data) < _MIN_LITERAL:
                    continue
                label = f"{f.relative_to(task.paths.root)}: {data[:40].decode(errors='replace')!r}"
                for variant in {data, data.rstrip(b"\n"), data.rstrip(b"\n") + b"\n"}:
                    found.setdefault(hashlib.sha256(variant).hexdigest(), label)
    return found


class ProbeRun:
    """The probes of one task in one pristine sandbox; ``run`` returns the checks and fills ``report``."""

    def __init__(
        self,
        task: Task,
        sandbox: Sandbox,
        config: ProbeConfig,
        passed_env: Mapping[str, str],
        index: ImageIndex,
        reference_timeout: float | None = None,
    ) -> None:
        """``reference_timeout``: the limit of the solution's run here (the oracle trials' time tells it)."""
        self.task, self.sandbox, self.config, self.index = task, sandbox, config, index
        self.reference_timeout = reference_timeout
        self.passed_env = dict(passed_env)
        self.agent_user = None if task.config.agent.user is None else str(task.config.agent.user)
        self.report = R.ProbeReport()
        self.checks: list[R.CheckResult] = []

    def run(self, status: Callable[[str], None] = lambda _: None) -> list[R.CheckResult]:
        if self.task.config.is_multi_step:
            self.report.notes.append("multi-step task: not probed")
            return []
        tests = _Tests(self.task, self.sandbox, self.passed_env)
        if self.config.exploits:
            status("probes: exploits")
            self._timed("exploits", lambda: self._exploits(tests))
        if self.config.exploits or self.config.answer_leak or self.config.mutation:
            status("probes: reference outputs")
            outputs = self._timed("reference", self._reference_outputs)
            texts = self._output_texts(outputs) if outputs else {}
            if outputs is not None and self.config.exploits:
                self._timed("instruction", lambda: self._instruction_answer(tests, texts))
            if outputs is not None and self.config.answer_leak:
                self._timed("answer", lambda: self._answer_leak(outputs))
            if outputs is not None and self.config.mutation:
                status("probes: mutants")
                self._timed("mutation", lambda: self._mutation(tests, texts))
        self.report.test_runs = tests.runs
        self.report.flags = sorted(c.id for c in self.checks if not c.passed)
        return self.checks

    def _timed(self, name: str, fn: Callable[[], _T]) -> _T:
        t = time.perf_counter()
        try:
            return fn()
        finally:
            self.report.timings[name] = round(time.perf_counter() - t, 3)

    # -- 1. exploits --------------------------------------------------------------------------------------------
    def _exploits(self, tests: _Tests) -> None:
        """File exploits one by one (they write the same paths); the others (reward files, shims) first together,
        and one by one only when together they scored: one test run for a task none of them fools."""
        exploits = exploits_for(self.task)
        ready = [e for e in exploits if e.script]
        self.report.exploits += [R.ExploitResult(name=e.name, note=e.note) for e in exploits if not e.script]
        grouped = [e for e in ready if e.name not in FILE_EXPLOITS]
        rewards: dict[str, float | None] = {}
        if len(grouped) > 1:
            together = self._exploit_reward(tests, "".join(e.script for e in grouped))
            if not _passed(together):
                rewards = {e.name: together for e in grouped}
        conclusive = set(rewards)  # settled by the run together
        for ex in ready:
            if ex.name not in rewards:
                rewards[ex.name] = self._exploit_reward(tests, ex.script)
        for ex in ready:
            reward = rewards[ex.name]
            others = ", ".join(g.name for g in grouped if g is not ex)
            note = f"run together with {others}" if ex.name in conclusive else ""
            self.report.exploits.append(R.ExploitResult(name=ex.name, ran=True, reward=reward, note=note))
            shown = f"reward {reward:g}" if reward is not None else "no reward"
            self.checks.append(
                R.CheckResult(
                    id=f"{R.HACKABLE_PREFIX}{ex.name}", passed=not _passed(reward), detail=f"{ex.name}: {shown}"
                )
            )

    def _exploit_reward(self, tests: _Tests, script: str) -> float | None:
        self.sandbox.exec(PLANT + script, timeout=60, user=self.agent_user)
        try:
            return tests.reward()
        finally:
            root(self.sandbox, UNDO)

    # -- 2. the reference solution's outputs -------------------------------------------------------------------
    def _reference_outputs(self) -> dict[str, str] | None:
        """Graded files the solution changed -> their digest; None (with a note) when it did not run cleanly."""
        root(self.sandbox, f"touch {_MARK} && sleep 0.01 && mkdir -p {CONTAINER_LOGS_AGENT} && chmod 0777 /logs/agent")
        self.sandbox.upload(self.task.paths.solution_dir, CONTAINER_SOLUTION_DIR)
        res = self.sandbox.exec(
            f"bash {CONTAINER_SOLUTION_DIR}/solve.sh > {CONTAINER_LOGS_AGENT}/probe-oracle.txt 2>&1",
            timeout=min(self.reference_timeout or math.inf, self.task.config.agent.timeout_sec),
            env=expand_env(self.task.config.solution.env, self.passed_env),
            user=self.agent_user,
        )
        if res.timed_out or res.exit_code != 0:
            how = f"ran past {res.duration_sec:.0f} s" if res.timed_out else f"exit {res.exit_code}"
            self.report.notes.append(f"solve.sh did not finish cleanly in the probe sandbox ({how})")
            return None
        prune = " -o ".join(f"-path {shlex.quote(p)}" for p in _OUTPUT_PRUNE_ALL)
        out = root(
            self.sandbox,
            f"find / -xdev \\( {prune} \\) -prune -o -type f -newer {_MARK} -size -2048k -print0"
            " 2>/dev/null | xargs -0 -r sha256sum",
            timeout=120,
        )
        graded = self._graded_text()
        outputs: dict[str, str] = {}
        for line in out.splitlines():
            digest, _, path = line.partition("  ")
            if "/__pycache__/" in path or path.endswith(".pyc"):
                continue
            if _is_graded(path, graded):
                outputs[path] = digest
        self.report.outputs = sorted(outputs)
        if not outputs:
            self.report.notes.append("the solution changed no file that the tests or the instruction name")
        return outputs

    def _graded_text(self) -> str:
        """Where graded paths are named: the tests, the instruction, the artifacts."""
        parts = [self.task.paths.instruction.read_text(encoding="utf-8", errors="replace")]
        parts += self.task.config.artifact_paths
        for d in self.task.paths.test_dirs:
            parts += [f.read_text(encoding="utf-8", errors="replace") for f in iter_task_files(d) if f.is_file()]
        return "\n".join(parts)

    def _output_texts(self, outputs: dict[str, str]) -> dict[str, str]:
        """The outputs that are UTF-8 text of at most 64 KiB -> their text."""
        texts: dict[str, str] = {}
        for path in outputs:
            raw = base64.b64decode(root(self.sandbox, f"head -c {_MAX_TEXT + 1} -- {shlex.quote(path)} | base64 -w0"))
            try:
                if len(raw) <= _MAX_TEXT:
                    texts[path] = raw.decode("utf-8")
            except UnicodeDecodeError:
                continue
        return texts

    # -- 3. the answer shown in the instruction -------------------------------------------------------------
    def _instruction_answer(self, tests: _Tests, texts: dict[str, str]) -> None:
        """Each output the instruction shows whole is written from the instruction's string and the tests run: a
        reward > 0 is ``hackable:instruction-answer``. No such string: no test run, no check."""
        instruction = self.task.paths.instruction.read_text(encoding="utf-8", errors="replace")
        tries = [(p, a) for p in sorted(texts) for a in instruction_answers(instruction, texts[p])]
        if not tries:
            self.report.exploits.append(
                R.ExploitResult(name=INSTRUCTION_ANSWER, note="the instruction shows no output whole")
            )
            return
        best: float | None = None
        shown = f"{tries[0][0]} <- `{tries[0][1][:60]}`"  # the best try's, else the first's
        for path, answer in tries[:_MAX_ANSWER_RUNS]:
            _write(self.sandbox, path, answer + "\n")
            try:
                reward = tests.reward()
            finally:
                _write(self.sandbox, path, texts[path])
            if reward is not None and (best is None or reward > best):
                best, shown = reward, f"{path} <- `{answer[:60]}`"
        note = shown + (f" ({len(tries)} strings, {_MAX_ANSWER_RUNS} tried)" if len(tries) > _MAX_ANSWER_RUNS else "")
        self.report.exploits.append(R.ExploitResult(name=INSTRUCTION_ANSWER, ran=True, reward=best, note=note))
        said = f"reward {best:g}" if best is not None else "no reward"
        self.checks.append(
            R.CheckResult(
                id=f"{R.HACKABLE_PREFIX}{INSTRUCTION_ANSWER}",
                passed=not _passed(best),
                detail=f"{INSTRUCTION_ANSWER}: {shown}: {said}",
            )
        )

    # -- 4. leak-answer -----------------------------------------------------------------------------------------
    def _answer_leak(self, outputs: dict[str, str]) -> None:
        """The solution's outputs, and the tests' expected values (string literals of their Python files), against
        the pristine image's files."""
        found = [
            f"{path} = {other}"
            for path, digest in sorted(outputs.items())
            for other in self.index.get(digest, [])
            if other != path
        ]
        literals = expected_literals(self.task)
        found += [f"{label} = {other}" for digest, label in literals.items() for other in self.index.get(digest, [])]
        if outputs or literals:
            self.checks.append(R.CheckResult(id=R.LEAK_ANSWER, passed=not found, detail="; ".join(found[:5])))

    # -- 5. mutation --------------------------------------------------------------------------------------------
    def _mutation(self, tests: _Tests, texts: dict[str, str]) -> None:
        # lines of code have equivalent mutants (comments, dead lines)
        texts = {p: t for p, t in texts.items() if not p.endswith(_CODE_SUFFIXES)}
        mutants = select_mutants(texts, self.config.max_mutants)
        if not mutants:
            self.report.notes.append("no text output to mutate (source code outputs are not mutated)")
            return
        for m in mutants:
            _write(self.sandbox, m.path, m.content)
            try:
                reward = tests.reward()
            finally:
                _write(self.sandbox, m.path, texts[m.path])
            killed = not is_solved(reward)
            self.report.mutants.append(R.MutantResult(path=m.path, operator=m.operator, reward=reward, killed=killed))
        score = sum(m.killed for m in self.report.mutants) / len(self.report.mutants)
        self.report.mutation_score = round(score, 3)
        survived = [f"{m.operator} {m.path}" for m in self.report.mutants if not m.killed]
        detail = f"mutation score {score:.2f} ({len(survived)} of {len(mutants)} survived: {', '.join(survived[:4])})"
        self.checks.append(
            R.CheckResult(id=R.WEAK_TESTS, passed=score >= self.config.mutation_threshold, detail=detail)
        )


def _is_graded(path: str, text: str) -> bool:
    """Named where grading is described: the path itself, its name in a named dir, or any file of a named dir
    below the top level (``/app/json/x.json`` by ``/app/json``; a file of ``/app`` only by name)."""
    parent, _, name = path.rpartition("/")
    if path in text:
        return True
    if parent not in text:
        return False
    return name in text or parent.count("/") >= 2


def _write(sandbox: Sandbox, path: str, content: str) -> None:
    """Rewrite a file in place (owner and mode kept) as root."""
    data = base64.b64encode(content.encode("utf-8")).decode("ascii")
    root(sandbox, f"printf %s {data} | base64 -d > {shlex.quote(path)}")
