"""Mechanical repairs of a solve.sh for shell pitfalls that a small model repeats even after it is told of them.

When a run of the model's script fails a guard that one of these pitfalls explains (or reads a .gz input as
text, failed or not), the harness rewrites the script and runs the rewrite in a fresh container; the rewrite is
kept only when it passes every guard (the caller decides), and the trajectory says what was changed. No model
call is spent. The pitfalls (7 of the 28 staged episodes of yield series v10 and v11's first 8 ended on one):

- ``grep-h``  grep that reads several files prefixes every line with the file's name (``output-file-prefix``):
  ``grep -h``.
- ``gz``      a compressed input read as text (binary bytes in the output, an empty output, or no failure at all:
  grep skips such a file): grep becomes ``zgrep``, cat ``zcat -f``, a text tool (awk, sed, sort, ...) reads
  ``<(zcat -f FILE)``.
- ``grep-o``  grep -o whose pattern stops inside a field, so every line is cut short (``output-cuts-fields``):
  whole lines (the ``o`` option dropped).
- ``grep-E``  a basic-regex grep whose quoted pattern has an alternation (``grep -v '404|500'``: ``|`` is a plain
  character there, so the filter matched nothing; ``output-copies-input``, an empty output): ``grep -E``.
- ``cat-zcat`` ``cat a b | zcat c.gz``: zcat reads its own files, not the pipe, so ``a`` and ``b`` are dropped
  with no failure: ``zcat -f a b c.gz``.
- ``path``    the script reads an input path that does not exist, and one input's path is a near miss of it,
  clearly nearer than any other input's (``access.log.2gz`` for ``access.log.2.gz``): the input's path.
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Callable

from pydantic import BaseModel

from autoenvscaling.roles.proposer.staged import record as rec

# A grep-family command word (not a word that merely ends in grep, not a path such as /usr/bin/grep's dir).
_GREP = re.compile(r"(?<![\w./-])(?:/usr/bin/|/bin/)?(z?[ef]?grep)(?![\w.-])")
_CAT = re.compile(r"(?<![\w./-])(?:/usr/bin/|/bin/)?cat(?![\w.-])")
# A path ending in .gz, as a shell word (quotes allowed around it).
_GZ_PATH = re.compile(r"""(?P<q>['"]?)(?P<path>(?:[\w.\-/*]+/)?[\w.\-*]+\.gz)(?P=q)(?![\w.-])""")
_PLAIN_GREP = {"egrep": "grep -E", "fgrep": "grep -F"}
# Tools that read a .gz file themselves.
_GZ_AWARE = re.compile(r"(?<![\w.-])(?:zcat|zgrep|zegrep|zfgrep|zless|zmore|zdiff|gunzip|gzip|zcmp)(?![\w.-])")
# Commands that read the files they are given as text (a .gz argument of theirs becomes ``<(zcat -f FILE)``).
_TEXT_READERS = frozenset("awk gawk mawk sed sort cut head tail wc uniq paste comm join nl tac column jq".split())
_MISSING = re.compile(r"""(?:^|\s|['"`])(/[^\s'"`:]+)['"`]?: No such file or directory""", re.MULTILINE)
_NEAR_MISS = 0.9
_MARGIN = 0.04  # the nearest input must be nearer than the next one by this much


# The failed guards that a compressed input read as text can explain.
_GZ_SIGNS = frozenset(
    {rec.OUTPUT_BINARY, rec.OUTPUT_EMPTY, rec.OUTPUT_FILE_PREFIX, rec.OUTPUT_WITHOUT_DATA, rec.SOLUTION_FAILED}
)


# The failed guards that a pattern which matched nothing (or, under -v, everything) can explain.
_NO_MATCH_SIGNS = frozenset({rec.OUTPUT_COPIES_INPUT, rec.OUTPUT_EMPTY, rec.OUTPUT_WITHOUT_DATA})


class ShellFix(BaseModel):
    """A rewritten script and what was changed (``name``: the pitfall; ``detail``: one line for the log)."""

    name: str
    script: str
    detail: str


def command_spans(script: str) -> list[tuple[int, int]]:
    """Where each simple command of ``script`` starts and ends: split at ``|``, ``;``, ``&`` and newlines that
    are outside quotes (a grep pattern ``'a|b'`` stays one command)."""
    spans: list[tuple[int, int]] = []
    start, quote, i = 0, "", 0
    while i < len(script):
        c = script[i]
        if c == "\\" and quote != "'":
            i += 2
            continue
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "|;&\n":
            spans.append((start, i))
            start = i + 1
        i += 1
    spans.append((start, len(script)))
    return [(a, b) for a, b in spans if script[a:b].strip()]


def _segments(script: str, pattern: re.Pattern[str], rewrite: Callable[[str], str]) -> str:
    """Apply ``rewrite`` to every simple command in which ``pattern`` occurs."""
    out, last = [], 0
    for a, b in command_spans(script):
        segment = script[a:b]
        out += [script[last:a], rewrite(segment) if pattern.search(segment) else segment]
        last = b
    return "".join(out) + script[last:]


def grep_without_names(script: str) -> str:
    """``grep`` -> ``grep -h`` (every grep-family command: on one file or stdin ``-h`` changes nothing)."""

    def add_h(segment: str) -> str:
        return _GREP.sub(lambda m: m.group(0) + " -h", segment, count=1)

    return _segments(script, _GREP, add_h)


# A grep-family command word and the option words right after it (``zgrep -h -oE``).
_GREP_OPTIONS = re.compile(_GREP.pattern + r"((?:\s+-[\w-]+)+)")


def grep_whole_lines(script: str) -> str:
    """``grep -oE 'x'`` -> ``grep -E 'x'``: every grep-family command prints whole lines (``-o`` dropped from the
    option words after the command word: ``-o``, ``-hoE``, ``--only-matching``)."""

    def drop_o(word: str) -> str:
        if word == "--only-matching" or word == "-o":
            return ""
        if not word.startswith("--") and "o" in word and word[1:].isalpha():
            return word.replace("o", "")
        return word

    def options(m: re.Match[str]) -> str:
        words: list[str] = []
        for w in m.group(2).split():
            # after -e / -f (a cluster ending in one) comes their argument, a pattern or a file, kept as it is
            argument = bool(words) and not words[-1].startswith("--") and words[-1][-1:] in ("e", "f")
            words.append(w if argument else drop_o(w))
        words = [w for w in words if w]
        return m.group(0)[: m.start(2) - m.start(0)] + "".join(" " + w for w in words)

    return _segments(script, _GREP, lambda seg: _GREP_OPTIONS.sub(options, seg))


# A grep-family word that reads basic regexes (egrep, fgrep and zegrep have their own syntax), its option words,
# and a quoted pattern right after them.
_BASIC_GREP = re.compile(r"(?<![\w./-])(?:/usr/bin/|/bin/)?(z?grep)((?:\s+-[\w-]+)*)\s+(['\"])(.*?)\3")


def grep_alternation(script: str) -> str:
    """``grep -v '404|500'`` -> ``grep -E -v '404|500'``: a basic-regex grep whose quoted pattern holds an
    unescaped ``|`` reads extended regexes (options that already pick a syntax, -E, -F, -P, -G, stay as they are)."""

    def extended(m: re.Match[str]) -> str:
        options = "".join(w.lstrip("-") for w in m.group(2).split() if not w.startswith("--"))
        syntax = set(options) & set("EFPG") or any(w.startswith("--") and "regexp" in w for w in m.group(2).split())
        if syntax or not re.search(r"(?<!\\)\|", m.group(4)):
            return m.group(0)
        at = m.start(2) - m.start(0)
        return m.group(0)[:at] + " -E" + m.group(0)[at:]

    return _segments(script, _BASIC_GREP, lambda seg: _BASIC_GREP.sub(extended, seg))


def gz_as_text(script: str) -> str:
    """Every simple command that names a .gz path and is not one that reads .gz itself is made to decompress it."""

    def decompress(segment: str) -> str:
        if _GZ_AWARE.search(segment):
            return segment
        if _GREP.search(segment):  # zgrep reads plain files as they are: every file the command names stays read
            return _GREP.sub(lambda m: "z" + _PLAIN_GREP.get(m.group(1), m.group(1)), segment)
        if _CAT.search(segment):
            return _CAT.sub("zcat -f", segment)
        out = re.sub(r"<\s*(" + _GZ_PATH.pattern + ")", lambda m: f"< <(zcat -f {m.group(1)})", segment)
        if out != segment:
            return out
        words = segment.split()
        if words and words[0].rsplit("/", 1)[-1] in _TEXT_READERS:
            return _GZ_PATH.sub(lambda m: f"<(zcat -f {m.group(0)})", segment)
        return segment

    return _segments(script, _GZ_PATH, decompress)


# ``cat FILES | zcat FILES``: a decompressor given files never reads its stdin, so the cat's files are dropped.
_CAT_INTO_ZCAT = re.compile(
    r"(?<![\w./-])(?:/usr/bin/|/bin/)?cat((?:[ \t]+[^\s|;&<>()]+)+)[ \t]*\|[ \t]*"
    r"(?:zcat|gunzip[ \t]+-c|gzip[ \t]+-dc)((?:[ \t]+[^\s|;&<>()]+)+)"
)


def piped_into_zcat(script: str) -> str:
    """``cat a b | zcat c.gz`` -> ``zcat -f a b c.gz``: zcat reads the files it is given, not the pipe, so the
    lines of ``a`` and ``b`` never reached the output (yield series v16; the run fails no guard, and the
    instruction names all three files). Only where the decompressor names a file of its own."""

    def joined(m: re.Match[str]) -> str:
        files = [w for w in m.group(2).split() if not w.startswith("-")]
        if not files or any(w.startswith("-") for w in m.group(1).split()):
            return m.group(0)
        return "zcat -f" + m.group(1) + "".join(" " + f for f in files)

    return _CAT_INTO_ZCAT.sub(joined, script)


def missing_paths(stderr: str) -> list[str]:
    """The paths ``stderr`` reports missing (``cat: /app/x: No such file or directory``), each once, in order."""
    return list(dict.fromkeys(_MISSING.findall(stderr)))


def near_miss_paths(script: str, stderr: str, inputs: list[str]) -> tuple[str, dict[str, str]]:
    """Replace each path that the run's stderr reported missing by the one input path that nearly equals it."""
    replaced: dict[str, str] = {}
    for missing in missing_paths(stderr):
        if missing in inputs or missing not in script:
            continue
        ranked = sorted(((difflib.SequenceMatcher(None, missing, p).ratio(), p) for p in inputs), reverse=True)
        if ranked and ranked[0][0] >= _NEAR_MISS and (len(ranked) == 1 or ranked[1][0] < ranked[0][0] - _MARGIN):
            replaced[missing] = ranked[0][1]
    for missing, path in replaced.items():
        script = re.sub(re.escape(missing) + r"(?![\w.-])", path, script)
    return script, replaced


def _reads_gz_as_text(script: str) -> bool:
    return gz_as_text(script) != script


def unmatched_grep(script: str, inputs: dict[str, str]) -> str | None:
    """The pattern of a grep in ``script`` that no input line matches, or None: a grep that selects nothing exits
    1, and under ``set -o pipefail`` the script fails with no message at all (yield series v16 A1 #7: three
    scripts in a row grepped `error` in access logs that hold no such word). Only patterns this can read are
    tried: a literal (``-F``, or no regex character), or a regex Python compiles alike (``-E``, ``-P``, or a basic
    one with no ``\\`` in it); ``-v``, ``-f`` and ``-e`` greps are left out."""
    lines = [ln for text in inputs.values() for ln in text.splitlines()]
    if not lines:
        return None
    for a, b in command_spans(script):
        try:
            words = shlex.split(script[a:b])
        except ValueError:
            continue
        at = next((i for i, w in enumerate(words) if _GREP.fullmatch(w)), None)
        if at is None:
            continue
        options, rest = "", words[at + 1 :]
        while rest and rest[0].startswith("-") and not rest[0].startswith("--"):
            options += rest.pop(0)[1:]
        if not rest or set(options) & set("vfe") or any(w.startswith("--") for w in words[at + 1 :]):
            continue
        pattern = rest[0]
        literal = "F" in options or words[at].endswith("fgrep") or not re.search(r"[\\^$.*+?()\[\]{}|]", pattern)
        if not literal and "E" not in options and "P" not in options and "\\" in pattern:
            continue
        flags = re.IGNORECASE if "i" in options else 0
        try:
            regex = re.compile(re.escape(pattern) if literal else pattern, flags)
        except re.error:
            continue
        if not any(regex.search(ln) for ln in lines):
            return pattern
    return None


_AWK_FIELD_TEST = re.compile(r"""\$(\d+)\s*(~|==)\s*(?:/((?:[^/\\]|\\.)+)/|"([^"]*)")""")


def misread_field(script: str, inputs: dict[str, str]) -> tuple[str, int, str] | None:
    """An awk test of ``script`` on a field that no input line passes while another field passes it on some line:
    (the test, the field that does, a line's value of it); None when there is none. A rule that selected
    nothing tested the wrong field (yield series v16 A1 #12: `$4 ~ /admin/` on lines whose path is `$3`; the
    model's lines were asked for twice, and they were right)."""
    rows = [ln.split() for text in inputs.values() for ln in text.splitlines() if ln.strip()]
    for m in _AWK_FIELD_TEST.finditer(script):
        field, op, pattern, literal = int(m.group(1)), m.group(2), m.group(3), m.group(4)
        if (op == "~" and pattern is None) or (op == "==" and literal is None) or field < 1:
            continue
        try:
            regex = re.compile(pattern) if pattern is not None else None
        except re.error:
            continue

        def passes(value: str, regex: re.Pattern[str] | None = regex, literal: str | None = literal) -> bool:
            return regex.search(value) is not None if regex is not None else value == literal

        if any(len(r) >= field and passes(r[field - 1]) for r in rows):
            continue
        for other in range(1, max((len(r) for r in rows), default=0) + 1):
            row = next((r for r in rows if len(r) >= other and passes(r[other - 1])), None)
            if row is not None and other != field:
                return m.group(0), other, row[other - 1]
    return None


# The grep rewrites: the failed guards each one explains, the rewrite, its name and what it changes.
_GREP_FIXES: tuple[tuple[frozenset[str], Callable[[str], str], str, str], ...] = (
    (frozenset({rec.OUTPUT_FILE_PREFIX}), grep_without_names, "grep-h", "grep -h: no file name in front of each line"),
    (_NO_MATCH_SIGNS, grep_alternation, "grep-E", "grep -E: the pattern's | is an alternation, not a plain character"),
    (frozenset({rec.OUTPUT_CUTS_FIELDS}), grep_whole_lines, "grep-o", "grep without -o: whole lines, not the part the "
     "pattern matched"),
)  # fmt: skip


def shell_fix(script: str, problem: tuple[str, str] | None, run: rec.SolutionRun, inputs: list[str]) -> ShellFix | None:
    """The rewrite of ``script`` that the run (``problem``: its first failed guard, or None) calls for, or None.

    A run with no failed guard is repaired only when the script reads a .gz input as text: grep skips the
    compressed file (saying "binary file matches" only when its bytes happen to match), and the output lacks its
    lines though the instruction will name it (yield series v12: ``grep 'PUT ...' a b c.gz | awk ...``); or when
    it pipes cat into a zcat of another file, which drops the cat's files the same way.
    """
    dropped = piped_into_zcat(script) != script
    if problem is None and not (dropped or _reads_gz_as_text(script)):
        return None
    check = problem[0] if problem else ""
    names: list[str] = []
    details: list[str] = []
    fixed = script
    if check == rec.SOLUTION_FAILED:
        fixed, replaced = near_miss_paths(fixed, run.stderr_tail, inputs)
        if replaced:
            names.append("path")
            details += [f"{a} -> {b}" for a, b in replaced.items()]
    if dropped:
        fixed = piped_into_zcat(fixed)
        names.append("cat-zcat")
        details.append("cat a | zcat b.gz drops a (zcat reads its files, not the pipe): zcat -f a b.gz")
    if (problem is None or check in _GZ_SIGNS) and _reads_gz_as_text(fixed):
        fixed = gz_as_text(fixed)
        names.append("gz")
        details.append("a .gz input read as text is decompressed (zgrep, zcat -f)")
    for signs, rewrite, name, detail in _GREP_FIXES:
        if check in signs and rewrite(fixed) != fixed:
            fixed = rewrite(fixed)
            names.append(name)
            details.append(detail)
    if fixed == script:
        return None
    return ShellFix(name="+".join(names), script=fixed, detail="; ".join(details))
