"""What a staged episode's failed run is told, and when the model's data lines are asked for again: the
repairs of the solve loops (``flow``) that read the failure, the script and the inputs, with no model call."""

from __future__ import annotations

from autoenvscaling.roles.proposer.staged import record as rec
from autoenvscaling.roles.proposer.staged.episode import Episode
from autoenvscaling.roles.proposer.staged.fixes import misread_field, missing_paths, unmatched_grep
from autoenvscaling.roles.proposer.staged.text import field_map

_NOTHING_SELECTED = (rec.OUTPUT_EMPTY, rec.OUTPUT_WITHOUT_DATA)


def _selects_nothing(ep: Episode, problem: tuple[str, str]) -> bool:
    return problem[0] in _NOTHING_SELECTED or _unmatched(ep, problem) is not None


def _unmatched(ep: Episode, problem: tuple[str, str]) -> str | None:
    """A failed script's grep pattern that no input line holds (``fixes.unmatched_grep``)."""
    if problem[0] != rec.SOLUTION_FAILED or "exited with 1:" not in problem[1]:
        return None
    return unmatched_grep(ep.files.solve_sh, ep.inputs)


def _misread(ep: Episode, problem: tuple[str, str]) -> tuple[str, int, str] | None:
    """An awk test on a field no input line passes, which another field passes (``fixes.misread_field``)."""
    return misread_field(ep.files.solve_sh, ep.inputs) if problem[0] in _NOTHING_SELECTED else None


def redo_data(ep: Episode, problem: tuple[str, str], done: bool) -> bool:
    """Once per episode, when the solution selected nothing from an input the model added lines to, ask for those
    lines again (and keep the script): in a recorded `make demo` run the lines added for "status greater than
    500" all had status 500, and three solutions in a row wrote an empty file. A grep whose pattern no input line
    holds asks for lines even when the idea wanted none (v16 A1 #7 and #10: `error` in logs without the word).
    True when it asked."""
    if done or not _selects_nothing(ep, problem) or _misread(ep, problem) is not None:
        return False  # a test on the wrong field selects nothing from any lines: the script is what to fix
    if not ep.wants_data() and (ep.main_input is None or _unmatched(ep, problem) is None):
        return False
    ep.log.decisions.append(f"fix_data: {problem[0]}")
    ep.ask_data(explained(ep, problem))
    return True


def explained(ep: Episode, problem: tuple[str, str]) -> str:
    """The failure shown with a repair; a run that selected nothing also gets the first line of the first input
    the script names, split into awk's numbered fields (yield series v13 #14: three scripts in a row matched
    ``/^40[0-9]/`` against lines that start with an IP); a script that failed on a grep whose pattern no input
    line holds is told so (grep exits 1 when it selects nothing), and one that read files that do not exist gets
    the inputs' names (v16 A1 #4: three scripts in a row read `/app/data/file1.txt`); an awk test on the wrong
    field is told which field passes it (v16 A1 #12)."""
    if pattern := _unmatched(ep, problem):
        return (
            f"{problem[1]}\nNo input line holds `{pattern}`: the grep selects nothing and exits 1, which ends the "
            "script. Use a value the input lines hold (or add lines that hold it)."
        )
    absent = [p for p in missing_paths(problem[1]) if p not in ep.inputs and p != ep.output]
    if problem[0] == rec.SOLUTION_FAILED and absent and ep.inputs:
        return f"{problem[1]}\nThere is no {', no '.join(absent)}: the input files are {', '.join(ep.inputs)}."
    if problem[0] not in _NOTHING_SELECTED:
        return problem[1]
    if misread := _misread(ep, problem):
        test, field, value = misread
        return (
            f"{problem[1]}\nNo input line passes `{test}`, but field ${field} does (`{value}`): count the fields "
            "of an input line and test the field the rule is about."
        )
    for path, text in ep.inputs.items():
        line = next((ln for ln in text.splitlines() if ln.strip()), "")
        if path in ep.files.solve_sh and line:
            return f"{problem[1]}\nA line of {path}, {field_map(line)}"
    return problem[1]
