"""What a solver must be told: the paths, words and numbers a reference solution's rule depends on
(``script_references``), the ones an instruction leaves out (``unnamed_references``), an instruction that names
none of them (``unstated_rule``), and the sentence that names them (``with_references``)."""

from __future__ import annotations

import re

# Paths a script may use without the instruction naming them: the system's own files and scratch space.
_SYSTEM_PREFIXES = ("/dev/", "/proc/", "/sys/", "/tmp/", "/usr/", "/bin/", "/sbin/", "/lib", "/run/")
ABS_PATH = re.compile(r"(?<![\w./$-])(/(?:[\w.@+-]+/?)+)")  # an absolute path in a script or a text
_WRITTEN = re.compile(r"(?:>>?|\btee(?:\s+-a)?|\bmkdir(?:\s+-p)?)\s*['\"]?$")
# A quoted word or number (2+ characters): `grep -v 'admin'`, `grep '500'`, `$1 == "10.0.0.1"`. A flywheel round on
# 92d3dfb accepted `grep '500'` under an instruction whose only 500 was in the output's name, /app/error_500.txt.
# Or a quoted alternation of such words: `grep -E '404|500'` (a flywheel round on 4bb2b04 accepted it under an
# instruction that named 404 and never 500), basic-regex `'GET\|POST'` too; each word is a value.
_WORD = r"[A-Za-z0-9][\w.@:-]{0,30}"  # a value when 2+ characters long
# Anchored too: `grep -E '^home:'`, `grep -v '^key1$'` (a line's start or end is where the value stands).
_QUOTED = re.compile(rf"""(?<![\w$])(['"])\^?({_WORD}(?:\\?\|{_WORD})*)\$?\1""")
_ALTERNATIVE = re.compile(r"\\?\|")
# A file's bare name (`errors_404.txt`, `index.html`): a value inside it names nothing, as inside a path.
_FILE_NAME = re.compile(r"(?<![\w.-])[\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,4}\b")
# An awk or sed address in a quoted program, not a path: `'/400/ {'`, `'/ERROR/'`, sed's `'/index/d'` (a command
# letter after it), and one a condition goes on from: `'/GET/ && $4 == 200'` (a flywheel round on 14df066 read
# that as the path /GET and told its solver "The rule uses these values: `/GET`"), `'$1 ~ /^10\./'`, sed's range
# `'/a/,/b/p'`. What it matches is a value, as a quoted word is: each plain word of it (`/^GET|POST/`).
_ADDRESS = re.compile(r"(?<![\w.\\])/((?:[^/\\\n]|\\.)+)/[dpIi!]?(?=\s*(?:[{;,)]|&&|\|\||$))")
_QUOTED_SPAN = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
# grep's pattern when it is a path alone: `grep '/bin/bash' /app/data/passwd`, `grep -v "/login" ...`.
_GREP_PATH = re.compile(r"""\bgrep\b(?:\s+-[A-Za-z]+)*\s+(?:-e\s+)?(['"])(/[^'"\n]*)\1""")
# awk's field count right before a comparison: `NF == 2` keeps the `key = value` lines of a config. The values
# hint told key-extraction tasks "The rule uses these values: `2`." (demo runs on 66937ae and 8ee4ab2).
_FIELD_COUNT = re.compile(r"\bNF\s*$")
_COMPARED = re.compile(r"(?:>=|<=|==|!=|(?<![-=<>])[<>](?![>&=])|-(?:gt|ge|lt|le|eq|ne))\s*(-?\d+(?:\.\d+)?)\b")


def pattern_paths(solve_sh: str) -> set[str]:
    """Paths written inside a longer quoted string of ``solve_sh`` (``grep '"PUT /api/items HTTP/1.1" 200'``,
    awk's ``$7 == "/bin/bash"``) or quoted alone as grep's pattern (``grep '/bin/bash' /app/data/passwd``):
    part of a pattern the rule matches, a value, not a file the script reads (yield series v12 #7 was told
    "The input is in /api/items.")."""
    out = set()
    for span in _QUOTED_SPAN.finditer(solve_sh):
        inner = span.group(0)[1:-1]
        for m in ABS_PATH.finditer(inner):
            if m.group(1).rstrip("/") != inner.strip().rstrip("/"):
                out.add(m.group(1).rstrip("/"))
    for m in _GREP_PATH.finditer(solve_sh):
        if ABS_PATH.fullmatch(m.group(2)):
            out.add(m.group(2).rstrip("/"))
    return out


def written_paths(solve_sh: str) -> set[str]:
    """The paths ``solve_sh`` writes (``>``, ``>>``, ``tee``, ``mkdir``) anywhere: read back later
    (``cat a b > /app/all.log; grep X /app/all.log``), such a path is still no input."""
    return {m.group(1).rstrip("/") for m in ABS_PATH.finditer(solve_sh) if _WRITTEN.search(solve_sh[: m.start()])}


def _addresses(body: str) -> list[tuple[int, int, str]]:
    """The awk and sed addresses (``_ADDRESS``) in the quoted strings of ``body``: start, end, what they match."""
    found = []
    for span in _QUOTED_SPAN.finditer(body):
        at = span.start() + 1
        found += [(at + a.start(), at + a.end(), a.group(1)) for a in _ADDRESS.finditer(span.group(0)[1:-1])]
    return found


