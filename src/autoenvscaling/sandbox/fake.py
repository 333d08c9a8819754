"""An in-memory sandbox for tests: a dict filesystem and a tiny shell (see ``fake_shell``), no Docker.

Commands it does not know are scripted with handlers::

    fake = FakeBackend()
    fake.register(r"bash /tests/test\\.sh", lambda sb, call: sb.write_file("/logs/verifier/reward.txt", "1"))

A handler gets the sandbox and a ``FakeCall`` and returns an ``ExecResult`` (or None for success). Handlers
are tried (``re.search``) on the whole command first, then on each simple command. Paths under a mount live
on the host, as with Docker bind mounts, so files written there appear on the host.
"""

from __future__ import annotations

import posixpath
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

from autoenvscaling.images.catalog import catalog_names
from autoenvscaling.sandbox import fake_shell as fs
from autoenvscaling.sandbox.base import (
    DEFAULT_OUTPUT_LIMIT,
    BuildError,
    BuildSpec,
    ExecResult,
    SandboxError,
    SandboxSpec,
)
from autoenvscaling.sandbox.fake_builtins import BUILTINS
from autoenvscaling.sandbox.fake_files import FakeFiles
from autoenvscaling.sandbox.framing import HeadTail


@dataclass
class FakeCall:
    cmd: str  # the text the pattern matched against
    match: re.Match[str]
    env: dict[str, str]
    cwd: str
    user: str | None


Handler = Callable[["FakeSandbox", FakeCall], ExecResult | None]


class FakeBackend:
    name = "fake"

    def __init__(self, images: list[str] | None = None) -> None:
        self.images: set[str] = set(catalog_names() if images is None else images)
        self.handlers: list[tuple[re.Pattern[str], Handler]] = [
            # The verifier's process bookkeeping (verify/processes.py): the fake runs no processes to end.
            (re.compile(r"^read -r __up __idle"), lambda sb, call: ExecResult(stdout="aes-uptime:0\n")),
            (re.compile(r"^# aes:end-agent-processes"), lambda sb, call: None),
        ]
        self.sandboxes: list[FakeSandbox] = []
        self.builds: list[BuildSpec] = []

    def register(self, pattern: str, handler: Handler) -> None:
        """Script commands matching ``pattern`` (a regex, searched) in every sandbox of this backend."""
        self.handlers.append((re.compile(pattern), handler))

    def build(self, spec: BuildSpec) -> str:
        if not (spec.context_dir / spec.dockerfile).is_file():
            raise BuildError(f"no {spec.dockerfile} in {spec.context_dir}")
        self.builds.append(spec)
        self.images.add(spec.tag)
        return spec.tag

    def image_exists(self, ref: str) -> bool:
        return ref in self.images

    def create(self, spec: SandboxSpec) -> FakeSandbox:
        if spec.services:  # a network of containers is beyond an in-memory shell; the docker backend runs them
            names = ", ".join(s.name for s in spec.services)
            raise SandboxError(f"the fake sandbox runs no multi-container tasks (services: {names}); use docker")
        if spec.volumes or spec.volume_mounts or spec.tmpfs:  # mounts it could not honour: refused, not skipped
            raise SandboxError("the fake sandbox runs no compose volumes or tmpfs mounts; use docker")
        sb = FakeSandbox(spec, self)
        self.sandboxes.append(sb)
        return sb

    def runs_own_processes(self, spec: SandboxSpec) -> bool:
        """A fake image starts nothing of its own (and the fake runs no services)."""
        return bool(spec.services)

    def cleanup(self, run_id: str | None = None, *, include_live: bool = False) -> int:
        left = [s for s in self.sandboxes if s.running and (run_id is None or s.spec.run_id == run_id)]
        for s in left if include_live else []:
            s.stop()
        return len(left) if include_live else 0


