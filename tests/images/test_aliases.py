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
