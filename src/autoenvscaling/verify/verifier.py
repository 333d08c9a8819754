"""Run a task's tests with Harbor's semantics and turn the reward files into a ``VerifierResult``.

1. ``rm -f`` the reward files (an agent could have pre-written them);
2. upload ``tests/`` to ``/tests`` (only now, after the agent phase);
3. ``(/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1`` under ``[verifier].timeout_sec``;
4. copy ``/logs/verifier`` out and read ``reward.json`` (wins) or ``reward.txt``.

The exit code of test.sh is ignored. A missing, empty or non-finite reward raises ``VerifierError``.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from pathlib import Path

from autoenvscaling.sandbox.base import Sandbox
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

_VAR_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_MAX_REWARD_FILE = 64 * 1024


def expand_env(values: dict[str, str], host_env: dict[str, str] | None = None) -> dict[str, str]:
    """Expand ``${VAR}`` and ``${VAR:-default}`` from the host environment (task.toml ``env`` tables)."""
    source = dict(os.environ) if host_env is None else host_env

    def sub(m: re.Match[str]) -> str:
        value = source.get(m.group(1))
        if value is None or (value == "" and m.group(2) is not None):
            return m.group(2) or ""
        return value

    return {k: _VAR_RE.sub(sub, v) for k, v in values.items()}


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
    def __init__(self, task: Task, sandbox: Sandbox, verifier_dir: Path) -> None:
        self.task = task
        self.sandbox = sandbox
        self.verifier_dir = verifier_dir
        self.tests_seconds: float | None = None  # time test.sh itself ran (the rest is our plumbing)

    def prepare(self) -> None:
        """Steps 1-2: clear pre-written rewards, upload the tests (after the agent phase only)."""
        self.sandbox.exec(
            f"rm -rf {CONTAINER_REWARD_TXT} {CONTAINER_REWARD_JSON} {CONTAINER_TESTS_DIR}"
            f" && mkdir -p {CONTAINER_LOGS_VERIFIER} && chmod 777 {CONTAINER_LOGS_VERIFIER}",
            timeout=30,
        )
        if not self.task.paths.tests_dir.is_dir():
            raise VerifierError(f"{self.task.paths.tests_dir}: missing")
        self.sandbox.upload(self.task.paths.tests_dir, CONTAINER_TESTS_DIR)
        self.sandbox.exec(f"chmod -R a+rX {CONTAINER_TESTS_DIR} && chmod +x {CONTAINER_TESTS_DIR}/test.sh", timeout=30)

    def run_tests(self) -> None:
        """Step 3: the test script, output to test-stdout.txt, under the verifier timeout."""
        cfg = self.task.config.verifier
        result = self.sandbox.exec(
            f"({CONTAINER_TESTS_DIR}/test.sh) > {CONTAINER_LOGS_VERIFIER}/test-stdout.txt 2>&1",
            timeout=cfg.timeout_sec,
            env=expand_env(cfg.env),
            user=None if cfg.user is None else str(cfg.user),
        )
        self.tests_seconds = result.duration_sec
        if result.timed_out:
            self._collect()
            raise VerifierTimeoutError(f"tests/test.sh ran past the verifier timeout ({cfg.timeout_sec:g} s)")

    def _collect(self) -> None:
        if self.verifier_dir.exists():
            shutil.rmtree(self.verifier_dir)
        self.sandbox.download(CONTAINER_LOGS_VERIFIER, self.verifier_dir)

    def verify(self) -> VerifierResult:
        self.prepare()
        self.run_tests()
        self._collect()
        return VerifierResult(rewards=read_rewards(self.verifier_dir))