def script_references(solve_sh: str, output: str) -> list[str]:
    """What a solver must be told to reproduce ``solve_sh``'s output: the data paths it reads, the word literals
    it quotes (a user name, a level, a keyword) and the numbers it compares against (a threshold).

    The output path, system paths (but as a value the rule matches: ``$7 == "/bin/bash"``), shell words
    (``$VAR``, options) and the numbers 0 and 1 (header skips, counters) are left out. A demo run on fdf91cc
    cut "where the shell is `/bin/bash`" from an instruction as how-talk, since `/bin/bash` was no reference, and
    accepted what was left: "the lines ... that satisfy the condition"."""
    refs: list[str] = []
    body = "\n".join(ln.split(" #", 1)[0] for ln in solve_sh.splitlines() if not ln.lstrip().startswith("#"))
    written = written_paths(body)  # no input, also where the script reads it back
    values = pattern_paths(body)
    addresses = _addresses(body)
    for m in ABS_PATH.finditer(body):
        path = m.group(1).rstrip("/")
        if path in written or any(start <= m.start(1) < end for start, end, _ in addresses):
            continue
        if not any(c.isalnum() for c in path):  # `/.*` of `grep "^GET /.*HTTP"`: part of a pattern, no value
            continue
        system = (path + "/").startswith(_SYSTEM_PREFIXES) and path not in values
        if path != output and not system and path not in refs:
            refs.append(path)
    quoted = [w for m in _QUOTED.finditer(body) for w in _ALTERNATIVE.split(m.group(2))]
    matched = [part.strip(" ^$") for *_, a in addresses for part in _ALTERNATIVE.split(a)]
    # a separator after the value is no part of it: `home` of `'^home:'`
    words = [w.rstrip(":") for w in quoted + matched if len(w.rstrip(":")) > 1 and re.fullmatch(_WORD, w)]
    for word in words:
        if not word.startswith("-") and word.lower() not in _SHELL_WORDS and word not in refs:
            refs.append(word)
    for m in _COMPARED.finditer(body):
        number = m.group(1)
        if _FIELD_COUNT.search(body, 0, m.start()):
            continue  # awk's `NF == 2`: how a line splits, which the input hint shows, not a value of the rule
        if number not in ("0", "1", "-1") and number not in refs:
            refs.append(number)
    return refs


_SHELL_WORDS = frozenset(
    "utf-8 utf8 c posix true false yes no on off none null r w a rb wb ascii replace ignore strict".split()
)


def unnamed_references(instruction: str, solve_sh: str, output: str) -> list[str]:
    """The script's references (``script_references``) that the instruction never mentions: a blind solver
    cannot guess a threshold, a keyword or a directory it was not told."""
    missing = []
    # A value inside a path names nothing: /app/status_over_400.txt does not say "400" (yield series v13 #18), nor
    # does a bare errors_404.txt (a flywheel round on 4bb2b04, whose instruction stated no rule).
    prose = _FILE_NAME.sub(" ", ABS_PATH.sub(" ", instruction))
    for ref in script_references(solve_sh, output):
        if ref.startswith("/"):
            found = ref in instruction
        elif ref[0].isdigit() or ref[0] == "-":
            found = re.search(rf"(?<![\d.]){re.escape(ref)}(?!\d)", prose) is not None
        else:  # a whole word, any case: "POST" is not named by /app/countpost.txt
            found = re.search(rf"(?<![\w]){re.escape(ref)}(?![\w])", prose, re.IGNORECASE) is not None
        if not found:
            missing.append(ref)
    return missing


def _values(refs: list[str], solve_sh: str) -> list[str]:
    """The values among ``refs``: words, numbers and the paths inside ``solve_sh``'s quoted patterns."""
    in_patterns = pattern_paths(solve_sh)
    return [r for r in refs if not r.startswith("/") or r in in_patterns]


def unstated_rule(instruction: str, solve_sh: str, output: str) -> list[str]:
    """The values of ``solve_sh``'s rule (words and numbers, and the paths it matches: ``$7 == "/bin/bash"``) when
    ``instruction`` names none of them: the rule is not stated, and the values hint would be its only statement
    ("The rule uses these values: `root`." under "the lines ... that satisfy the condition"). Of the 60 accepted
    environments of the hackable-share log still on this VM, it flags 2, both read as misaligned; of the 124
    distinct final candidates on disk, 8: those 2, 5 that no blind solver reproduced (an instruction of paths
    and hints alone; "select different lines or records than the parent does") and one never validated."""
    values = _values(script_references(solve_sh, output), solve_sh)
    unnamed = set(unnamed_references(instruction, solve_sh, output))
    return values if values and all(v in unnamed for v in values) else []


def with_references(instruction: str, missing: list[str], solve_sh: str = "") -> str:
    """The instruction plus one sentence naming what it left out (paths as paths, values in backticks; a path
    inside one of ``solve_sh``'s quoted patterns is a value)."""
    if not missing:
        return instruction
    values = _values(missing, solve_sh)
    paths = [m for m in missing if m not in values]
    parts = []
    if paths:
        parts.append(f"The input{'s are' if len(paths) > 1 else ' is'} in " + ", ".join(paths) + ".")
    if values:
        parts.append("The rule uses these values: " + ", ".join(f"`{v}`" for v in values) + ".")
    return f"{instruction.rstrip()}\n{' '.join(parts)}"
