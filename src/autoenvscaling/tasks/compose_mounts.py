"""Volumes and tmpfs mounts of docker-compose services, read as untrusted input (``tasks/compose.py`` calls these).

What runs: named volumes declared under the file's top-level ``volumes`` (each trial gets fresh ones of its own,
shared by the services that mount them), anonymous volumes (``- /path``: a fresh volume for that one container),
and tmpfs mounts (the ``tmpfs`` key, or ``type: tmpfs`` in ``volumes``) with ``size`` and ``mode`` only. What is
refused, by name: anything backed by the host (bind mounts, ``external`` volumes, volume drivers and their
options), a fixed engine-wide volume ``name`` (it would be shared between trials), and mount options we would not
honour. The sandbox layer creates, caps and removes the volumes (``sandbox/compose_sandbox.py``).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from autoenvscaling.tasks.compose import _Reader

MAX_MOUNTS = 16  # volumes and tmpfs mounts of one service
MAX_VOLUMES = 16  # volumes of one trial (declared and anonymous)
VOLUME_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$")
# Main's paths the harness owns: a volume there could be written by a service while the tests run (a tmpfs would be
# harmless, but one rule for every mount on main is simpler to state).
HARNESS_PATHS = ("/logs", "/tests", "/solution")
_SIZE = re.compile(r"^(\d+)\s*([kmgt]?)(i?b)?$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


class VolumeMount(BaseModel):
    """``source``: a volume of the trial (a declared name, or ``_<service>_<n>`` for an anonymous one)."""

    source: str
    target: str
    read_only: bool = False
    no_copy: bool = False  # do not copy the image's files at ``target`` into an empty volume


class TmpfsMount(BaseModel):
    target: str
    size_bytes: int | None = None  # None: the sandbox's cap (sandbox/volumes.py)
    mode: int | None = None  # permission bits; None: the engine's (1777)


def _bind_rule(source: str, read_only: bool) -> str | None:
    """Harbor 0.26's lint rule for a bind mount of ``source``."""
    if source.startswith(("/", "~")) or ".." in source.split("/"):
        return "compose-external-bind-mount"
    return None if read_only else "compose-writable-bind-mount"


def declared_volumes(r: _Reader, value: Any) -> set[str]:
    """The file's top-level ``volumes``: names of volumes each trial creates for itself (local driver, no options)."""
    if value is None:
        return set()
    if not isinstance(value, dict):
        r.problem("volumes", "expected a mapping of volume names")
        return set()
    names: set[str] = set()
    for name, body in value.items():
        key = f"volumes.{name}"
        if not VOLUME_NAME.fullmatch(str(name)):
            r.problem(key, "a volume name must be letters, digits, '_', '.' or '-'")
            continue
        body = body or {}
        if not isinstance(body, dict):
            r.problem(key, "expected a mapping")
            continue
        for sub, setting in body.items():
            why = _volume_setting(str(sub), setting)
            if why is not None:
                r.problem(f"{key}.{sub}", why)
        names.add(str(name))
    return names


def _volume_setting(sub: str, setting: Any) -> str | None:
    """Why a key of a top-level volume cannot run (None: it can)."""
    if sub == "external":
        return "an external volume lives outside the trial (on the host's engine): not supported" if setting else None
    if sub == "driver":
        return None if setting == "local" else "volume drivers are not chosen by tasks (the local driver only)"
    if sub == "driver_opts":
        return "driver options can mount host paths or devices: not supported"
    if sub == "name":
        return "a fixed engine-wide name would share the volume between trials; volumes are per trial here"
    if sub == "labels":
        return None  # metadata only; the harness labels its volumes itself
    return "not a volume key we run"


