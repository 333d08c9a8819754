"""Pure text rules of the staged proposer: what counts as an instruction, what gives the answer away, the
format example, the files an instruction names that the script never reads or the image does not hold, and the
one-line findings a solver digest becomes."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from typing import Any

from autoenvscaling.roles.proposer.staged.grading import normalized
from autoenvscaling.roles.proposer.staged.references import ABS_PATH, written_paths
from autoenvscaling.roles.proposer.staged.spec import Compare
from autoenvscaling.validate.exploits import instruction_answers

MAX_DATA_LINES = 80


def clip_data(text: str) -> str:
    lines = text.splitlines()[:MAX_DATA_LINES]
    return "\n".join(lines)


# An idea about repeats: copies of the file's lines are its cases (how many times, each once, the distinct ones).
_ABOUT_REPEATS = re.compile(
    r"\b(?:uniq\w*|duplicat\w*|distinct|once|twice|repeat\w*|count\w*|occurr\w*|how many|frequen\w*|times)\b", re.I
)


# A comment line that announces the lines around it as added: "# new line 1", "# Add new lines to ... for the
# new task", "# another new setting": 10 of 63 recorded data replies held one.
_ANNOUNCED = re.compile(r"^\s*(?:#|//|;)+.*\b(?:new|add|added|adding|append\w*)\b", re.I)


# A shell command that appends one line to a file: `echo "LINE" >> /app/data/passwd`, `printf 'LINE\n' >> FILE`.
_APPENDS = re.compile(r"""^\s*(?:echo(?:\s+-[neE]+)?|printf)\s+(?:"([^"]*)"|'([^']*)'|([^"'>]+?))\s*>>?\s*\S+\s*$""")


def appended_line(line: str) -> str | None:
    """The line that ``line`` appends to a file when it is a shell command that does (``echo "X" >> FILE``), else
    None. Asked for new lines of passwd, the embedded model answered with ``echo "new_user:x:1008:...:/bin/bash" >>
    /app/data/passwd`` five times (3 of 99 recorded data replies); appended as they stood, they became five lines
    of an accepted task's passwd, and of its expected output."""
    if not (m := _APPENDS.match(line)):
        return None
    text = next(g for g in m.groups() if g is not None).strip()
    return text.removesuffix("\\n") if line.lstrip().startswith("printf") else text


def data_lines(reply: str, base: str) -> tuple[list[str], int]:
    """The non-blank lines of a data ``reply``, each shell command that appends a line read as that line
    (``appended_line``), unless the input file ``base``'s own lines are such commands; and how many were."""
    scripted = any(appended_line(ln) is not None for ln in base.splitlines())
    lines, commands = [], 0
    for raw in reply.splitlines():
        appended = None if scripted else appended_line(raw)
        commands += appended is not None
        line = raw if appended is None else appended
        if line.strip():
            lines.append(line)
    return lines, commands


def new_lines(lines: list[str], existing: str, change: str) -> list[str]:
    """The data stage's ``lines`` less the ones ``existing`` (the input file) already holds and the repeats among
    them, unless the idea ``change`` is about repeats, and less the comments that announce lines as new. Asked for
    new lines, the embedded model answered with lines the file holds: 147 of the 344 lines of 63 recorded data
    replies, 13 of which began with a copy of the whole file. Appended, they doubled the file's lines (a task about
    alice's passwd line had two of them); left out, a reply of copies only leaves the file as it was, with the same
    cases. An announcing comment misled an accepted config task: its instruction asked for "the lines where the
    'comment' starts with 'a'", the data stage's "# a new line" and "# another new line", where its tests wanted
    the two settings below them."""
    lines = [ln for ln in lines if not _ANNOUNCED.match(ln)]
    if _ABOUT_REPEATS.search(change):
        return lines
    seen = {ln.rstrip() for ln in existing.splitlines()}
    kept = []
    for line in lines:
        if line.rstrip() not in seen:
            kept.append(line)
            seen.add(line.rstrip())
    return kept


