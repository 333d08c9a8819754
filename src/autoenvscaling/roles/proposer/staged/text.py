"""Pure text rules of the staged proposer: what counts as an instruction, what gives the answer away, the
format example, and the one-line findings a solver digest becomes."""

from __future__ import annotations

import re
from typing import Any

from autoenvscaling.roles.proposer.staged.grading import normalized
from autoenvscaling.roles.proposer.staged.spec import Compare

MAX_DATA_LINES = 80


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "task"


def clip_data(text: str) -> str:
    lines = text.splitlines()[:MAX_DATA_LINES]
    return "\n".join(lines)


def answer_in_instruction(instruction: str, outputs: dict[str, str]) -> str | None:
    """Why the instruction gives the recorded answer away, or None: the whole output (8+ characters), or two
    or more of its lines (8+ characters each), appear in it verbatim."""
    words = " ".join(instruction.split())
    for path, text in outputs.items():
        lines = [ln for ln in normalized(text) if len(ln) >= 8]
        whole = " ".join(" ".join(normalized(text)).split())
        if len(whole) >= 8 and whole in words:
            return f"the instruction contains the whole expected content of {path}"
        if len(lines) >= 2 and sum(ln in words for ln in lines) >= 2:
            return f"the instruction quotes lines of the expected {path}"
    return None


def with_format_hint(instruction: str, path: str, outputs: dict[str, str], compare: Compare) -> str:
    """The instruction plus one line of the recorded output as a format example, when the output has 3 or more
    lines (one line of several pins the format down without giving the answer away)."""
    lines = [ln for ln in normalized(outputs.get(path, "")) if ln]
    if len(lines) < 3 or "`" in lines[0]:
        return instruction
    which = "The first line" if compare == "exact" else "One line"
    return f"{instruction.rstrip()}\n{which} of {path} reads, for example: `{lines[0]}`"


def looks_like_prose(text: str) -> bool:
    """An instruction is sentences, not a shell line or a bare path: 8+ words, letters mostly."""
    words = text.split()
    if len(words) < 8 or text.lstrip().startswith(("#!", "$", "awk ", "grep ", "cat ", "sed ", "echo ")):
        return False
    letters = sum(c.isalpha() for c in text)
    return letters >= 0.6 * len(text.replace(" ", "").replace("\n", ""))


def ensure_output_named(instruction: str, output: str) -> str:
    """The harness grades ``output``: an instruction that never names it gets one plain sentence more."""
    if output in instruction:
        return instruction
    return f"{instruction.rstrip()}\nWrite the result to {output}."


def findings_from_digest(digests: list[Any], limit: int = 6) -> list[str]:
    """One short line per solver attempt: what failed (first error) or that it was solved."""
    out: list[str] = []
    for d in digests[:limit]:
        if d.solved:
            out.append(f"solved {d.task} in {d.commands} commands")
            continue
        err = next((ln for fc in d.failed_commands for ln in fc.error_lines), "")
        why = f": {err[:120]}" if err else (f" ({d.exit_reason})" if d.exit_reason else "")
        out.append(f"failed {d.task}{why}")
    return out
