"""The fake sandbox's filesystem: a dict of files and a set of directories, plus host-backed bind mounts."""

from __future__ import annotations

import posixpath
import shutil
from collections.abc import Iterator
from pathlib import Path

from autoenvscaling.sandbox.base import Mount, SandboxError


def norm(path: str) -> str:
    if not path.startswith("/"):
        raise SandboxError(f"not an absolute path: {path!r}")
    return posixpath.normpath(path).replace("//", "/")


class FakeFiles:
    def __init__(self, mounts: list[Mount]) -> None:
        self.files: dict[str, bytes] = {}
        self.modes: dict[str, int] = {}
        self.dirs: set[str] = {"/"}
        # longest container path first, so nested mounts win
        self._mounts = sorted(mounts, key=lambda m: len(m.container_path), reverse=True)

    def _host(self, path: str, write: bool = False) -> Path | None:
        """The host path behind ``path`` if it lies under a mount."""
        for m in self._mounts:
            root = norm(m.container_path)
            if path == root or path.startswith(root.rstrip("/") + "/"):
                if write and m.read_only:
                    raise SandboxError(f"{path}: Read-only file system")
                return m.host_path / posixpath.relpath(path, root)
        return None

    def is_dir(self, path: str) -> bool:
        path = norm(path)
        host = self._host(path)
        return host.is_dir() if host is not None else path in self.dirs

    def is_file(self, path: str) -> bool:
        path = norm(path)
        host = self._host(path)
        return host.is_file() if host is not None else path in self.files

    def exists(self, path: str) -> bool:
        return self.is_dir(path) or self.is_file(path)

    def read_file(self, path: str) -> bytes:
        path = norm(path)
        host = self._host(path)
        if host is not None and host.is_file():
            return host.read_bytes()
        if path not in self.files:
            raise SandboxError(f"{path}: No such file or directory")
        return self.files[path]

    def write_file(self, path: str, data: str | bytes, *, append: bool = False, mode: int = 0o644) -> None:
        path = norm(path)
        raw = data.encode() if isinstance(data, str) else data
        if not self.is_dir(posixpath.dirname(path)):
            raise SandboxError(f"{path}: No such file or directory")
        if self.is_dir(path):
            raise SandboxError(f"{path}: Is a directory")
        host = self._host(path, write=True)
        if host is not None:
            with host.open("ab" if append else "wb") as f:
                f.write(raw)
            host.chmod(mode)
            return
        self.files[path] = (self.files.get(path, b"") if append else b"") + raw
        self.modes[path] = mode

    def mkdir(self, path: str, *, parents: bool = False) -> None:
        path = norm(path)
        if self.is_dir(path) and parents:
            return
        if self.exists(path):
            raise SandboxError(f"{path}: File exists")
        parent = posixpath.dirname(path)
        if not self.is_dir(parent):
            if not parents:
                raise SandboxError(f"{path}: No such file or directory")
            self.mkdir(parent, parents=True)
        host = self._host(path, write=True)
        if host is not None:
            host.mkdir(parents=True, exist_ok=True)
        else:
            self.dirs.add(path)

    def remove(self, path: str, *, recursive: bool = False) -> None:
        path = norm(path)
        host = self._host(path, write=True)
        if host is not None:
            if host.is_dir() and not recursive:
                raise SandboxError(f"{path}: Is a directory")
            if host.is_dir():
                shutil.rmtree(host)
            else:
                host.unlink(missing_ok=True)
            return
        if path in self.dirs:
            if not recursive:
                raise SandboxError(f"{path}: Is a directory")
            inside = [p for p in [*self.files, *self.dirs] if p.startswith(path.rstrip("/") + "/")]
            for p in inside:
                self.files.pop(p, None)
                self.dirs.discard(p)
            self.dirs.discard(path)
        self.files.pop(path, None)

    def walk(self, path: str) -> Iterator[tuple[str, bool]]:
        """(relative path, is_dir) of everything below the directory ``path``."""
        path = norm(path)
        host = self._host(path)
        if host is not None:
            for p in sorted(host.rglob("*")):
                yield p.relative_to(host).as_posix(), p.is_dir()
            return
        prefix = path.rstrip("/") + "/"
        for d in sorted(self.dirs):
            if d.startswith(prefix):
                yield d[len(prefix) :], True
        for f in sorted(self.files):
            if f.startswith(prefix):
                yield f[len(prefix) :], False

    def copy_in(self, src: Path, dst: str) -> None:
        if not src.exists():
            raise SandboxError(f"cannot upload {src}: no such file or directory")
        if not src.is_dir():
            dst = dst + src.name if dst.endswith("/") else dst
            self.mkdir(posixpath.dirname(norm(dst)), parents=True)
            self.write_file(dst, src.read_bytes(), mode=src.stat().st_mode & 0o777)
            return
        self.mkdir(dst, parents=True)
        for p in sorted(src.rglob("*")):
            target = posixpath.join(dst, p.relative_to(src).as_posix())
            if p.is_dir():
                self.mkdir(target, parents=True)
            else:
                self.write_file(target, p.read_bytes(), mode=p.stat().st_mode & 0o777)

    def copy_out(self, src: str, dst: Path) -> None:
        if self.is_file(src):
            dst = dst / posixpath.basename(src) if dst.is_dir() else dst
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(self.read_file(src))
            return
        if not self.is_dir(src):
            raise SandboxError(f"cannot download {src}: no such file")
        dst.mkdir(parents=True, exist_ok=True)
        for rel, is_dir in self.walk(src):
            if is_dir:
                (dst / rel).mkdir(parents=True, exist_ok=True)
            else:
                (dst / rel).parent.mkdir(parents=True, exist_ok=True)
                (dst / rel).write_bytes(self.read_file(posixpath.join(src, rel)))
