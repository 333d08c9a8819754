"""The base-image catalog: a Debian base built offline, and tagged images on top of it.

Task Dockerfiles start ``FROM`` these names, so builds share layers and never need Docker Hub.
"""

from __future__ import annotations

import shlex
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
    "bash",
    "coreutils",
    "findutils",
    "grep",
    "sed",
    "gawk",
    "diffutils",
    "file",
    "less",
    "jq",
    "python3",
    "python3-pytest",
    "tmux",
    "procps",
    "curl",
    "git",
    "ca-certificates",
    "tar",
    "gzip",
    "xz-utils",
    "bzip2",
    "zip",
    "unzip",
    "sqlite3",
    "bc",
    "nano",
    "vim-tiny",
    "cron",
    "psmisc",
)

_COMPUTER_USE_PACKAGES = (
    "xvfb",
    "xauth",
    "xfonts-base",
    "fonts-dejavu-core",
    "x11-utils",
    "xdotool",
    "imagemagick",
    "python3-tk",
    "openbox",
)


def _write_script(path: str, lines: tuple[str, ...]) -> str:
    """A shell command that writes an executable script. printf, because the Docker SDK builds without
    BuildKit (no heredocs); each line single-quoted, so nothing in it is expanded at build time."""
    quoted = " ".join(shlex.quote(line) for line in lines)
    return f"printf '%s\\n' {quoted} > {path} && chmod 755 {path}"


# Idempotent: a second call finds the display answering and returns at once.
_START_DISPLAY = (
    "#!/bin/bash",
    "# Start the virtual display (default :99) and a window manager unless the display already answers.",
    "export DISPLAY=${DISPLAY:-:99}",
    'if xdpyinfo >/dev/null 2>&1; then echo "display $DISPLAY is already up"; exit 0; fi',
    "n=${DISPLAY#:}; n=${n%%.*}",
    'rm -f "/tmp/.X${n}-lock" "/tmp/.X11-unix/X${n}"',
    # setsid + </dev/null: detached from the caller's session and stdin, so a shell running this keeps both.
    # -noreset: by default Xvfb resets when its last client leaves, and a client connecting then fails.
    'setsid -f Xvfb "$DISPLAY" -screen 0 1280x800x24 -nolisten tcp -noreset </dev/null >/tmp/xvfb.log 2>&1',
    # Up to 30 s: on a loaded machine Xvfb has taken more than 10 s to answer.
    "for _ in $(seq 1 300); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done",
    'xdpyinfo >/dev/null 2>&1 || { echo "start-display: Xvfb failed, see /tmp/xvfb.log" >&2; exit 1; }',
    # Wait for the window manager too: `xdotool windowactivate` fails until it has announced itself.
    "wm() { xprop -root _NET_SUPPORTING_WM_CHECK 2>/dev/null | grep -q 'window id'; }",
    "for _ in $(seq 1 300); do",
    "  wm && break",
    "  pgrep -x openbox >/dev/null || setsid -f openbox </dev/null >>/tmp/openbox.log 2>&1",
    "  sleep 0.1",
    "done",
    'wm || echo "start-display: no window manager (see /tmp/openbox.log)" >&2',
    'echo "display $DISPLAY is up"',
)
_SCREENSHOT = (
    "#!/bin/bash",
    "# Save the whole screen as a PNG (default /tmp/screen.png) and print its path.",
    "export DISPLAY=${DISPLAY:-:99}",
    "out=${1:-/tmp/screen.png}",
    'import -window root "$out" && echo "$out"',
)
_COMPUTER_USE_LINES = (
    "ENV DISPLAY=:99",
    f"RUN {_write_script('/usr/local/bin/start-display', _START_DISPLAY)} \\\n"
    f"  && {_write_script('/usr/local/bin/screenshot', _SCREENSHOT)}",
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
            "python3-pip",
            "python3-venv",
            "python3-dev",
            "build-essential",
            "python3-requests",
            "python3-yaml",
            "python3-numpy",
        ),
        parent="autoenv/terminal:latest",
    ),
    CatalogImage(
        name="autoenv/professional:latest",
        description="Office files: the python image plus openpyxl, pandas, xlsxwriter, python-docx, csvkit.",
        apt_packages=(
            "python3-openpyxl",
            "python3-pandas",
            "python3-xlsxwriter",
            "python3-docx",
            "csvkit",
        ),
        parent="autoenv/python:latest",
    ),
    CatalogImage(
        name="autoenv/computer-use:latest",
        description="GUI on a virtual display: Xvfb :99, openbox, xdotool, Tk, start-display, screenshot.",
        apt_packages=_COMPUTER_USE_PACKAGES,
        parent="autoenv/terminal:latest",
        extra_lines=_COMPUTER_USE_LINES,
    ),
    CatalogImage(
        name="autoenv/gpu-kernel:latest",
        description="CUDA kernels in Python (numba); NUMBA_ENABLE_CUDASIM=1 runs them on the CPU simulator.",
        apt_packages=("python3-numba", "python3-numpy"),
        parent="autoenv/python:latest",
        # The simulator runs @cuda.jit kernels on the CPU, so tasks validate on machines without a GPU;
        # a real GPU run overrides it with NUMBA_ENABLE_CUDASIM=0.
        extra_lines=("ENV NUMBA_ENABLE_CUDASIM=1",),
    ),
)


def catalog_names() -> list[str]:
    return [BASE_IMAGE, *(img.name for img in CATALOG)]
