from __future__ import annotations

from pathlib import Path

import pytest

from autoenvscaling.errors import UserInputError
from autoenvscaling.images.aliases import alias_image, parse_alias, resolve_aliases, rewrite_dockerfile


def test_rewrite_from_lines() -> None:
    text = "FROM ubuntu:24.04 AS build\nRUN true\nFROM --platform=linux/amd64 python:3.13-slim-bookworm\n"
    aliases = {"ubuntu:24.04": "autoenv/terminal:latest", "python:3.13-slim-bookworm": "autoenv/python:latest"}
    out, applied = rewrite_dockerfile(text, aliases)
    assert out.splitlines()[0] == "FROM autoenv/terminal:latest AS build"
    assert out.splitlines()[2] == "FROM --platform=linux/amd64 autoenv/python:latest"
    assert len(applied) == 2


def test_rewrite_copy_from_images_not_stages() -> None:
    # COPY --from names an image as often as a stage: the image gets the alias, a stage (by name or index) does not.
    text = (
        "FROM ubuntu:24.04 AS Build\n"
        "COPY --from=ghcr.io/astral-sh/uv:latest /uv /uvx /bin/\n"
        "FROM ubuntu:24.04\n"
        "COPY --chown=1000:1000 --from=build /out /app\n"
        "COPY --from=0 /out /again\n"
        "COPY --from=ghcr.io/astral-sh/uv --chmod=755 /uv /bin/uv\n"
        "COPY --from=other:1 /x /x\n"
        "COPY src/ /src/\n"
    )
    aliases = {
        "ubuntu:24.04": "autoenv/terminal:latest",
        "ghcr.io/astral-sh/uv:latest": "local/uv:1",
        "build": "must-not-be-used",
        "0": "must-not-be-used",
    }
    out, applied = rewrite_dockerfile(text, aliases)
    assert out.splitlines() == [
        "FROM autoenv/terminal:latest AS Build",
        "COPY --from=local/uv:1 /uv /uvx /bin/",
        "FROM autoenv/terminal:latest",
        "COPY --chown=1000:1000 --from=build /out /app",
        "COPY --from=0 /out /again",
        "COPY --from=local/uv:1 --chmod=755 /uv /bin/uv",
        "COPY --from=other:1 /x /x",
        "COPY src/ /src/",
    ]
    assert applied == [
        ("ubuntu:24.04", "autoenv/terminal:latest"),
        ("ghcr.io/astral-sh/uv:latest", "local/uv:1"),
        ("ubuntu:24.04", "autoenv/terminal:latest"),
        ("ghcr.io/astral-sh/uv", "local/uv:1"),
    ]


def test_from_an_earlier_stage_is_not_aliased() -> None:
    out, applied = rewrite_dockerfile("FROM base:1 AS deps\nFROM deps\n", {"base:1": "x:1", "deps": "y:1"})
    assert out == "FROM x:1 AS deps\nFROM deps\n" and applied == [("base:1", "x:1")]


def test_untagged_name_matches_latest() -> None:
    assert alias_image("ubuntu", {"ubuntu:latest": "x"}) == "x"
    assert alias_image("debian:12", {"ubuntu:latest": "x"}) == "debian:12"


def test_bad_alias_and_file(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="FROM=TO"):
        parse_alias("ubuntu")
    f = tmp_path / "a.toml"
    f.write_text('[aliases]\n"ubuntu:24.04" = "autoenv/terminal:latest"\n')
    assert resolve_aliases(["gcc:13=autoenv/python:latest"], [f]) == {
        "ubuntu:24.04": "autoenv/terminal:latest",
        "gcc:13": "autoenv/python:latest",
    }
    f.write_text("not toml [")
    with pytest.raises(UserInputError, match="cannot read"):
        resolve_aliases([], [f])
