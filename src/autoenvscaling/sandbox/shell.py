"""One long-lived bash per container (and user): the fast command channel of the docker backend.

``docker exec`` costs 60-140 ms per command (an HTTP round trip plus a process start in the daemon). Instead we
exec one ``bash`` with stdin attached, running a read-eval loop, and send it one line per command (``_WRAPPER``):

* the command travels ANSI-C quoted (``$'...'``, every byte outside printable ASCII as ``\\xHH``), so any bytes,
  quotes and heredocs arrive intact and no tool beyond bash is needed in the image;
* it runs in a forked subshell, a child bash: ``exit 3`` ends only the child, and the per-call ``cd`` and exports
  die with it, so nothing leaks into later calls. (A fresh ``bash -c`` would cost ~3 ms more per call; the
  visible difference is that ``$$`` is the persistent shell's pid. ``$BASHPID`` is the command's.);
* the loop runs with job control on, so the subshell leads its own process group: a timeout kills the group
  (``kill -KILL -- -PGID`` from a separate ``docker exec``) and the shell stays usable;
* the shell prints markers ``\\x1e TOKEN : kind \\x1e`` on stdout and stderr around the command (start, the
  group's pid, end with the exit code). The token is random per call; each marker is one small write, so it
  arrives whole even when the command's output interleaves with it.
"""

from __future__ import annotations

import contextlib
import re
import secrets
import socket
import time
from collections.abc import Callable, Mapping
from typing import Any

from autoenvscaling.sandbox.base import ExecResult, ImageUnusableError, SandboxError
from autoenvscaling.sandbox.framing import Demuxer, StreamCollector, ansi_c_quote, prelude

TIMEOUT_EXIT_CODE = 124  # what `timeout(1)` returns; the command's own code is meaningless after a kill
KILLED_EXIT_CODE = 137
_DIED_NOTE = "\n[the shell running this command was killed; a new one will run the next command]\n"
_KILL_GRACE_SEC = 5.0  # after a kill, how long we wait for the shell to report the end
_START_TIMEOUT_SEC = 30.0
_READY = re.compile(rb"\x1eaes:ready:(\d+)\x1e")  # the shell's pid in the container follows "ready"
_NO_BASH = re.compile(
    r'executable file not found|exec: "[^"]*": (stat [^:]*: )?no such file or directory|unable to find user',
    re.IGNORECASE,
)

# A read-eval loop under `bash -c`: error messages then read "bash: line N: ..." with the command's own line
# numbers, as they would under `bash -c CMD`. `set -m` gives each background job its own process group.
SHELL_ARGV = [
    "bash",
    "--noprofile",
    "--norc",
    "-c",
    "set -m; printf '\\036aes:ready:%d\\036' $$; while IFS= read -r __aes_line; do eval \"$__aes_line\"; done",
]
# `set +m` inside keeps the command's own background jobs in its group; `{ wait; } 2>/dev/null` hides bash's
# "Killed" job notice after a timeout. The command runs in a freshly exec'd bash, not in a fork of the loop: a
# fork would carry this call's token in its memory, and a command that read it could print a forged end marker
# (a false exit status, or an early "end" that escapes its own timeout). The script reaches the new bash on fd 3
# (a here-string), not in argv, which holds at most 128 KiB per string.
_WRAPPER = (
    "printf '\\036{t}:s\\036'; printf '\\036{t}:s\\036' >&2; "
    "( set +m; {prelude} exec bash --noprofile --norc -c {runner} 3<<<{script} ) </dev/null & __aes_pid=$!; "
    "printf '\\036{t}:p:%d\\036' $__aes_pid >&2; {{ wait $__aes_pid; }} 2>/dev/null; __aes_rc=$?; "
    "printf '\\036{t}:e:%d\\036' $__aes_rc; printf '\\036{t}:e\\036' >&2\n"
)


_RUNNER = ansi_c_quote('IFS= read -r -d "" __aes_cmd <&3; exec 3<&-; eval "$__aes_cmd"')


