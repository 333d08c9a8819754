"""Leakage checks on a built image, before any agent runs: no solution, no tests, no pre-written reward.

Files are compared by content (SHA-256), so a solution copied under another name is still found. Package
trees (/usr/lib, /usr/share, dpkg state...) are skipped: they come from the distribution, not the task.
"""

from __future__ import annotations

import hashlib
import shlex
from pathlib import Path

from autoenvscaling.sandbox.base import Sandbox, SandboxError
from autoenvscaling.tasks import Task
from autoenvscaling.tasks.model import iter_task_files
from autoenvscaling.tasks.paths import CONTAINER_REWARD_JSON, CONTAINER_REWARD_TXT
from autoenvscaling.validate.report import LEAK_REWARD, LEAK_SOLUTION, LEAK_TESTS, CheckResult

_PRUNE = (
    "/proc",
    "/sys",
    "/dev",
    "/usr/lib",
    "/usr/share",
    "/usr/include",
    "/usr/libexec",
    "/var/lib/dpkg",
    "/var/lib/apt",
    "/var/cache",
    "/var/log",
    "/etc/ssl",
    "/etc/alternatives",
)
_CODE_SUFFIXES = (".sh", ".py", ".js", ".ts", ".rb", ".pl")
_MIN_SIZE = 24  # bytes; tiny files (a lone "1") match too much to mean anything
_MAX_SIZE_K = 2048


def _hashes(files: list[Path]) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in files:
        data = f.read_bytes()
        if len(data) >= _MIN_SIZE:
            out[hashlib.sha256(data).hexdigest()] = f.name
    return out


def _dirs_named(task: Task, name: str) -> list[Path]:
    """The task's ``solution``/``tests`` dir and, for a multi-step task, each step's."""
    steps = [task.paths.steps_dir / step.name / name for step in task.config.steps]
    return [d for d in [task.paths.root / name, *steps] if d.is_dir()]


def _hashes_of(dirs: list[Path]) -> dict[str, str]:
    return {h: n for d in dirs for h, n in _hashes(iter_task_files(d)).items()}


_SCAN_DONE = "aes-scan-status:"
_SCAN_LIMIT = 64_000_000


class LeakageScanError(SandboxError):
    """The scan could not look at the whole image (timed out, tools missing, output cut): never "clean"."""


def _scan_command() -> str:
    prune = " -o ".join(f"-path {shlex.quote(p)}" for p in _PRUNE)
    # find may report unreadable paths (exit 1) and sha256sum files that vanished (xargs 123); a missing tool
    # (127) or anything else means the scan did not happen.
    return (
        f"find / -xdev \\( {prune} \\) -prune -o -type f -size +{_MIN_SIZE - 1}c -size -{_MAX_SIZE_K}k -print0"
        f" 2>/dev/null | xargs -0 -r sha256sum 2>/dev/null; echo {_SCAN_DONE}${{PIPESTATUS[0]}},${{PIPESTATUS[1]}}"
    )


def _run_checked(sandbox: Sandbox, cmd: str, what: str, timeout: float, limit: int = 1_000_000) -> str:
    res = sandbox.exec(cmd, timeout=timeout, user="0", output_limit=limit)
    if res.timed_out:
        raise LeakageScanError(f"the leakage scan ({what}) ran past {timeout:g} s")
    if res.truncated:
        raise LeakageScanError(f"the leakage scan ({what}) printed more than {limit} bytes")
    if res.exit_code != 0:
        raise LeakageScanError(f"the leakage scan ({what}) failed (exit {res.exit_code}): {res.output[-300:]}")
    return res.stdout


def _scan(sandbox: Sandbox) -> str:
    out = _run_checked(sandbox, _scan_command(), "hashing the image's files", 120, _SCAN_LIMIT)
    body, _, status = out.rstrip("\n").rpartition(_SCAN_DONE)
    find_rc, _, xargs_rc = status.partition(",")
    if find_rc not in ("0", "1") or xargs_rc not in ("0", "123"):
        raise LeakageScanError(f"the leakage scan could not hash the image's files (find {find_rc}, xargs {xargs_rc})")
    return body


ImageIndex = dict[str, list[str]]  # SHA-256 -> the image's paths with that content


def scan_image(sandbox: Sandbox) -> ImageIndex:
    """A content index of the image's files (pruned trees aside, 24 B to 2 MB); run before anything is uploaded."""
    index: ImageIndex = {}
    for line in _scan(sandbox).splitlines():
        digest, _, path = line.partition("  ")
        if path:
            index.setdefault(digest, []).append(path)
    return index


def check_leakage(task: Task, sandbox: Sandbox, index: ImageIndex | None = None) -> list[CheckResult]:
    """Run in a fresh container of the task's image (nothing uploaded yet); ``index`` from ``scan_image`` there."""
    solution = _hashes_of(_dirs_named(task, "solution"))
    tests = _hashes_of(_dirs_named(task, "tests"))
    # A data fixture the tests share with the build context (an input file) is meant to be in the image;
    # test code (scripts, .py) never is.
    env_dir = task.paths.environment_dir
    intended = set(_hashes(iter_task_files(env_dir))) if env_dir.is_dir() else set()
    tests = {h: n for h, n in tests.items() if h not in intended or n.endswith(_CODE_SUFFIXES)}
    index = scan_image(sandbox) if index is None else index
    found_solution: list[str] = []
    found_tests: list[str] = []
    for digest, paths in index.items():
        for path in paths:
            if digest in solution:
                found_solution.append(f"{path} (= solution/{solution[digest]})")
            if digest in tests:
                found_tests.append(f"{path} (= tests/{tests[digest]})")
    # As root: a directory the image's user cannot read must not hide what lies in it.
    dirs = _run_checked(sandbox, "for d in /solution /tests; do [ -e $d ] && echo $d; done; true", "dirs", 30).split()
    found_solution += [f"{d} exists" for d in dirs if d == "/solution"]
    found_tests += [f"{d} exists" for d in dirs if d == "/tests"]
    reward = _run_checked(
        sandbox,
        f"for f in {CONTAINER_REWARD_TXT} {CONTAINER_REWARD_JSON}; do [ -e $f ] && echo $f; done; true",
        "reward files",
        30,
    ).split()
    return [
        CheckResult(id=LEAK_SOLUTION, passed=not found_solution, detail="; ".join(found_solution[:5])),
        CheckResult(id=LEAK_TESTS, passed=not found_tests, detail="; ".join(found_tests[:5])),
        CheckResult(id=LEAK_REWARD, passed=not reward, detail="; ".join(reward)),
    ]
