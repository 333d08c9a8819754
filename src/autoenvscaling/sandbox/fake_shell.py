"""The fake sandbox's command language: a small, honest subset of bash.

Words with '...' / "..." quoting and backslashes; ``$VAR`` and ``${VAR}`` expansion (not inside single
quotes); ``;``, newlines, ``&&`` and ``||``; redirections ``>``, ``>>``, ``2>``, ``2>&1``, ``>&2``; ``#`` comments.
Anything else (pipes, subshells, globbing) is not understood: such a command fails with exit code 127, and a
test that needs it registers a handler on the fake instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

OPERATORS = ("2>&1", ">&2", "&&", "||", ">>", "2>", ";", ">", "|", "&", "(", ")")
SEPARATORS = (";", "&&", "||")
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


class ShellExit(Exception):
    """``exit N`` (or a failure that ends the exec): the exec's status is ``code``."""

    def __init__(self, code: int) -> None:
        self.code = code


class ShellTimeout(Exception):
    """The exec ran past its deadline (exit status 124)."""


class FakeSyntaxError(Exception):
    pass


@dataclass
class Token:
    text: str  # an operator, or a word's raw text
    op: bool = False
    parts: list[tuple[str, bool]] = field(default_factory=list)  # word pieces: (text, expand $VARs in it)

    def expand(self, env: dict[str, str]) -> str:
        # expansion waits until the command runs, so `export A=1; echo $A` sees the export
        return "".join(_VAR.sub(lambda m: env.get(m.group(1) or m.group(2), ""), t) if e else t for t, e in self.parts)


@dataclass
class Simple:
    """One simple command: its words and where its output goes."""

    words: list[str] = field(default_factory=list)
    stdout_file: str | None = None
    stdout_append: bool = False
    stderr_file: str | None = None
    stderr_to_stdout: bool = False
    stdout_to_stderr: bool = False
    unsupported: str | None = None  # an operator we do not implement


def tokenize(cmd: str) -> list[Token]:
    tokens: list[Token] = []
    word: list[tuple[str, bool]] | None = None
    i = 0
    while i < len(cmd):
        c = cmd[i]
        if word is None:
            if c == "#":
                i = cmd.find("\n", i) if "\n" in cmd[i:] else len(cmd)
                continue
            op = next((o for o in OPERATORS if cmd.startswith(o, i)), None)
            if c == "\n" or op:
                tokens.append(Token(";" if c == "\n" else str(op), op=True))
                i += 1 if c == "\n" else len(str(op))
                continue
        if c in " \t\n" or (word is not None and any(cmd.startswith(o, i) for o in OPERATORS if o[0] != "2")):
            if word is not None:
                tokens.append(Token("".join(t for t, _ in word), parts=word))
                word = None
            if c in " \t":
                i += 1
            continue
        word = word if word is not None else []
        if c == "'":
            end = cmd.find("'", i + 1)
            if end < 0:
                raise FakeSyntaxError("unterminated '")
            word.append((cmd[i + 1 : end], False))
            i = end + 1
        elif c == '"':
            end = i + 1
            while end < len(cmd) and cmd[end] != '"':
                end += 2 if cmd[end] == "\\" else 1
            if end >= len(cmd):
                raise FakeSyntaxError('unterminated "')
            inner = re.sub(r'\\(["\\$`])', r"\1", cmd[i + 1 : end])
            word.append((inner, True))
            i = end + 1
        elif c == "\\" and i + 1 < len(cmd):
            word.append((cmd[i + 1], False))
            i += 2
        else:
            m = re.match(r"[^\s'\"\\;&|<>()]+", cmd[i:])
            chunk = m.group(0) if m else c
            word.append((chunk, True))
            i += len(chunk)
    if word is not None:
        tokens.append(Token("".join(t for t, _ in word), parts=word))
    return tokens


def split(tokens: list[Token]) -> list[tuple[str, list[Token]]]:
    """Sequence of (connector before it, tokens) for each simple command."""
    parts: list[tuple[str, list[Token]]] = [(";", [])]
    for t in tokens:
        if t.op and t.text in SEPARATORS:
            parts.append((t.text, []))
        else:
            parts[-1][1].append(t)
    return [p for p in parts if p[1]]


def parse_simple(tokens: list[Token], env: dict[str, str]) -> Simple:
    s = Simple()
    it = iter(tokens)
    for t in it:
        if not t.op:
            s.words.append(t.expand(env))
        elif t.text in (">", ">>", "2>"):
            target = next(it, None)
            if target is None or target.op:
                raise FakeSyntaxError(f"missing file after {t.text}")
            if t.text == "2>":
                s.stderr_file = target.expand(env)
            else:
                s.stdout_file, s.stdout_append = target.expand(env), t.text == ">>"
        elif t.text == "2>&1":
            s.stderr_to_stdout = True
        elif t.text == ">&2":
            s.stdout_to_stderr = True
        else:
            s.unsupported = t.text
    return s


def printf(fmt: str, args: list[str]) -> str:
    """bash's printf for %s, %d, %% and backslash escapes; the format repeats while arguments remain."""
    if "\\" in fmt:
        fmt = fmt.encode("latin-1", "backslashreplace").decode("unicode_escape")
    out, rest = [], list(args)
    while True:
        used = 0

        def conv(m: re.Match[str]) -> str:
            nonlocal used
            if m.group(0) == "%%":
                return "%"
            used += 1
            value = rest.pop(0) if rest else ""
            return str(int(value or 0)) if m.group(0) == "%d" else value

        out.append(re.sub(r"%[sd%]", conv, fmt))
        if not rest or not used:
            return "".join(out)
