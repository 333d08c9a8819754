"""The base-image catalog: a Debian base built offline, and tagged images on top of it.

Task Dockerfiles start ``FROM`` these names, so builds share layers and never need Docker Hub.
"""

from __future__ import annotations

from dataclasses import dataclass, field

BASE_IMAGE = "autoenv/base:bookworm"
DEBIAN_SUITE = "bookworm"
DEBIAN_MIRROR = "http://deb.debian.org/debian"


@dataclass(frozen=True)
class CatalogImage:
    """One image of the catalog: apt packages (and optional extra Dockerfile lines) on top of ``parent``."""

    name: str
    description: str
    apt_packages: tuple[str, ...]
    parent: str = BASE_IMAGE
    extra_lines: tuple[str, ...] = field(default_factory=tuple)
    workdir: str = "/app"


_TERMINAL_PACKAGES = (
    "bash", "coreutils", "findutils", "grep", "sed", "gawk", "diffutils", "file", "less", "jq",
    "python3", "python3-pytest", "tmux", "procps", "curl", "git", "ca-certificates", "tar", "gzip",
    "xz-utils", "bzip2", "zip", "unzip", "sqlite3", "bc", "nano", "vim-tiny", "cron", "psmisc",
)

CATALOG: tuple[CatalogImage, ...] = (
    CatalogImage(
        name="autoenv/terminal:latest",
        description="General terminal work: bash, coreutils, text tools, python3 + pytest, tmux, git, curl.",
        apt_packages=_TERMINAL_PACKAGES,
    ),
    CatalogImage(
        name="autoenv/python:latest",
        description="Python development: the terminal image plus pip, venv, build tools and common libraries.",
        apt_packages=(
            "python3-pip", "python3-venv", "python3-dev", "build-essential",
            "python3-requests", "python3-yaml", "python3-numpy",
        ),
        parent="autoenv/terminal:latest",
    ),
)


def catalog_names() -> list[str]:
    return [BASE_IMAGE, *(img.name for img in CATALOG)]
