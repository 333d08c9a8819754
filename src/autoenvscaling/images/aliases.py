"""Image aliases: run external tasks whose base image cannot be pulled on a local stand-in.

``--image-alias ubuntu:24.04=autoenv/terminal:latest`` rewrites ``FROM ubuntu:24.04``, the image of a
``COPY --from=IMAGE`` (``COPY --from=ghcr.io/astral-sh/uv:latest /uv /bin/`` is a common way to get uv) and a
task's prebuilt ``docker_image`` or compose service ``image`` before the build. A ``FROM`` or ``--from`` naming an
earlier build stage (``FROM ... AS name``, or a stage's index) is left alone. Aliases come from the command line
and/or a TOML file::

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
_STAGE_RE = re.compile(r"\s+AS\s+(\S+)\s*$", re.IGNORECASE)
# COPY's flags come before its sources, in any order: --from=VALUE among them.
_COPY_FROM_RE = re.compile(r"^(\s*COPY\s+(?:--\S+\s+)*?--from=)(\S+)(.*)$", re.IGNORECASE)


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
    """Return the Dockerfile with aliased images (``FROM`` and ``COPY --from``) and the (from, to) pairs applied."""
    if not aliases:
        return text, []
    applied: list[tuple[str, str]] = []
    out: list[str] = []
    count = 0
    stages: set[str] = set()  # earlier stages: their index and name (lower case, as Docker compares names)
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\n")
        m = _FROM_RE.match(body)
        if m:
            target = None if m.group(3).lower() in stages else _lookup(m.group(3), aliases)
            if target:
                applied.append((m.group(3), target))
                line = f"{m.group(1)}{m.group(2)}{target}{m.group(4)}\n"
            if stage := _STAGE_RE.search(m.group(4)):
                stages.add(stage.group(1).lower())
            stages.add(str(count))
            count += 1
        elif c := _COPY_FROM_RE.match(body):
            source = c.group(2)
            target = None if source.lower() in stages else _lookup(source, aliases)
            if target:
                applied.append((source, target))
                line = f"{c.group(1)}{target}{c.group(3)}\n"
        out.append(line)
    return "".join(out), applied
