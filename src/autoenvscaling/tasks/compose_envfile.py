"""``env_file`` of docker-compose services: files inside the task's ``environment/`` dir, read as untrusted input.

A file is named relative to ``environment/`` (where the compose file lies) and must stay inside it after symbolic
links; each is at most ``MAX_ENV_FILE_BYTES``. Lines are read as compose reads them: ``KEY=VALUE`` (or
``KEY: VALUE``), an optional ``export``, ``#`` comments (inline ones after a space), single quotes literal,
double quotes with ``\\n`` / ``\\r`` / ``\\t`` and backslash escapes. Host variables never reach a task: a bare
``KEY`` (compose takes its value from the host) and any ``$`` but ``$$`` (a ``$``) outside single quotes are
refused. Later files win over earlier ones, and the service's ``environment`` over all of them.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from autoenvscaling.tasks.compose import _Reader

MAX_ENV_FILE_BYTES = 64 * 1024
MAX_ENV_FILES = 8
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}


def env_files(r: _Reader, service: str, value: Any, env_dir: Path | None) -> dict[str, str]:
    """The variables of a service's ``env_file`` (a path, or a list of paths or ``{path, required}``)."""
    key = f"services.{service}.env_file"
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or len(items) > MAX_ENV_FILES:
        r.problem(key, f"expected a path or a list of at most {MAX_ENV_FILES} paths")
        return {}
    env: dict[str, str] = {}
    for i, item in enumerate(items):
        ikey = f"{key}[{i}]" if isinstance(value, list) else key
        required = True
        if isinstance(item, dict):
            for sub in item:
                if sub not in ("path", "required"):
                    r.problem(f"{ikey}.{sub}", "not an env_file key we run (path and required only)")
            required = item.get("required", True) is not False
            item = item.get("path")
        if not isinstance(item, str) or not item:
            r.problem(ikey, "expected a path inside the task's environment dir")
            continue
        text = _read(r, ikey, item, env_dir, required)
        if text is not None:
            env.update(parse_env_file(r, ikey, text))
    return env


def _read(r: _Reader, key: str, rel: str, env_dir: Path | None, required: bool) -> str | None:
    path = PurePosixPath(rel)
    if path.is_absolute() or ".." in path.parts or rel.startswith("~") or "$" in rel:
        r.problem(key, f"{rel!r} leaves the task's environment dir: only files inside it are read")
        return None
    if env_dir is None:
        r.problem(key, "env files are read from the task's environment dir (none given)")
        return None
    root = env_dir.resolve()
    file = (env_dir / rel).resolve()
    if root not in file.parents:
        r.problem(key, f"{rel!r} resolves outside the task's environment dir (a symbolic link)")
        return None
    if not file.exists():
        if required:
            r.problem(key, f"{rel!r} does not exist in the task's environment dir")
        return None
    try:
        if not file.is_file():
            r.problem(key, f"{rel!r} is not a file")
            return None
        if file.stat().st_size > MAX_ENV_FILE_BYTES:
            r.problem(key, f"{rel!r} is larger than {MAX_ENV_FILE_BYTES // 1024} KiB")
            return None
        with file.open("rb") as f:
            data = f.read(MAX_ENV_FILE_BYTES + 1)
        return data[: MAX_ENV_FILE_BYTES + 1].decode("utf-8").removeprefix("\ufeff")
    except (OSError, UnicodeDecodeError) as e:
        r.problem(key, f"{rel!r} is unreadable: {e}")
        return None


def parse_env_file(r: _Reader, key: str, text: str) -> dict[str, str]:
    """``KEY=VALUE`` lines as compose reads them; a problem (naming the line) for anything taken from the host."""
    env: dict[str, str] = {}
    pos = counted = 0
    line = 1
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        line, counted = line + text.count("\n", counted, pos), pos
        where = f"{key} line {line}"
        body = text[pos:end].strip()
        if not body or body.startswith("#"):
            pos = end + 1
            continue
        start = text.index(body, pos)  # the first non-blank character of the line
        if export := re.match(r"export\s+", body):
            start, body = start + export.end(), body[export.end() :]
        match = _KEY.match(body)
        after = body[match.end() :] if match else ""
        if match is None or not after.strip() or after.lstrip()[0] not in "=:":
            if match is not None and not after.strip():
                r.problem(where, "a variable without a value is taken from the host: not supported")
            else:
                r.problem(where, f"expected KEY=VALUE, got {body[:60]!r}")
            pos = end + 1
            continue
        value_start = start + match.end() + (len(after) - len(after.lstrip())) + 1
        value, pos = _value(r, where, text, value_start)
        if value is not None:
            env[match.group()] = value
        pos += 1
    return env


def _value(r: _Reader, key: str, text: str, pos: int) -> tuple[str | None, int]:
    """The value from ``pos`` (after ``=``) and the position of the end of its line."""
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    quote = text[pos] if pos < len(text) and text[pos] in "'\"" else ""
    if not quote:
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        value = re.split(r"\s#", text[pos:end], maxsplit=1)[0].strip()
        return _literal(r, key, value), end
    out: list[str] = []
    i = pos + 1
    while i < len(text) and text[i] != quote:
        if text[i] == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if quote == '"':
                out.append(_ESCAPES.get(nxt, nxt))
                i += 2
                continue
            if nxt == "'":
                out.append("'")
                i += 2
                continue
        out.append(text[i])
        i += 1
    if i >= len(text):
        r.problem(key, f"an unterminated {quote}quoted{quote} value")
        return None, len(text)
    end = text.find("\n", i)
    end = len(text) if end < 0 else end
    trailing = text[i + 1 : end].strip()
    if trailing and not trailing.startswith("#"):
        r.problem(key, f"unexpected {trailing[:40]!r} after the quoted value")
        return None, end
    value = "".join(out)
    return (value if quote == "'" else _literal(r, key, value)), end


def _literal(r: _Reader, key: str, value: str) -> str | None:
    if "$" in value.replace("$$", ""):
        r.problem(key, "variable interpolation ($VAR) is not supported: host variables never reach a task")
        return None
    return value.replace("$$", "$")
