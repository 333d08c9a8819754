"""The fake sandbox, taught to run the scripted flywheel's small bash tasks, so the viewer's tests read a run that
our own code wrote (no Docker needed).

The fake's in-memory filesystem stays the truth. Each command is run by the host's bash over a scratch copy of
the sandbox's task dirs (``/app``, ``/tests``, ``/solution``, ``/logs``, ``/workshop``), with those paths rewritten
to the copy in the command and in the copied text files; what the command changed is written back. Bind mounts
(the trial's log dirs) are linked, so writes land on the host as with Docker. The Dockerfile's ``COPY`` lines fill
the image; the leakage scan sees an image with no files.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from autoenvscaling.sandbox.base import BuildSpec, ExecResult, SandboxSpec
from autoenvscaling.sandbox.fake import FakeBackend, FakeCall, FakeSandbox

TOPS = ("app", "tests", "solution", "logs", "workshop")
_PATH = re.compile(r"(?<![\w.~/-])/(" + "|".join(TOPS) + r")(?![\w.-])")
_COPY = re.compile(r"^\s*COPY\s+(\S+)\s+(\S+)\s*$", re.IGNORECASE | re.MULTILINE)
_WORKDIR = re.compile(r"^\s*WORKDIR\s+(\S+)\s*$", re.IGNORECASE | re.MULTILINE)


def _rewrite(data: bytes, root: Path) -> bytes:
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return data
    return _PATH.sub(lambda m: f"{root}/{m.group(1)}", text).encode()


def _unrewrite(data: bytes, root: Path) -> bytes:
    return data.replace(f"{root}/".encode(), b"/")


def _materialise(sb: FakeSandbox, root: Path) -> dict[str, tuple[bytes, int]]:
    """Copy the task dirs out (text rewritten); link the mounts. Returns the copied files' bytes and modes."""
    before: dict[str, tuple[bytes, int]] = {}
    for top in TOPS:
        if not sb.is_dir(f"/{top}") or sb._host(f"/{top}") is not None:
            continue
        for rel, is_dir in sb.walk(f"/{top}"):
            path = f"/{top}/{rel}"
            target = root / top / rel
            if sb._host(path) is not None:
                continue  # a mount: linked below
            if is_dir:
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                before[path] = (sb.read_file(path), sb.modes.get(path, 0o644) | 0o600)
                target.write_bytes(_rewrite(before[path][0], root))
                target.chmod(before[path][1])
    for m in sb.spec.mounts:
        link = root / m.container_path.lstrip("/")
        if link.parts[len(root.parts)] in TOPS and not link.exists():
            link.parent.mkdir(parents=True, exist_ok=True)
            m.host_path.mkdir(parents=True, exist_ok=True)
            link.symlink_to(m.host_path, target_is_directory=True)
    return before


def _write_back(sb: FakeSandbox, root: Path, before: dict[str, tuple[bytes, int]]) -> None:
    seen: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if not (here / d).is_symlink()]
        for d in dirnames:
            sb.mkdir("/" + (here / d).relative_to(root).as_posix(), parents=True)
        for name in filenames:
            f = here / name
            if f.is_symlink():
                continue
            path = "/" + f.relative_to(root).as_posix()
            seen.add(path)
            now = (_unrewrite(f.read_bytes(), root), f.stat().st_mode & 0o777)
            if before.get(path) != now:
                sb.write_file(path, now[0], mode=now[1])
    for path in before.keys() - seen:
        if sb.is_file(path):
            sb.remove(path)


def host_bash(sb: FakeSandbox, call: FakeCall) -> ExecResult:
    root = Path(tempfile.mkdtemp(prefix="view-sb-"))
    try:
        before = _materialise(sb, root)
        cwd = root / call.cwd.lstrip("/") if _PATH.match(call.cwd) else root
        cwd.mkdir(parents=True, exist_ok=True)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(root), "LC_ALL": "C.UTF-8", **call.env}
        cmd = _rewrite(call.cmd.encode(), root).decode()
        try:
            res = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, timeout=30, check=False)
        except subprocess.TimeoutExpired:
            return ExecResult(exit_code=124, timed_out=True)
        _write_back(sb, root, before)
        return ExecResult(
            stdout=_unrewrite(res.stdout, root).decode(errors="replace"),
            stderr=_unrewrite(res.stderr, root).decode(errors="replace"),
            exit_code=res.returncode,
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


class ScriptedTasksBackend(FakeBackend):
    """``FakeBackend`` plus real bash for every command, and the images' ``COPY``'d files."""

    def __init__(self) -> None:
        super().__init__()
        self.image_files: dict[str, list[tuple[str, bytes, int]]] = {}  # tag -> (path, data, mode)
        self.register(r"^find / -xdev", lambda sb, call: ExecResult(stdout="aes-scan-status:0,0\n"))
        self.register(r"(?s).", host_bash)

    def build(self, spec: BuildSpec) -> str:
        tag = super().build(spec)
        dockerfile = (spec.context_dir / spec.dockerfile).read_text()
        workdir = (_WORKDIR.findall(dockerfile) or ["/"])[-1]
        files: list[tuple[str, bytes, int]] = []
        for src, dst in _COPY.findall(dockerfile):  # the build context is gone once build() returns
            target = dst if dst.startswith("/") else f"{workdir.rstrip('/')}/{dst}"
            source = spec.context_dir / src
            for f in sorted(source.rglob("*")) if source.is_dir() else [source]:
                path = f"{target.rstrip('/')}/{f.relative_to(source).as_posix()}" if source.is_dir() else target
                if f.is_file():
                    files.append((path, f.read_bytes(), f.stat().st_mode & 0o777))
        self.image_files[tag] = files
        return tag

    def create(self, spec: SandboxSpec) -> FakeSandbox:
        sb = super().create(spec)
        for path, data, mode in self.image_files.get(spec.image, []):
            sb.mkdir(path.rsplit("/", 1)[0] or "/", parents=True)
            sb.write_file(path, data, mode=mode)
        return sb
