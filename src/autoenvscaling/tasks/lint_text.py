"""Text heuristics for lint: relative paths in an instruction, downloads in a test script, TOML key lines."""

from __future__ import annotations

import re

# Extensions that make a bare token look like a file name. A closed list, because an open pattern
# (``\w+\.\w+``) flags code identifiers such as ``json.dumps`` or ``re.findall`` in instructions.
FILE_EXTENSIONS = frozenset(
    {
        "txt",
        "csv",
        "tsv",
        "json",
        "jsonl",
        "ndjson",
        "yaml",
        "yml",
        "toml",
        "ini",
        "cfg",
        "conf",
        "config",
        "log",
        "md",
        "rst",
        "html",
        "htm",
        "xml",
        "py",
        "pyi",
        "sh",
        "bash",
        "zsh",
        "js",
        "mjs",
        "ts",
        "c",
        "h",
        "cc",
        "cpp",
        "hpp",
        "go",
        "rs",
        "java",
        "kt",
        "rb",
        "pl",
        "php",
        "sql",
        "db",
        "sqlite",
        "sqlite3",
        "tar",
        "gz",
        "tgz",
        "bz2",
        "xz",
        "zip",
        "parquet",
        "out",
        "dat",
        "bin",
        "pem",
        "key",
        "crt",
        "pdf",
        "png",
        "jpg",
        "jpeg",
        "gif",
        "svg",
        "ipynb",
        "lock",
        "env",
        "whl",
        "patch",
        "diff",
        "service",
        "timer",
        "rules",
        "cron",
        "gpg",
        "asc",
        "npy",
        "npz",
        "pkl",
        "pt",
        "onnx",
        "wav",
        "mp3",
        "mp4",
    }
)
# Product names that look like files.
_NOT_FILES = frozenset({"node.js", "next.js", "vue.js", "react.js", "three.js", "d3.js", "express.js", "socket.io"})

_URL = re.compile(r"\b[a-zA-Z][\w+.-]*://\S+")
_TOKEN = re.compile(r"[\w.~/$*\-]+")


def _has_file_extension(name: str) -> bool:
    stem, dot, ext = name.rpartition(".")
    return bool(dot) and bool(stem.strip(".")) and ext.lower() in FILE_EXTENSIONS


def _is_relative_path(token: str) -> bool:
    if not token or token[0] in "/~$*-" or token.lower() in _NOT_FILES:
        return False
    if token.startswith(("./", "../")):
        return True
    if "/" in token:
        last = token.rstrip("/").rsplit("/", 1)[-1]
        if token.endswith("/"):
            return all(re.fullmatch(r"[\w.\-]+", seg) for seg in token.rstrip("/").split("/"))
        return _has_file_extension(last)
    return _has_file_extension(token)


def relative_paths(text: str) -> list[tuple[str, int]]:
    """Distinct tokens that look like relative file paths, each with the 1-based line it first appears on."""
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        for raw in _TOKEN.findall(_URL.sub(" ", line)):
            token = raw.rstrip(".")
            if token not in seen and _is_relative_path(token):
                seen[token] = number
    return list(seen.items())


_DOWNLOADS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("curl", re.compile(r"\bcurl\b")),
    ("wget", re.compile(r"\bwget\b")),
    ("pip install", re.compile(r"\bpip3?\s+install\b|-m\s+pip\s+install\b")),
    ("apt-get install", re.compile(r"\bapt(?:-get)?\s+(?:-\S+\s+)*install\b")),
    ("uv/uvx", re.compile(r"(?<![\w/.-])uvx?\b(?![.-])")),
    ("npm install", re.compile(r"\bnpm\s+(?:install|i|ci)\b|\bnpx\b")),
)


def download_lines(script: str) -> list[tuple[str, int]]:
    """(what, line) for each non-comment line of a shell script that fetches something."""
    found: list[tuple[str, int]] = []
    for number, line in enumerate(script.splitlines(), start=1):
        code = line.strip()
        if not code or code.startswith("#"):
            continue
        for what, pattern in _DOWNLOADS:
            if pattern.search(code):
                found.append((what, number))
                break
    return found


_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_KEY = re.compile(r"^\s*([\w\-\"'.\s]+?)\s*=")


def _norm(dotted: str) -> str:
    return ".".join(part.strip().strip("\"'") for part in re.sub(r"\[\d+\]", "", dotted).split("."))


def toml_key_line(text: str, dotted: str) -> int | None:
    """Best-effort line of a dotted key (``steps[0].foo`` matches under any ``[[steps]]``)."""
    want = _norm(dotted)
    table = ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            table = _norm(header.group(1))
            if table == want:
                return number
            continue
        key = _KEY.match(line)
        if key:
            full = _norm(f"{table}.{key.group(1)}" if table else key.group(1))
            if full == want:
                return number
    return None
