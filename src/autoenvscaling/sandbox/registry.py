"""Sandbox backends by short name, with ``package.module:Class`` as the escape hatch."""

from __future__ import annotations

import importlib
import threading

from autoenvscaling.errors import UserInputError
from autoenvscaling.sandbox.base import SandboxBackend

BACKENDS = ("docker", "fake")


def get_backend(name: str) -> SandboxBackend:
    """A new backend: "docker", "fake", or "package.module:Class" (constructed without arguments)."""
    if name == "docker":
        from autoenvscaling.sandbox.docker import DockerBackend

        return DockerBackend()
    if name == "fake":
        from autoenvscaling.sandbox.fake import FakeBackend

        return FakeBackend()
    module_name, sep, attr = name.partition(":")
    if not sep or not module_name or not attr:
        raise UserInputError(f"unknown sandbox backend {name!r}: use {', '.join(BACKENDS)} or package.module:Class")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as e:
        raise UserInputError(f"cannot load sandbox backend {name!r}: {e}") from None
    backend: SandboxBackend = factory()
    return backend


_shared: dict[str, SandboxBackend] = {}
_shared_lock = threading.Lock()


def shared_backend(name: str) -> SandboxBackend:
    """One backend per name in this process: what the work of a remote executor (a Ray worker) runs on."""
    with _shared_lock:
        if name not in _shared:
            _shared[name] = get_backend(name)
        return _shared[name]
