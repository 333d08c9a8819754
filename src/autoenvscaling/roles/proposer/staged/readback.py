"""The blind self-check of a staged episode: scripts written from the final instruction alone (the proposer as a
reader who never saw the solution) run in the draft's image, and their outputs are compared with the recorded one.

``read_back`` asks the readers and says what they made (``ReadBack``); ``flow.finish`` decides what follows: a
reader that made the recorded output ends the check, two readers that agree on another output replace the
solution, and when no reader made it the instruction is rewritten once, shown what a reader made instead
(``reader_problem``), and read back again.
"""

from __future__ import annotations

from dataclasses import dataclass

from autoenvscaling.roles.proposer.staged import record as rec
from autoenvscaling.roles.proposer.staged.calls import BudgetSpent
from autoenvscaling.roles.proposer.staged.episode import Episode
from autoenvscaling.roles.proposer.staged.grading import matches
from autoenvscaling.roles.proposer.staged.spec import Recording

_SHOWN_LINES = 4


@dataclass
class ReadBack:
    """What the readers of one instruction made."""

    asked: int = 0
    reproduced: bool = False  # a reader's output matched the recorded one
    agreed: str | None = None  # the script of the first of two clean readers that agree on another output
    seen: str | None = None  # the first clean reader's output that differs from the recorded one
    failure: str | None = None  # the first failed reader's problem, when no reader ran cleanly

    @property
    def missed(self) -> bool:
        """Readers ran, none made the recorded output, and no two agreed on another."""
        return self.asked > 0 and not self.reproduced and self.agreed is None


def read_back(ep: Episode, recording: Recording, readers: int, *, first: int = 1) -> ReadBack:
    """Scripts written from the final instruction alone, run in the draft's image.

    Up to ``readers`` readers whose scripts run cleanly are asked for, with one call to spare for a reader whose
    script failed (in a recorded demo run the one clean reader of two differed from a wrong solution, and a lone
    reader decides nothing). Stops at the first reader whose output matches the recorded one, or at the first
    two clean readers that agree with each other on another output. One reader alone is not enough to replace a
    solution: in yield series v11 a lone reader's reordered copy of a filter's output replaced a solution that
    kept the input's order, as its instruction said. Readers are numbered from ``first`` in the log.
    """
    want = recording.outputs.get(ep.output) or ""
    clean: list[tuple[str, str]] = []  # (script, output) of readers that ran cleanly
    result = ReadBack()
    while result.asked < readers + 1 and len(clean) < readers:
        result.asked += 1
        asked = first + result.asked - 1
        try:
            script = ep.ask_reader()
        except BudgetSpent as e:  # the recorded task stands; the budget ends only the self-check
            ep.log.self_check.append(f"reader {asked}: not asked ({e.reason})")
            result.asked -= 1
            break
        assert ep.last_draft is not None  # the recorded draft: the reader runs in the image the solver gets
        run = ep.runner.run(ep.last_draft, script, [ep.output])
        problem = rec.mechanical_problem(run, ep.inputs, script)
        got = run.outputs.get(ep.output)
        if problem is None and got is not None and matches(got, want, ep.compare):
            ep.log.self_check.append(f"reader {asked}: same output")
            ep.caller.note("self-check", f"reader {asked} (a script from the instruction alone): the same output")
            result.reproduced = True
            return result
        if problem is not None:
            seen = f"{problem[0]}: {problem[1]}"[:200]
            result.failure = result.failure or seen
        else:
            seen = f"a different output ({len((got or '').splitlines())} lines, recorded {len(want.splitlines())})"
            if result.seen is None:
                result.seen = got or ""
        ep.log.self_check.append(f"reader {asked}: {seen}")
        ep.caller.note("self-check", f"reader {asked} (a script from the instruction alone): {seen}")
        if problem is None:
            if any(matches(out, got or "", ep.compare) for _, out in clean):
                result.agreed = next(s for s, out in clean if matches(out, got or "", ep.compare))
                return result
            clean.append((script, got or ""))
    if clean and readers > 1:
        ep.log.self_check.append("no two readers agree: the solution stands")
    return result


def _head(text: str) -> str:
    lines = text.splitlines()
    shown = "\n".join(ln[:160] for ln in lines[:_SHOWN_LINES])
    return shown + (f"\n... ({len(lines)} lines in all)" if len(lines) > _SHOWN_LINES else "") if lines else "(empty)"


def reader_problem(readback: ReadBack, output: str) -> str:
    """What the rewrite of an instruction that no reader followed to the recorded output is told."""
    if readback.seen is not None:
        made = f"made {output} start like this instead:\n{_head(readback.seen)}\n"
    else:
        made = f"could not make {output} ({readback.failure or 'their scripts failed'}).\n"
    return (
        f"A person who followed your previous instruction without seeing the script {made}"
        "Say what decides which lines the file holds, what one line holds, and their order, so that a reader "
        "makes exactly the script's file."
    )