def target_path(r: _Reader, key: str, value: Any, service: str) -> str | None:
    """A container path to mount on: absolute, normalized, not ``/`` (nor, on main, a path the harness owns)."""
    if not isinstance(value, str) or not value.startswith("/"):
        r.problem(key, f"{value!r} is not an absolute container path")
        return None
    path = PurePosixPath(value)
    if ".." in path.parts or str(path) == "/" or "$" in value:
        r.problem(key, f"{value!r}: mount a volume on a plain directory path (no '..', not '/')")
        return None
    text = str(path)
    if service == "main" and any(text == h or text.startswith(h + "/") for h in HARNESS_PATHS):
        r.problem(key, f"{text!r} is the harness's (/logs, /tests, /solution): main mounts nothing there")
        return None
    return text


def service_volumes(
    r: _Reader, service: str, value: Any, declared: set[str]
) -> tuple[list[VolumeMount], list[TmpfsMount]]:
    """A service's ``volumes``: named and anonymous volumes, and ``type: tmpfs`` entries."""
    key = f"services.{service}.volumes"
    if not isinstance(value, list):
        r.problem(key, "expected a list of volume mounts")
        return [], []
    volumes: list[VolumeMount] = []
    tmpfs: list[TmpfsMount] = []
    for i, item in enumerate(value):
        ikey = f"{key}[{i}]"
        anonymous = f"_{service}_{i}"
        mount: VolumeMount | TmpfsMount | None
        if isinstance(item, str):
            mount = _short_volume(r, ikey, item, service, declared, anonymous)
        elif isinstance(item, dict):
            mount = _long_volume(r, ikey, item, service, declared, anonymous)
        else:
            r.problem(ikey, "expected SOURCE:TARGET[:MODE] or a mapping with type, source and target")
            continue
        if isinstance(mount, VolumeMount):
            volumes.append(mount)
        elif isinstance(mount, TmpfsMount):
            tmpfs.append(mount)
    return volumes, tmpfs


def _short_volume(
    r: _Reader, key: str, item: str, service: str, declared: set[str], anonymous: str
) -> VolumeMount | None:
    parts = item.split(":")
    if len(parts) > 3:
        r.problem(key, f"{item!r}: expected SOURCE:TARGET[:MODE]")
        return None
    if len(parts) == 1:
        source, target, mode = None, parts[0], ""
    else:
        source, target, mode = parts[0], parts[1], parts[2] if len(parts) == 3 else ""
    options = [o for o in mode.split(",") if o]
    read_only = "ro" in options
    if source is not None and source.startswith((".", "/", "~")):
        r.problem(key, f"{source!r} is a host path: sandboxes get no bind mounts", _bind_rule(source, read_only))
        return None
    for option in options:
        if option not in ("ro", "rw", "nocopy"):
            r.problem(key, f"mount option {option!r} is not run (ro, rw and nocopy only)")
            return None
    path = target_path(r, key, target, service)
    if source is not None and not _declared(r, key, source, declared):
        return None
    if path is None:
        return None
    return VolumeMount(source=source or anonymous, target=path, read_only=read_only, no_copy="nocopy" in options)


def _declared(r: _Reader, key: str, source: str, declared: set[str]) -> bool:
    if source in declared:
        return True
    r.problem(key, f"volume {source!r} is not declared in the file's top-level volumes")
    return False