def with_format_hint(instruction: str, path: str, outputs: dict[str, str], compare: Compare) -> str:
    """The instruction plus a format example of the recorded output: its line count and one of its lines when it
    has 3 or more (one line of several pins the format down without giving the answer away; the count is a check
    a solver can run, ``wc -l``, where a small one otherwise submits a filter that kept 2 lines of 7), else the
    shape of its lines with every value replaced by its kind (``<number> <number>``), which gives no value away.
    Where the line and the count would give the output away (its lines are that line n times, or count on from
    it: ``instruction_answers``), the shape stands in for the line: "holds 8 lines; the first reads `10.0.0.1`"
    over the addresses 10.0.0.1 to 10.0.0.8 let a solver write them without reading the log (accepted on
    2242af9)."""
    lines = normalized(outputs.get(path, ""))
    if not lines or "`" in "".join(lines):
        return instruction
    n, text = len(lines), instruction.rstrip()
    if n >= 3:
        which = "the first" if compare == "exact" else "one of them"
        shown = f"{text}\n{path} holds {n} lines; {which} reads, for example: `{lines[0]}`"
        if not instruction_answers(shown, "\n".join(lines)):
            return shown
    shapes = [line_shape(ln) for ln in lines]
    if n == 1:
        return f"{text}\n{path} holds one line of the form `{shapes[0]}`."
    if len(set(shapes)) == 1:
        return f"{text}\n{path} holds {n} lines, each of the form `{shapes[0]}`."
    forms = " and ".join(f"`{shape}`" for shape in dict.fromkeys(shapes))
    return f"{text}\n{path} holds {n} lines, of the forms {forms}."


_NUMBER = re.compile(r"[-+]?\d+")
_DECIMAL = re.compile(r"[-+]?\d*\.\d+(?:[eE][-+]?\d+)?|[-+]?\d+[eE][-+]?\d+")
_JOINED = re.compile(r"\d+(?:[.:/-]\d+)+")


def line_shape(line: str) -> str:
    """A line's space-separated fields as their kinds: ``<number>``, ``<decimal>``, ``<word>``; numbers joined by
    ``.``, ``:``, ``/`` or ``-`` as each number's kind (``10.0.0.1`` -> ``<number>.<number>.<number>.<number>``);
    punctuation-only fields as they are (``:``, ``-``, ``|``): ``404 2`` -> ``<number> <number>``."""
    kinds = []
    for field in line.split(" "):
        if _NUMBER.fullmatch(field):
            kinds.append("<number>")
        elif _DECIMAL.fullmatch(field):
            kinds.append("<decimal>")
        elif _JOINED.fullmatch(field):
            kinds.append(re.sub(r"\d+", "<number>", field))
        elif not any(c.isalnum() for c in field):
            kinds.append(field)
        else:
            kinds.append("<word>")
    return " ".join(kinds)


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


def _names(text: str, path: str) -> bool:
    """``text`` holds ``path`` itself (not a longer name that starts with it; a full stop may follow)."""
    return re.search(re.escape(path) + r"(?![\w-]|\.\w)", text) is not None


def _reads(solve_sh: str, path: str) -> bool:
    """``solve_sh`` names ``path``, a glob that matches it, or its directory as a whole (``/app/logs/*``)."""
    if _names(solve_sh, path):
        return True
    if any(fnmatch.fnmatchcase(path, g) for g in _GLOB.findall(solve_sh)):
        return True
    parent = path.rsplit("/", 1)[0]
    return bool(parent) and re.search(re.escape(parent) + r"/?(?=[\s'\";|)]|$)", solve_sh) is not None


_GLOB = re.compile(r"/[\w./-]*[*?][\w./*?-]*")


def unread_inputs(instruction: str, solve_sh: str, inputs: Iterable[str]) -> list[str]:
    """The input files the instruction names that ``solve_sh`` never reads: a blind solver reads every file it is
    told about (three logs named, two read: its output is not the recorded one)."""
    return [p for p in inputs if _names(instruction, p) and not _reads(solve_sh, p)]


def phantom_paths(
    instruction: str, inputs: Iterable[str], output: str, solve_sh: str, dockerfile: str = ""
) -> list[str]:
    """The paths the instruction names under the top directory of an input or of the output (``/app``) that are
    no input, no output, no directory of either and nothing ``solve_sh`` writes: files the image does not hold
    (yield series v13 #9 named ``/app/data/access.log.gz`` beside the one real log, and every blind attempt spent
    its turns trying to decompress it). A path whose file name ``dockerfile`` mentions is left out: a RUN line
    may make it (``truncate -s 2M backup/db.dump``)."""
    known = {*inputs, output}
    dirs = {p[:i] for p in known for i in range(1, len(p)) if p[i] == "/"}
    roots = {p.split("/")[1] for p in known if p.count("/") >= 2}
    exists = known | dirs | written_paths(solve_sh)
    out: list[str] = []
    for m in ABS_PATH.finditer(instruction):
        path = m.group(1).rstrip("./")  # a full stop after it, a glob's `*` (`/app/logs/access.log.*`)
        made = re.search(rf"(?<![\w.-]){re.escape(path.rsplit('/', 1)[-1])}(?![\w-]|\.\w)", dockerfile) is not None
        if path.count("/") and path.split("/")[1] in roots and path not in exists | set(out) and not made:
            out.append(path)
    return out


