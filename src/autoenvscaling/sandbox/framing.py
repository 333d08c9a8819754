"""Byte-level helpers of the persistent shell: quoting, output caps, docker stream demultiplexing, markers.

Kept apart from ``shell.py`` so they can be tested without a container.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Mapping

from autoenvscaling.sandbox.base import SandboxError

# \x1e TOKEN : kind \x1e  with kind = s (start) | p:PID (the command's process group) | e[:CODE] (end)
MARKER = re.compile(rb"\x1e([0-9a-f]{16}):(s|p:(\d+)|e(?::(\d+))?)\x1e")
_MARKER_KEEP = 64  # longer than any marker, so a marker split across reads is still found
_UNSAFE = re.compile(r"[^\x20-\x26\x28-\x5b\x5d-\x7e]")  # outside printable ASCII, or ' or \
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def ansi_c_quote(data: bytes | str) -> str:
    """Quote bytes as one bash ``$'...'`` word of printable ASCII (NUL bytes, which bash cannot hold, are dropped).

    No raw newline survives, so the word fits on the single line the shell reads per command.
    """
    raw = data.encode("utf-8", errors="surrogateescape") if isinstance(data, str) else data
    text = raw.replace(b"\0", b"").decode("latin-1")
    return "$'" + _UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}", text) + "'"


def prelude(env: Mapping[str, str] | None, cwd: str | None) -> str:
    """Commands run in the command's subshell before it (``cd``, then exports), each ending in ``;``."""
    parts = []
    if cwd:
        parts.append(f"cd -- {ansi_c_quote(cwd)} || exit 1;")
    for key, value in (env or {}).items():
        if not _ENV_NAME.fullmatch(key):
            raise SandboxError(f"invalid environment variable name: {key!r}")
        parts.append(f"export {key}={ansi_c_quote(value)};")
    return " ".join(parts)


class HeadTail:
    """Keeps the first and last bytes of a stream that may exceed ``limit``; counts what it drops."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 0)
        self.head_cap = self.limit - self.limit // 2
        self.tail_cap = self.limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes | bytearray) -> None:
        self.total += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data and self.tail_cap:
            self.tail += data
            if len(self.tail) > 2 * self.tail_cap + 65536:  # trim now and then, not on every add
                del self.tail[: -self.tail_cap]

    @property
    def truncated(self) -> bool:
        return self.total > self.limit

    def value(self) -> str:
        if not self.truncated:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", errors="replace")
        tail = bytes(self.tail[-self.tail_cap :]) if self.tail_cap else b""
        dropped = self.total - len(self.head) - len(tail)
        note = f"\n[... {dropped} bytes of output omitted ...]\n".encode()
        return (bytes(self.head) + note + tail).decode("utf-8", errors="replace")


class StreamCollector:
    """Splits one demultiplexed stream at one call's markers; keeps what lies between its start and end."""

    def __init__(self, token: str, limit: int) -> None:
        self.token = token.encode()
        self.out = HeadTail(limit)
        self.pending = bytearray()
        self.started = False
        self.ended = False
        self.pid: int | None = None
        self.exit_code: int | None = None

    def feed(self, data: bytes) -> None:
        self.pending += data
        while not self.ended:
            m = MARKER.search(self.pending)
            if m is None:
                keep = len(self.pending) - _MARKER_KEEP
                if keep > 0:
                    self._emit(self.pending[:keep])
                    del self.pending[:keep]
                return
            token, kind, pid, code = m.groups()  # read them before the buffer changes under the match
            self._emit(self.pending[: m.start()])
            del self.pending[: m.end()]
            if token != self.token:
                continue  # a marker of an abandoned earlier call
            if kind == b"s":
                self.started = True
            elif pid is not None:
                self.pid = int(pid)
            else:
                self.ended = True
                self.exit_code = int(code) if code is not None else None
        self.pending.clear()  # anything after our end marker is stray output of background jobs

    def _emit(self, data: bytes | bytearray) -> None:
        if self.started and data:
            self.out.add(data)

    def flush(self) -> None:
        """The stream stopped early (timeout, dead shell): keep what was pending."""
        if not self.ended:
            self._emit(self.pending)
        self.pending.clear()


class Demuxer:
    """Docker's attach stream without a tty: frames of [stream(1) 0 0 0 size(4, big-endian)] + payload."""

    def __init__(self) -> None:
        self._rx = bytearray()

    def reset(self) -> None:
        self._rx.clear()

    def frames(self, chunk: bytes) -> list[tuple[int, bytes]]:
        """Complete frames in ``chunk`` (plus what was left over); stream 1 is stdout, 2 stderr."""
        self._rx += chunk
        frames = []
        while len(self._rx) >= 8:
            stream, size = self._rx[0], struct.unpack(">I", self._rx[4:8])[0]
            if len(self._rx) < 8 + size:
                break
            frames.append((stream, bytes(self._rx[8 : 8 + size])))
            del self._rx[: 8 + size]
        return frames