def _long_volume(
    r: _Reader, key: str, item: dict[str, Any], service: str, declared: set[str], anonymous: str
) -> VolumeMount | TmpfsMount | None:
    kind = item.get("type", "volume")
    source = item.get("source")
    if kind == "bind":
        where = str(source or "")
        rule = _bind_rule(where, bool(item.get("read_only")))
        r.problem(f"{key}.type", f"bind mount of {where!r}: sandboxes get no bind mounts of host paths", rule)
        return None
    if kind not in ("volume", "tmpfs"):
        r.problem(f"{key}.type", f"{kind!r} mounts are not run (volume and tmpfs only)")
        return None
    allowed = {"type", "target", "read_only", "consistency"} | ({"source", "volume"} if kind == "volume" else {"tmpfs"})
    for sub in item:
        if sub not in allowed:
            r.problem(f"{key}.{sub}", f"not a key of a {kind} mount we run")
    path = target_path(r, f"{key}.target", item.get("target"), service)
    if kind == "tmpfs":
        if item.get("read_only"):
            r.problem(f"{key}.read_only", "a read-only tmpfs is not run")
        opts = item.get("tmpfs") or {}
        if not isinstance(opts, dict):
            r.problem(f"{key}.tmpfs", "expected a mapping with size and mode")
            return None
        for sub in opts:
            if sub not in ("size", "mode"):
                r.problem(f"{key}.tmpfs.{sub}", "tmpfs options other than size and mode are not run")
        size = size_bytes(r, f"{key}.tmpfs.size", opts["size"]) if "size" in opts else None
        mode = file_mode(r, f"{key}.tmpfs.mode", opts["mode"]) if "mode" in opts else None
        return None if path is None else TmpfsMount(target=path, size_bytes=size, mode=mode)
    options = item.get("volume") or {}
    if not isinstance(options, dict):
        r.problem(f"{key}.volume", "expected a mapping")
        options = {}
    for sub in options:
        if sub != "nocopy":
            r.problem(f"{key}.volume.{sub}", "volume options other than nocopy are not run")
    if source is not None and (not isinstance(source, str) or not _declared(r, f"{key}.source", source, declared)):
        return None
    if path is None:
        return None
    return VolumeMount(
        source=source or anonymous,
        target=path,
        read_only=item.get("read_only") is True,
        no_copy=options.get("nocopy") is True,
    )


def service_tmpfs(r: _Reader, service: str, value: Any) -> list[TmpfsMount]:
    """The ``tmpfs`` key: a path or a list of them, each ``/path[:size=...,mode=...]``."""
    key = f"services.{service}.tmpfs"
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        r.problem(key, "expected a path or a list of paths (/path[:size=64m,mode=1777])")
        return []
    mounts: list[TmpfsMount] = []
    for i, item in enumerate(items):
        ikey = f"{key}[{i}]" if isinstance(value, list) else key
        target, _, options = item.partition(":")
        size = mode = None
        for option in [o for o in options.split(",") if o]:
            name, sep, setting = option.partition("=")
            if name == "size" and sep:
                size = size_bytes(r, ikey, setting)
            elif name == "mode" and sep:
                mode = file_mode(r, ikey, setting)
            else:
                r.problem(ikey, f"tmpfs option {option!r} is not run (size and mode only)")
        path = target_path(r, ikey, target, service)
        if path is not None:
            mounts.append(TmpfsMount(target=path, size_bytes=size, mode=mode))
    return mounts


def size_bytes(r: _Reader, key: str, value: Any) -> int | None:
    """A size as compose and Docker write it: bytes, or a number with k, m, g or t (binary units)."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    match = _SIZE.fullmatch(str(value).strip())
    if match is None or int(match[1]) == 0:
        r.problem(key, f"not a size: {value!r} (use bytes, or 64m, 1g)")
        return None
    return int(match[1]) * _UNITS[match[2].lower()]


def file_mode(r: _Reader, key: str, value: Any) -> int | None:
    """Permission bits: a YAML number (``01777`` is octal, as compose reads it) or a string of octal digits."""
    if isinstance(value, int) and not isinstance(value, bool):
        mode: int | None = value
    elif isinstance(value, str) and re.fullmatch(r"[0-7]{1,5}", value.strip()):
        mode = int(value.strip(), 8)
    else:
        mode = None
    if mode is None or not 0 <= mode <= 0o7777:
        r.problem(key, f"not a file mode: {value!r} (octal, such as 1777 or 0755)")
        return None
    return mode


def check_mounts(r: _Reader, service: str, volumes: list[VolumeMount], tmpfs: list[TmpfsMount]) -> None:
    """At most ``MAX_MOUNTS`` per service, and one mount per path."""
    key = f"services.{service}"
    targets = [m.target for m in volumes] + [t.target for t in tmpfs]
    if len(targets) > MAX_MOUNTS:
        r.problem(f"{key}.volumes", f"{len(targets)} mounts: at most {MAX_MOUNTS} per service run here")
    for target in sorted({t for t in targets if targets.count(t) > 1}):
        r.problem(f"{key}.volumes", f"{target!r} is mounted more than once")