def with_unread_note(instruction: str, unread: list[str], inputs: Iterable[str], solve_sh: str) -> str:
    """The instruction plus one sentence saying which named inputs are not part of the rule, and which named
    files do not exist (those of ``unread`` that are no input)."""
    if not unread:
        return instruction
    inputs = list(inputs)
    read = [p for p in inputs if p not in unread and _reads(solve_sh, p)]
    idle = [p for p in unread if p in inputs]
    absent = [p for p in unread if p not in inputs]
    parts = [f"{', '.join(idle)} {'is' if len(idle) == 1 else 'are'} not part of the task"] if idle else []
    parts += [f"there is no {', '.join(absent)}"] if absent else []
    note = ", and ".join(parts) + (f": use only {', '.join(read)}." if read else ".")
    return f"{instruction.rstrip()}\n{note[0].upper()}{note[1:]}"


_AWK_PROGRAM = re.compile(r"\bawk\b([^'\n|;]*)'([^']*)'([^|;\n]*)")
_AWK_FIELD = re.compile(r"\$\(?(\d+|NF)\)?(?![\w(])")


def awk_fields(solve_sh: str, path: str, most: int = 3) -> list[str]:
    """The fields (``4``, ``NF``) that the awk programs of ``solve_sh`` which read ``path`` themselves (it follows
    the program) take with awk's default separator (runs of blanks), first use first, at most ``most``; none
    when such a program sets its own separator (``-F``, ``FS``). An awk later in a pipeline reads another
    command's lines, whose fields are not the input's."""
    fields: list[str] = []
    for m in _AWK_PROGRAM.finditer(solve_sh):
        if not _names(m.group(3), path):
            continue
        if "-F" in m.group(1) or re.search(r"\bFS\s*=", m.group(2)):
            return []
        fields += [f.group(1) for f in _AWK_FIELD.finditer(m.group(2)) if f.group(1) != "0"]
    return list(dict.fromkeys(fields))[:most]


def field_note(line: str, fields: list[str]) -> str:
    """Which value each of ``fields`` is in ``line`` split as awk splits it: a solver told "the status code" of
    `10.0.0.1 GET /index.html 200` reached for ``$3`` in yield series v12, where the recorded solution read ``$4``."""
    words = line.split()
    parts = []
    for f in fields:
        n = len(words) if f == "NF" else int(f)
        if 1 <= n <= len(words):
            last = " (the last)" if n == len(words) else ""
            parts.append(f"field {n}{last} is `{words[n - 1]}`")
    return f"split at blanks, its {', '.join(parts)}" if parts else ""


def field_map(line: str, most: int = 12) -> str:
    """``line`` split as awk splits it, each field by number: ``$1 `10.0.0.1`, $2 `GET`, ...`` (at most ``most``)."""
    words = line.split()
    shown = ", ".join(f"${n} `{w}`" for n, w in enumerate(words[:most], 1))
    return f"split at blanks: {shown}" + (f", ... ({len(words)} fields)" if len(words) > most else "")


def with_input_hint(instruction: str, inputs: dict[str, str], solve_sh: str, output: str = "") -> str:
    """The instruction plus the first line of each text input the script reads (the fields and separators a
    solver needs to parse it), when that line is short and the instruction does not quote it already. After
    the first such line, which value each field the script's awk reads holds in it (``field_note``). A ``.gz``
    input's line is its decompressed text's. The example must not be the answer (the probes'
    ``hackable:instruction-answer``): where the recorded ``output`` is that line, or one of the values the note
    shows (a filter that keeps one line, or prints one field of one line), the next input line whose hint gives
    nothing away is shown instead, and none where no line does."""
    hints: list[str] = []
    for path, text in inputs.items():
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if path not in solve_sh or len(lines) < 2:
            continue
        name = f"{path}, once decompressed," if path.endswith(".gz") else path
        fields = awk_fields(solve_sh, path) if not hints else []

        def hint(line: str, name: str = name, fields: list[str] = fields) -> str:
            note = field_note(line, fields)
            return f"A line of {name} looks like: `{line}`" + (f"; {note}." if note else "")

        first = next((ln for ln in lines if not (output and instruction_answers(hint(ln), output))), None)
        if first is None or len(first) > 160 or "`" in first or first in instruction:
            continue
        hints.append(hint(first))
    if not hints:
        return instruction
    return instruction.rstrip() + "\n" + "\n".join(hints)


