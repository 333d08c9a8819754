"""Just enough Dockerfile parsing for static checks: instructions with line numbers, stages, COPY sources.

Not a full parser (no heredocs, no escape-directive changes); lint only needs to know which images a
build starts from, whether the final stage sets a WORKDIR, and which context paths COPY/ADD bring in.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Instruction:
    keyword: str  # upper-cased, e.g. "COPY"
    args: str  # the rest of the logical line, continuations joined
    line: int  # 1-based line where the instruction starts


@dataclass
class Stage:
    base: str  # the FROM argument, ARG defaults substituted where known
    name: str | None
    line: int
    instructions: list[Instruction] = field(default_factory=list)


def parse_instructions(text: str) -> list[Instruction]:
    """Logical instructions: comments dropped, backslash continuations joined."""
    out: list[Instruction] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue  # comment lines inside a continuation are skipped by Docker too
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending.append(stripped[:-1])
            continue
        pending.append(stripped)
        out.append(_instruction(" ".join(pending), start))
        pending = []
    if pending:
        out.append(_instruction(" ".join(pending), start))
    return out


def _instruction(logical: str, line: int) -> Instruction:
    keyword, _, args = logical.strip().partition(" ")
    return Instruction(keyword=keyword.upper(), args=args.strip(), line=line)


_VAR = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}|\$(\w+)")


def _substitute(value: str, args: dict[str, str]) -> str:
    def repl(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(3)
        if name in args:
            return args[name]
        return m.group(2) if m.group(2) is not None else m.group(0)

    return _VAR.sub(repl, value)


def parse_stages(text: str) -> list[Stage]:
    """Build stages in order. ARGs declared before the first FROM are substituted into FROM lines."""
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for ins in parse_instructions(text):
        if ins.keyword == "FROM":
            words = [w for w in ins.args.split() if not w.startswith("--")]
            base = _substitute(words[0], global_args) if words else ""
            name = words[2] if len(words) >= 3 and words[1].lower() == "as" else None
            stages.append(Stage(base=base, name=name, line=ins.line))
        elif not stages:
            if ins.keyword == "ARG":
                key, sep, default = ins.args.partition("=")
                if sep:
                    global_args[key.strip()] = default.strip().strip("\"'")
        else:
            stages[-1].instructions.append(ins)
    return stages


def external_bases(stages: list[Stage]) -> list[Stage]:
    """Stages whose FROM names an image, not an earlier stage."""
    names: set[str] = set()
    out: list[Stage] = []
    for stage in stages:
        if stage.base.lower() not in names:
            out.append(stage)
        if stage.name:
            names.add(stage.name.lower())
    return out


def final_stage_sets_workdir(stages: list[Stage]) -> bool:
    """Whether the image's last stage (or a stage it is built FROM) has a WORKDIR."""
    by_name = {s.name.lower(): s for s in stages if s.name}
    stage = stages[-1] if stages else None
    seen: set[int] = set()
    while stage is not None and id(stage) not in seen:
        seen.add(id(stage))
        if any(i.keyword == "WORKDIR" for i in stage.instructions):
            return True
        stage = by_name.get(stage.base.lower())
    return False


def copy_sources(ins: Instruction) -> list[str]:
    """Context paths a COPY/ADD brings in; empty for ``--from=`` copies (those come from other stages)."""
    if ins.keyword not in ("COPY", "ADD"):
        return []
    flags: list[str] = []
    rest = ins.args
    while rest.startswith("--"):
        flag, _, rest = rest.partition(" ")
        flags.append(flag)
        rest = rest.lstrip()
    if any(f.startswith("--from") for f in flags) or rest.startswith("<<"):
        return []  # another stage's files, or a heredoc's inline content
    if rest.startswith("["):
        try:
            words = [str(w) for w in json.loads(rest)]
        except (ValueError, TypeError):
            return []
    else:
        try:
            words = shlex.split(rest)
        except ValueError:
            words = rest.split()
    return words[:-1]