class FakeSandbox(FakeFiles):
    def __init__(self, spec: SandboxSpec, backend: FakeBackend) -> None:
        super().__init__(spec.mounts)
        self.spec = spec
        self.backend = backend
        self.running = False
        self.stopped = False
        self.calls: list[str] = []  # every command exec'd, for assertions
        self._lock = threading.Lock()
        self.workdir = spec.workdir or "/"

    @property
    def id(self) -> str:
        return f"fake-{id(self):x}"

    def start(self) -> None:
        if self.stopped:
            raise SandboxError("sandbox was stopped; create a new one")
        if not self.backend.image_exists(self.spec.image):
            raise SandboxError(f"image {self.spec.image} not found")
        net = ["/sys/class/net/lo", *(["/sys/class/net/eth0"] if self.spec.network else [])]
        for m in self.spec.mounts:
            m.host_path.mkdir(parents=True, exist_ok=True)  # as `docker run -v` does
        for d in ["/tmp", self.workdir, *net, *(posixpath.dirname(m.container_path) for m in self.spec.mounts)]:
            self.mkdir(d, parents=True)
        self.running = True

    def stop(self) -> None:
        self.running, self.stopped = False, True

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _check(self) -> None:
        if not self.running:
            raise SandboxError("sandbox is stopped" if self.stopped else "sandbox is not started")

    # -- exec ----------------------------------------------------------------------------------------------
    def exec(
        self,
        cmd: str,
        *,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        user: str | None = None,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
    ) -> ExecResult:
        with self._lock:
            self._check()
            self.calls.append(cmd)
            run = _Run(self, {**self.spec.env, **(env or {})}, cwd or self.workdir, user, timeout)
            return run.execute(cmd, output_limit)

    def disconnect_network(self) -> None:
        self._check()
        self.spec = self.spec.model_copy(update={"network": False})
        self.remove("/sys/class/net/eth0", recursive=True)

    def upload(self, src: Path, dst: str) -> None:
        self._check()
        self.copy_in(src, dst)

    def upload_text(self, content: str | bytes, dst: str, mode: int = 0o644) -> None:
        self._check()
        self.mkdir(posixpath.dirname(dst) or "/", parents=True)
        self.write_file(dst, content, mode=mode)

    def download(self, src: str, dst: Path) -> None:
        self._check()
        self.copy_out(src, dst)


class _Run:
    """One exec: its environment, cwd, output and deadline."""

    def __init__(self, sb: FakeSandbox, env: dict[str, str], cwd: str, user: str | None, timeout: float | None) -> None:
        self.sb, self.env, self.cwd, self.user = sb, env, cwd, user
        self.deadline = time.monotonic() + timeout if timeout else None
        self.out: list[str] = []
        self.err: list[str] = []
        self.status = 0

    def execute(self, cmd: str, limit: int) -> ExecResult:
        t0, code, timed_out = time.monotonic(), 0, False
        try:
            if not self.sb.is_dir(self.cwd):
                raise fs.ShellExit(self._fail(f"cd: {self.cwd}: No such file or directory"))
            handled = self._handler(cmd, self.out, self.err)
            code = handled if handled is not None else self._script(cmd)
        except fs.ShellExit as e:
            code = e.code
        except fs.ShellTimeout:
            code, timed_out = 124, True
        except fs.FakeSyntaxError as e:
            code = self._fail(f"syntax error: {e}", 2)
        outs = [HeadTail(limit), HeadTail(limit)]
        for buf, parts in zip(outs, (self.out, self.err), strict=True):
            buf.add("".join(parts).encode())
        return ExecResult(
            stdout=outs[0].value(),
            stderr=outs[1].value(),
            exit_code=code,
            duration_sec=time.monotonic() - t0,
            timed_out=timed_out,
            truncated=outs[0].truncated or outs[1].truncated,
        )

    def _fail(self, message: str, code: int = 1) -> int:
        self.err.append(f"bash: {message}\n")
        return code

    def _handler(self, text: str, out: list[str], err: list[str]) -> int | None:
        for pattern, handler in self.sb.backend.handlers:
            if m := pattern.search(text):
                res = handler(self.sb, FakeCall(text, m, dict(self.env), self.cwd, self.user)) or ExecResult()
                out.append(res.stdout)
                err.append(res.stderr)
                if res.timed_out:
                    raise fs.ShellTimeout
                return res.exit_code
        return None

    def _script(self, cmd: str) -> int:
        for connector, tokens in fs.split(fs.tokenize(cmd)):
            if (connector == "&&" and self.status != 0) or (connector == "||" and self.status == 0):
                continue
            self.status = self._simple(fs.parse_simple(tokens, self.env))
        return self.status

    def _simple(self, s: fs.Simple) -> int:
        if s.unsupported:
            return self._fail(f"fake sandbox: operator {s.unsupported!r} is not supported", 127)
        out: list[str] = []
        err: list[str] = []
        code = self._handler(" ".join(s.words), out, err)
        if code is None:
            code = self._builtin(s.words, out, err)
        text_out, text_err = "".join(out), "".join(err)
        if s.stdout_to_stderr:
            text_out, text_err = "", text_err + text_out
        if s.stderr_to_stdout:
            text_out, text_err = text_out + text_err, ""
        try:
            if s.stdout_file is not None:
                self._redirect(s.stdout_file, text_out, s.stdout_append)
                text_out = ""
            if s.stderr_file is not None:
                self._redirect(s.stderr_file, text_err, False)
                text_err = ""
        except SandboxError as e:
            return self._fail(str(e))
        self.out.append(text_out)
        self.err.append(text_err)
        return code

    def _redirect(self, path: str, text: str, append: bool) -> None:
        if path != "/dev/null":
            self.sb.write_file(self.abs(path), text, append=append)

    def abs(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(self.cwd, path))

    def _builtin(self, words: list[str], out: list[str], err: list[str]) -> int:
        if not words:
            return 0
        fn = BUILTINS.get(words[0])
        if fn is None:
            err.append(f"bash: {words[0]}: command not found\n")
            return 127
        return fn(self, words[1:], out, err)
