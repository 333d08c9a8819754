"""Image aliases: run external tasks whose base image cannot be pulled on a local stand-in.

``--image-alias ubuntu:24.04=autoenv/terminal:latest`` rewrites ``FROM ubuntu:24.04`` (and a task's prebuilt
``docker_image``) before the build. Aliases come from the command line and/or a TOML file::

    [aliases]
    "ubuntu:24.04" = "autoenv/terminal:latest"
    "python:3.13-slim-bookworm" = "autoenv/python:latest"
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from autoenvscaling.errors import UserInputError

_FROM_RE = re.compile(r"^(\s*FROM\s+)((?:--\S+\s+)*)(\S+)(.*)$", re.IGNORECASE)


def parse_alias(text: str) -> tuple[str, str]:
    src, sep, dst = text.partition("=")
    if not sep or not src.strip() or not dst.strip():
        raise UserInputError(f"--image-alias {text!r}: expected FROM=TO, e.g. ubuntu:24.04=autoenv/terminal:latest")
    return src.strip(), dst.strip()


def load_alias_file(path: Path) -> dict[str, str]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise UserInputError(f"{path}: cannot read image aliases: {e}") from None
    table = data.get("aliases", data)
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise UserInputError(f'{path}: expected an [aliases] table of "FROM" = "TO" strings')
    return {str(k): str(v) for k, v in table.items()}


def resolve_aliases(cli_values: list[str] | None = None, files: list[Path] | None = None) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for f in files or []:
        aliases.update(load_alias_file(f))
    for value in cli_values or []:
        src, dst = parse_alias(value)
        aliases[src] = dst
    return aliases


def _lookup(image: str, aliases: dict[str, str]) -> str | None:
    if image in aliases:
        return aliases[image]
    if ":" not in image.rsplit("/", 1)[-1] and f"{image}:latest" in aliases:
        return aliases[f"{image}:latest"]
    return None


def alias_image(image: str, aliases: dict[str, str]) -> str:
    return _lookup(image, aliases) or image


def rewrite_dockerfile(text: str, aliases: dict[str, str]) -> tuple[str, list[tuple[str, str]]]:
    """Return the Dockerfile with aliased FROM lines and the (from, to) pairs applied."""
    if not aliases:
        return text, []
    applied: list[tuple[str, str]] = []
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        m = _FROM_RE.match(line.rstrip("\n"))
        target = _lookup(m.group(3), aliases) if m else None
        if m and target:
            applied.append((m.group(3), target))
            line = f"{m.group(1)}{m.group(2)}{target}{m.group(4)}\n"
        out.append(line)
    return "".join(out), applied
