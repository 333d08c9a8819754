"""Host variables and secrets: what may enter a container, and what is scrubbed from everything written.

``${VAR}`` in a task's ``[solution.env]`` / ``[verifier.env]`` is expanded only from variables the user passed
explicitly (``--pass-env NAME`` or ``pass_env`` in the config); a task written by a model never reads the host's
environment by default. As a second line, values of the host's secret-looking variables (API keys, tokens,
passwords) and of every passed variable are replaced by ``[redacted]`` in a trial's files before anyone reads them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

_VAR_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)
_MIN_SECRET_LEN = 12  # shorter values (a "1", a "true") would scrub ordinary output
_MAX_SCRUB_FILE = 64 * 1024 * 1024
REDACTED = "[redacted]"


def passed_env(names: Iterable[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The host variables the user chose to pass (missing ones are left out)."""
    source = os.environ if environ is None else environ
    return {n: source[n] for n in names if n in source}


def expand_env(values: Mapping[str, str], passed: Mapping[str, str] | None = None) -> dict[str, str]:
    """Expand ``${VAR}`` and ``${VAR:-default}`` from ``passed`` only; a variable not passed counts as unset."""
    source = dict(passed or {})

    def sub(m: re.Match[str]) -> str:
        value = source.get(m.group(1))
        if value is None or (value == "" and m.group(2) is not None):
            return m.group(2) or ""
        return value

    return {k: _VAR_RE.sub(sub, v) for k, v in values.items()}


def secret_values(passed: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None) -> list[str]:
    """Values to scrub: the host's secret-looking variables plus everything passed, longest first."""
    source = os.environ if environ is None else environ
    found = {v for k, v in source.items() if _SECRET_NAME.search(k)}
    found |= set((passed or {}).values())
    return sorted((v for v in found if len(v) >= _MIN_SECRET_LEN), key=len, reverse=True)


def scrub_text(text: str, secrets: Iterable[str]) -> str:
    for value in secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def scrub_tree(root: Path, secrets: list[str]) -> list[Path]:
    """Rewrite files under ``root`` that contain a secret value; returns the files changed."""
    if not secrets or not root.is_dir():
        return []
    needles = [s.encode() for s in secrets]
    changed: list[Path] = []
    for path in root.rglob("*"):
        if path.is_symlink() or not path.is_file() or path.stat().st_size > _MAX_SCRUB_FILE:
            continue
        data = path.read_bytes()
        new = data
        for needle in needles:
            new = new.replace(needle, REDACTED.encode())
        if new != data:
            path.write_bytes(new)
            changed.append(path)
    return changed
