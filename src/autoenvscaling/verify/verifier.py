"""Run a task's tests with Harbor's semantics and turn the reward files into a ``VerifierResult``.

1. recreate ``/logs/verifier`` as root (an agent could have pre-written rewards or left it writable to all);
2. upload ``tests/`` to ``/tests`` (only now, after the agent phase);
3. ``(/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1`` under ``[verifier].timeout_sec``;
4. copy ``/logs/verifier`` out and read ``reward.json`` (wins) or ``reward.txt``.

The exit code of test.sh is ignored. A missing, empty or non-finite reward raises ``VerifierError``.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

from autoenvscaling.sandbox.base import Sandbox, SandboxError
from autoenvscaling.tasks import Task
from autoenvscaling.tasks.paths import (
    CONTAINER_LOGS_VERIFIER,
    CONTAINER_REWARD_JSON,
    CONTAINER_REWARD_TXT,
    CONTAINER_TESTS_DIR,
)
from autoenvscaling.verify.errors import (
    RewardInvalidError,
    RewardMissingError,
    VerifierError,
    VerifierTimeoutError,
)
from autoenvscaling.verify.results import VerifierResult
from autoenvscaling.verify.secrets import expand_env

__all__ = ["Verifier", "expand_env", "read_rewards"]

_MAX_REWARD_FILE = 64 * 1024


def _finite(name: str, value: object, source: Path) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RewardInvalidError(f"{source.name}: {name} is not a number: {value!r}")
    if not math.isfinite(value):
        raise RewardInvalidError(f"{source.name}: {name} is not finite: {value!r}")
    return float(value)


def read_rewards(verifier_dir: Path) -> dict[str, float]:
    """Parse the reward files copied out of ``/logs/verifier``. reward.json wins over reward.txt."""
    json_path, txt_path = verifier_dir / "reward.json", verifier_dir / "reward.txt"
    for path in (json_path, txt_path):
        if path.is_symlink():
            raise RewardInvalidError(f"{path.name} is a symlink; refusing to follow it")
        if path.exists() and path.stat().st_size > _MAX_REWARD_FILE:
            raise RewardInvalidError(f"{path.name} is larger than {_MAX_REWARD_FILE} bytes")
    if json_path.is_file():
        text = json_path.read_text(encoding="utf-8", errors="replace").strip()
        if not text:
            raise RewardMissingError("reward.json is empty")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise RewardInvalidError(f"reward.json is not valid JSON: {e}") from None
        if not isinstance(data, dict) or not data:
            raise RewardInvalidError("reward.json must be a non-empty flat object of {name: number}")
        return {str(k): _finite(str(k), v, json_path) for k, v in data.items()}
    if txt_path.is_file():
        text = txt_path.read_text(encoding="utf-8", errors="replace").strip()
        if not text:
            raise RewardMissingError("reward.txt is empty")
        try:
            value = float(text.split()[0]) if len(text.split()) == 1 else float(text)
        except ValueError:
            raise RewardInvalidError(f"reward.txt does not hold one number: {text[:80]!r}") from None
        return {"reward": _finite("reward", value, txt_path)}
    raise RewardMissingError(
        f"tests/test.sh finished without writing {CONTAINER_REWARD_TXT} or {CONTAINER_REWARD_JSON}"
    )


class Verifier:
    def __init__(
        self, task: Task, sandbox: Sandbox, verifier_dir: Path, *, passed_env: Mapping[str, str] | None = None
    ) -> None:
        self.task = task
        self.sandbox = sandbox
        self.verifier_dir = verifier_dir
        self.passed_env = dict(passed_env or {})
        self.tests_seconds: float | None = None  # time test.sh itself ran (the rest is our plumbing)

    @property
    def user(self) -> str | None:
        user = self.task.config.verifier.user
        return None if user is None else str(user)

    def prepare(self) -> None:
        """Steps 1-2: a fresh /logs/verifier owned by root (or the tests' user), then the tests.

        Done as root and checked: an image whose user cannot delete a pre-written reward must not keep it."""
        res = self.sandbox.exec(
            f"rm -rf {CONTAINER_LOGS_VERIFIER} {CONTAINER_TESTS_DIR} && mkdir -p {CONTAINER_LOGS_VERIFIER}"
            f" && chmod 0755 {CONTAINER_LOGS_VERIFIER} && test ! -e {CONTAINER_REWARD_TXT}"
            f" && test ! -e {CONTAINER_REWARD_JSON}",
            timeout=30,
            user="0",
        )
        if not res.ok:
            raise SandboxError(f"cannot reset {CONTAINER_LOGS_VERIFIER} before the tests: {res.output.strip()[-300:]}")
        uid = self.sandbox.exec("id -u", timeout=30, user=self.user).stdout.strip()
        if uid.isdigit() and uid != "0":  # the tests run as another user: only that user may write the reward
            self.sandbox.exec(f"chown {uid} {CONTAINER_LOGS_VERIFIER}", timeout=30, user="0")
        test_dirs = self.task.paths.test_dirs
        if not test_dirs:
            raise VerifierError(f"{self.task.paths.tests_dir}: missing")
        for tests in test_dirs:  # a step's tests go over the task's: Harbor's fallback order
            self.sandbox.upload(tests, CONTAINER_TESTS_DIR)
        self.sandbox.exec(
            f"chmod -R a+rX {CONTAINER_TESTS_DIR} && chmod +x {CONTAINER_TESTS_DIR}/test.sh", timeout=30, user="0"
        )

    def run_tests(self) -> None:
        """Step 3: the test script, output to test-stdout.txt, under the verifier timeout."""
        cfg = self.task.config.verifier
        result = self.sandbox.exec(
            f"({CONTAINER_TESTS_DIR}/test.sh) > {CONTAINER_LOGS_VERIFIER}/test-stdout.txt 2>&1",
            timeout=cfg.timeout_sec,
            env=expand_env(cfg.env, self.passed_env),
            user=self.user,
        )
        self.tests_seconds = result.duration_sec
        if result.timed_out:
            self._collect()
            raise VerifierTimeoutError(f"tests/test.sh ran past the verifier timeout ({cfg.timeout_sec:g} s)")

    def _collect(self) -> None:
        if self.verifier_dir.exists():
            shutil.rmtree(self.verifier_dir)
        self.sandbox.download(CONTAINER_LOGS_VERIFIER, self.verifier_dir)

    def verify(self, *, before_tests: Callable[[], None] | None = None) -> VerifierResult:
        """``before_tests``: called between steps 2 and 3 (the trial waits there for the agent's sandbox to go)."""
        self.prepare()
        if before_tests is not None:
            before_tests()
        self.run_tests()
        self._collect()
        return VerifierResult(rewards=read_rewards(self.verifier_dir))