_ORDINAL = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth")
_SORT_STAGE = re.compile(r"(?:^|\|)\s*sort\b([^|>]*)")


def _sort_flags(args: str) -> tuple[set[str], str | None, str | None]:
    """(one-letter flags, the first -k field, the -t separator) of a ``sort`` command's arguments."""
    flags: set[str] = set()
    key = sep = None
    tokens = args.split()
    i = 0
    while i < len(tokens):
        tok = tokens[i].strip("'\"")
        if tok in ("-k", "-t") and i + 1 < len(tokens):
            tok, i = tok + tokens[i + 1].strip("'\""), i + 1
        if tok.startswith("-k"):
            m = re.match(r"(\d+)(?:\.\d+)?(?:,\d+(?:\.\d+)?)?([a-zA-Z]*)", tok[2:])
            if m:
                key = key or m.group(1)
                flags |= set(m.group(2))
        elif tok.startswith("-t"):
            sep = tok[2:] or None
        elif tok.startswith("-") and not tok.startswith("--"):
            flags |= set(tok[1:])
        elif tok in ("--numeric-sort", "--general-numeric-sort"):
            flags.add("n")
        elif tok == "--reverse":
            flags.add("r")
        elif tok == "--unique":
            flags.add("u")
        i += 1
    return flags, key, sep


def order_sentence(solve_sh: str, output: str) -> str | None:
    """What order ``sort`` leaves the output's lines in, said in words, from the script's last ``sort`` on the
    line that writes ``output``; None when that line does not sort (the input's order, or a program's)."""
    lines = [ln for ln in solve_sh.splitlines() if output in ln and not ln.lstrip().startswith("#")]
    stages = _SORT_STAGE.findall(lines[-1]) if lines else []
    if not stages:
        return None
    flags, key, sep = _sort_flags(stages[-1])
    numeric = bool(flags & {"n", "g", "h"})
    if key is None:
        what = "by the number at the start of each line" if numeric else "by the whole line"
    else:
        field = _ORDINAL[int(key) - 1] if 0 < int(key) <= len(_ORDINAL) else f"number {key}"
        split = f"fields separated by `{sep}`" if sep else "fields separated by spaces"
        what = f"by their {field} field ({split})" + (", as numbers" if numeric else "")
    if numeric:
        way = "largest first" if "r" in flags else "smallest first"
    else:
        way = "in reverse character order" if "r" in flags else "in byte order (as `LC_ALL=C sort`)"
    once = " Each distinct line appears once." if "u" in flags else ""
    return f"The lines of {output} are sorted {what}, {way}.{once}"


def input_order_source(recorded: str, inputs: dict[str, str]) -> str | None:
    """The input file whose lines hold ``recorded``'s lines (two or more) as a subsequence, in that order: the
    output of a filter that kept the input's order. None when no input does."""
    want = [ln.rstrip() for ln in recorded.splitlines() if ln.strip()]
    if len(want) < 2:
        return None
    for path, text in inputs.items():
        i = 0
        for line in text.splitlines():
            if i < len(want) and line.rstrip() == want[i]:
                i += 1
        if i == len(want):
            return path
    return None


def with_order_hint(
    instruction: str,
    solve_sh: str,
    output: str,
    compare: Compare,
    recorded: str | None = None,
    inputs: dict[str, str] | None = None,
) -> str:
    """The instruction plus the sentence of ``order_sentence`` when the comparison keeps the line order; without a
    ``sort``, when the ``recorded`` output's lines keep their order in an input file, a sentence that says so."""
    if compare == "sorted_lines":
        return instruction
    sentence = order_sentence(solve_sh, output)
    if sentence is None and recorded is not None:
        source = input_order_source(recorded, inputs or {})
        if source is not None:
            sentence = f"The lines of {output} keep the order they have in {source}."
    return f"{instruction.rstrip()}\n{sentence}" if sentence else instruction