class ShellDiedError(SandboxError):
    """The persistent shell went away. ``partial`` is what the command printed, if it had started."""

    def __init__(self, message: str, started: bool, partial: ExecResult | None = None) -> None:
        super().__init__(message)
        self.started = started
        self.partial = partial


def _result(
    out: StreamCollector, err: StreamCollector, code: int, t0: float, *, timed_out: bool, note: str = ""
) -> ExecResult:
    out.flush()
    err.flush()
    return ExecResult(
        stdout=out.out.value(),
        stderr=err.out.value() + note,
        exit_code=code,
        duration_sec=time.monotonic() - t0,
        timed_out=timed_out,
        truncated=out.out.truncated or err.out.truncated,
    )


class BashShell:
    """A persistent ``bash`` in one container, as one user. Not thread-safe: the sandbox serialises calls."""

    def __init__(self, api: Any, container_id: str, user: str | None = None) -> None:
        self._api = api  # docker.APIClient; its low-level API is untyped
        self._container_id = container_id
        self._user = user
        self._sock: socket.socket | None = None
        self._raw: Any = None  # what exec_start returned (a SocketIO over _sock): closed with it
        self._exec_id: str | None = None
        self._demux = Demuxer()
        self.pid: int | None = None  # the shell's pid in the container, once started

    # -- lifecycle ---------------------------------------------------------------------------------------
    def start(self) -> None:
        # On a loaded engine the first exec into a just-started container now and then gets its stream closed
        # before bash prints anything; a second exec works. Two more tries before calling it an error.
        for attempt in range(3):
            try:
                self._start_once()
                return
            except ImageUnusableError:
                raise
            except SandboxError:
                if attempt == 2:
                    raise
                time.sleep(0.5 * (attempt + 1))

    def _start_once(self) -> None:
        exec_id = self._api.exec_create(
            self._container_id, SHELL_ARGV, stdin=True, stdout=True, stderr=True, tty=False, user=self._user or ""
        )["Id"]
        self._exec_id = exec_id
        raw = self._api.exec_start(exec_id, socket=True)
        # docker-py hands back a SocketIO over the connection; we need the socket for sendall/timeouts. Nothing
        # can sit in the HTTP layer's read buffer yet: the shell prints only after it starts, below.
        self._raw = raw
        self._sock = getattr(raw, "_sock", raw)
        self._demux.reset()
        seen = bytearray()
        deadline = time.monotonic() + _START_TIMEOUT_SEC
        while (ready := _READY.search(seen)) is None:
            try:
                chunk = self._recv(deadline)
            except TimeoutError:
                chunk = b""
            if not chunk:
                self.close()
                text = seen.decode(errors="replace").strip() or "no output"
                if _NO_BASH.search(text):
                    raise ImageUnusableError(f"the image cannot run bash (every sandbox needs it): {text}")
                raise SandboxError(f"could not start bash in container {self._container_id[:12]}: {text}")
            seen += b"".join(payload for _, payload in self._demux.frames(chunk))
        self.pid = int(ready.group(1))

    @property
    def alive(self) -> bool:
        return self._sock is not None

    def interrupt(self) -> None:
        """Wake a reader blocked on the socket; safe to call from another thread."""
        sock = self._sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.interrupt()
        sock, self._sock = self._sock, None
        raw, self._raw = self._raw, None
        if raw is not None and raw is not sock:
            raw.close()
        if sock is not None:
            sock.close()

    # -- one command ---------------------------------------------------------------------------------------
    def run(
        self,
        cmd: str,
        *,
        timeout: float | None,
        env: Mapping[str, str] | None,
        cwd: str | None,
        output_limit: int,
        is_running: Callable[[], bool],
    ) -> ExecResult:
        """Run ``cmd``, restarting a dead shell once. ``is_running`` tells a dead shell from a gone container."""
        for attempt in (1, 2):
            if not self.alive:
                self.start()
            try:
                return self._run_once(cmd, timeout, env, cwd, output_limit)
            except ShellDiedError as e:
                self.close()
                if not is_running():
                    raise SandboxError(f"container {self._container_id[:12]} is no longer running") from None
                if e.partial is not None:
                    if self._shell_still_runs():
                        # The stream broke, not the shell: the command's outcome is unknown. An error, never
                        # a made-up exit status (which would read as the task's failure).
                        raise SandboxError(
                            f"lost the output stream of the shell in {self._container_id[:12]} while it still ran"
                        ) from None
                    return e.partial  # the command killed our shell (`pkill bash`): it failed, we did not
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _run_once(
        self, cmd: str, timeout: float | None, env: Mapping[str, str] | None, cwd: str | None, limit: int
    ) -> ExecResult:
        token = secrets.token_hex(8)
        out, err = StreamCollector(token, limit), StreamCollector(token, limit)
        line = _WRAPPER.format(t=token, prelude=prelude(env, cwd), runner=_RUNNER, script=ansi_c_quote(cmd))
        t0 = time.monotonic()
        try:
            self._send(line.encode("ascii"))
        except OSError as e:
            raise ShellDiedError(f"the shell's stdin is closed: {e}", started=False) from None
        deadline = None if timeout is None or timeout <= 0 else t0 + timeout
        timed_out = False
        try:
            timed_out = self._pump(out, err, deadline)
            if timed_out:
                self._kill(err.pid)
                if self._pump(out, err, time.monotonic() + _KILL_GRACE_SEC):
                    self.close()  # the shell itself is stuck: drop it, the next call starts a new one
        except ShellDiedError as e:
            if not (out.started or err.started):
                raise
            e.partial = _result(out, err, KILLED_EXIT_CODE, t0, timed_out=timed_out, note=_DIED_NOTE)
            raise
        code = TIMEOUT_EXIT_CODE if timed_out else out.exit_code if out.exit_code is not None else -1
        return _result(out, err, code, t0, timed_out=timed_out)

    def _pump(self, out: StreamCollector, err: StreamCollector, deadline: float | None) -> bool:
        """Read until both end markers arrived; True if the deadline passed first."""
        while not (out.ended and err.ended):
            if deadline is not None and time.monotonic() >= deadline:
                return True
            try:
                chunk = self._recv(deadline)
            except TimeoutError:
                continue
            if not chunk:
                raise ShellDiedError("the shell's output stream closed", started=out.started or err.started)
            for stream, payload in self._demux.frames(chunk):
                (err if stream == 2 else out).feed(payload)
        return False

    def _shell_still_runs(self) -> bool:
        if self._exec_id is None:
            return False
        for _ in range(10):  # the engine notices a killed process a moment after its stream closes
            try:
                if not self._api.exec_inspect(self._exec_id)["Running"]:
                    return False
            except Exception:
                return False
            time.sleep(0.05)
        return True

    def _kill(self, pgid: int | None) -> None:
        """Kill a process group from outside: the shell itself is blocked in ``wait``."""
        if pgid is None:
            return
        script = f"kill -KILL -- -{pgid} 2>/dev/null || kill -KILL {pgid} 2>/dev/null; true"
        try:
            exec_id = self._api.exec_create(self._container_id, ["bash", "-c", script], user="0")["Id"]
            self._api.exec_start(exec_id)
        except Exception:  # best effort: the container may be gone, which the caller finds out next
            pass

    # -- socket --------------------------------------------------------------------------------------------
    def _send(self, data: bytes) -> None:
        if self._sock is None:
            raise OSError("shell closed")
        self._sock.settimeout(60.0)
        self._sock.sendall(data)

    def _recv(self, deadline: float | None) -> bytes:
        """One read; b"" on EOF; TimeoutError when ``deadline`` passes first."""
        sock = self._sock
        if sock is None:
            return b""
        sock.settimeout(None if deadline is None else max(deadline - time.monotonic(), 0.001))
        try:
            return sock.recv(1 << 16)
        except TimeoutError:
            raise
        except OSError:
            return b""
