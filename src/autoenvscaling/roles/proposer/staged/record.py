"""The harness runs a draft's solution in the draft's own image: to show the model what happened (observe),
to record the expected outputs behind guards (record), and to run a parent's solution in a child (cross-oracle).

Every run is a fresh, network-less container of the built image; nothing the model wrote runs on the host.

Guards of ``record``, each with its own check id:

- ``solution-failed``      solve.sh exited non-zero (or timed out), or its stderr says a file it read is missing
- ``output-missing``       a declared output does not exist afterwards
- ``output-empty``         a declared output is empty (or only whitespace)
- ``output-too-large``     a declared output is larger than the cap
- ``output-copies-input``  a declared output equals one of the input data files, or several of them joined
- ``output-in-image``      the output exists before the solution runs, or its content is already in the image
- ``output-unstable``      two runs in fresh containers wrote different outputs
- ``output-overwritten``   two commands write the output with ``>``: the second replaces the first's lines
- ``output-cuts-fields``   the output's lines are pieces of input lines that stop inside a field (``grep -o``)
- ``output-repeats-counts`` one line three times or more, from a script that counts with ``uniq -c`` or with a
                           field that is 1 on every line
- ``output-constant-field``  most output lines are one value that nearly every input line holds (``+0000]``)
"""

from __future__ import annotations

import hashlib
import itertools
import re
import shlex
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, Field

from autoenvscaling.errors import AutoEnvError
from autoenvscaling.roles.proposer.staged.grading import matches, normalized
from autoenvscaling.roles.proposer.staged.spec import Expectation, Recording
from autoenvscaling.sandbox.base import BuildError, EngineUnavailableError, Sandbox, SandboxBackend
from autoenvscaling.tasks import TaskFormatError, load_task
from autoenvscaling.verify.environment import EnvironmentBuilder

SOLUTION_FAILED = "solution-failed"
OUTPUT_MISSING = "output-missing"
OUTPUT_EMPTY = "output-empty"
OUTPUT_TOO_LARGE = "output-too-large"
OUTPUT_BINARY = "output-binary"
OUTPUT_COPIES_INPUT = "output-copies-input"
OUTPUT_IN_IMAGE = "output-in-image"
OUTPUT_UNSTABLE = "output-unstable"
OUTPUT_FILE_PREFIX = "output-file-prefix"
OUTPUT_WITHOUT_DATA = "output-without-data"
OUTPUT_OVERWRITTEN = "output-overwritten"
OUTPUT_CUTS_FIELDS = "output-cuts-fields"
OUTPUT_REPEATS_COUNTS = "output-repeats-counts"
OUTPUT_CONSTANT_FIELD = "output-constant-field"
DRAFT_BUILD = "draft-build"
CROSS_ORACLE = "cross-oracle"
GUARDS = (
    SOLUTION_FAILED,
    OUTPUT_MISSING,
    OUTPUT_EMPTY,
    OUTPUT_TOO_LARGE,
    OUTPUT_BINARY,
    OUTPUT_COPIES_INPUT,
    OUTPUT_IN_IMAGE,
    OUTPUT_UNSTABLE,
)
MAX_OUTPUT_BYTES = 64 * 1024
# Bytes no text output holds: control characters other than tab, newlines and form feed, and the replacement
# character that undecodable bytes became when the output was read.
_NOT_TEXT = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f\ufffd]")
_SCAN_DIRS = "/app /srv /home /opt /etc /root"
_MISSING_FILE = re.compile(r"^.*: No such file or directory$", re.MULTILINE)
_BRANCHES = re.compile(r"(?<![\w-])(?:if|case|else|elif|while|for|until)(?![\w-])|\|\||&&")
_STATUS = "__AUTOENV_STATUS__"


class SolutionRun(BaseModel):
    """One run of a solution: its exit, its stderr's tail, and each declared output (None: missing)."""

    exit_code: int
    timed_out: bool = False
    stdout_tail: str = ""
    stderr_tail: str = ""
    outputs: dict[str, str | None] = Field(default_factory=dict)
    sizes: dict[str, int] = Field(default_factory=dict)
    preexisting: list[str] = Field(default_factory=list)  # outputs that existed before the solution ran
    image_hashes: set[str] = Field(default_factory=set)  # sha256 of the pristine image's small files
    new_files: list[str] = Field(default_factory=list)  # files under /app the solution created or changed


def _tail(text: str, n: int = 6) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(ln[:200] for ln in lines[-n:])


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class DraftRunner:
    """Builds a draft's image and runs solutions in it. ``BuildError`` and engine errors propagate."""

    def __init__(
        self,
        backend: SandboxBackend,
        *,
        run_id: str | None = None,
        timeout_sec: float = 60.0,
        builder: EnvironmentBuilder | None = None,
    ) -> None:
        self.backend = backend
        self.builder = builder or EnvironmentBuilder(backend)
        self.run_id = run_id
        self.timeout_sec = timeout_sec

    def run(self, draft: Path, solve_sh: str, outputs: list[str], *, scan_image: bool = False) -> SolutionRun:
        task = load_task(draft)
        image = self.builder.image_for(task)
        spec = self.builder.spec_for(task, image, name_hint=f"{draft.name}__record", run_id=self.run_id, network=False)
        with self.backend.create(spec) as sb:
            pre = [p for p in outputs if sb.exec(f"test -e {shlex.quote(p)}", timeout=10).exit_code == 0]
            hashes = self._image_hashes(sb) if scan_image else set()
            sb.exec("mkdir -p /solution && touch /tmp/.autoenv-before", timeout=10)
            sb.upload_text(solve_sh, "/solution/solve.sh", mode=0o755)
            res = sb.exec("bash /solution/solve.sh", timeout=self.timeout_sec)
            new = sb.exec("find /app -newer /tmp/.autoenv-before -type f 2>/dev/null | sort | head -20", timeout=10)
            texts, sizes = self._read_outputs(sb, outputs)
        return SolutionRun(
            exit_code=res.exit_code,
            timed_out=res.timed_out,
            stdout_tail=_tail(res.stdout),
            stderr_tail=_tail(res.stderr),
            outputs=texts,
            sizes=sizes,
            preexisting=pre,
            image_hashes=hashes,
            new_files=new.stdout.split(),
        )

    @staticmethod
    def _image_hashes(sb: Sandbox) -> set[str]:
        cmd = f"find {_SCAN_DIRS} -xdev -type f -size -{MAX_OUTPUT_BYTES}c -print0 2>/dev/null | xargs -0 -r sha256sum"
        res = sb.exec(cmd, timeout=30)
        return {line.split()[0] for line in res.stdout.splitlines() if line.strip()}

    @staticmethod
    def _read_outputs(sb: Sandbox, outputs: list[str]) -> tuple[dict[str, str | None], dict[str, int]]:
        texts: dict[str, str | None] = {}
        sizes: dict[str, int] = {}
        for p in outputs:
            q = shlex.quote(p)
            st = sb.exec(f"test -f {q} && stat -c %s {q}", timeout=10)
            if st.exit_code != 0:
                texts[p] = None
                continue
            sizes[p] = int(st.stdout.strip() or 0)
            if sizes[p] > MAX_OUTPUT_BYTES:
                texts[p] = ""
                continue
            texts[p] = sb.exec(f"cat -- {q}", timeout=10, output_limit=MAX_OUTPUT_BYTES * 2).stdout
        return texts, sizes


def describe_run(run: SolutionRun, head_lines: int = 8) -> str:
    """What the model is shown after its solution ran: exit code, errors, and the start of each output."""
    head = "timed out" if run.timed_out else f"exit code {run.exit_code}"
    parts = [f"solve.sh finished: {head}"]
    if run.stderr_tail:
        parts += ["stderr (last lines):", run.stderr_tail]
    for path, text in run.outputs.items():
        if text is None:
            parts.append(f"{path}: MISSING (the solution did not create it)")
        elif not text.strip():
            parts.append(f"{path}: EMPTY")
        else:
            lines = text.splitlines()
            more = f"\n... ({len(lines)} lines in all)" if len(lines) > head_lines else ""
            parts.append(f"{path} (first lines):\n" + "\n".join(ln[:160] for ln in lines[:head_lines]) + more)
    others = [f for f in run.new_files if f not in run.outputs]
    if others:
        parts.append("other files it wrote: " + ", ".join(others[:8]))
    return "\n".join(parts)


def file_prefix(text: str, inputs: dict[str, str]) -> str | None:
    """The input path (as the script named it) that at least half of ``text``'s lines start with as ``PATH:``
    (after a ``uniq -c`` count, if any), or None. ``grep PATTERN a b`` writes such lines; a blind solver given
    the instruction does not."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines or not inputs:
        return None
    names = "|".join(re.escape(p.rsplit("/", 1)[-1]) for p in sorted(inputs, key=len, reverse=True))
    starts = re.compile(rf"\s*(?:\d+\s+)?((?:\S*/)?(?:{names})):")  # the path as grep got it: /app/x, x, ./x
    found = [m.group(1) for m in map(starts.match, lines) if m is not None]
    return found[0] if 2 * len(found) >= len(lines) else None


def joined_inputs(text: str, inputs: dict[str, str], most: int = 5) -> list[str] | None:
    """The input files (two or more, in the order joined) whose texts one after another are ``text``, or None:
    a ``cat a b > out`` that the instruction calls a filter (yield series v12: "lines with status >= 400", and
    the solution joined the two logs). Only when there are at most ``most`` inputs (the orders to try grow fast)."""
    want = normalized(text)
    lines = {name: norm for name, data in inputs.items() if (norm := normalized(data))}
    if len(lines) < 2 or len(lines) > most:
        return None
    for k in range(2, len(lines) + 1):
        for order in itertools.permutations(lines, k):
            if sum(len(lines[n]) for n in order) == len(want) and [x for n in order for x in lines[n]] == want:
                return list(order)
    return None


def cut_field(text: str, inputs: dict[str, str]) -> tuple[str, str] | None:
    """``(output line, its input line)`` when half or more of ``text``'s lines are pieces of three or more fields
    of input lines that end inside a field (a letter or digit on both sides of the cut), or None: ``grep -o`` with
    a pattern that stops short (yield series v12 #5: the instruction asks for the lines with status 4xx or 5xx and
    every recorded line ends in ``HTTP/1.1" 40``). A piece ending where a field ends (an IP, a path) is a real
    extraction; so is a piece of one or two fields."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    sources = [ln for data in inputs.values() for ln in data.splitlines()]
    cut = []
    for ln in lines:
        if len(ln.split()) < 3 or not ln[-1].isalnum():
            continue
        found = [(src, i + len(ln)) for src in sources if (i := src.find(ln)) >= 0]
        if found and all(end < len(src) and src[end].isalnum() for src, end in found):
            cut.append((ln, found[0][0]))
    return cut[0] if cut and 2 * len(cut) >= len(lines) else None


_UNIQ_COUNT = re.compile(r"(?<![\w-])uniq\s+(?:-\w*c\w*|--count)(?![\w-])")


def repeated_count(text: str, solve_sh: str) -> tuple[str, int] | None:
    """``(line, times)`` when the output lists one line three times or more and either ``solve_sh`` counts with
    ``uniq -c``, or a field is ``1`` on every line; else None. Either way every key comes out many times with a
    count of 1: uniq counted whole lines that differ in fields a later stage dropped (yield series v13 #10:
    ``10.0.0.112 1`` 19 times, for "the occurrences of each status code"), or the script printed a 1 per line
    and never summed (v16 #15: ``awk '... {print $4, 1}'``, ``404 1`` 4 times, for "the status codes with their
    counts")."""
    lines = [" ".join(ln.split()) for ln in text.splitlines() if ln.strip()]
    if not lines:
        return None
    line, times = Counter(lines).most_common(1)[0]
    if times < 3:
        return None
    if _UNIQ_COUNT.search(solve_sh):
        return line, times
    rows = [ln.split(" ") for ln in lines]
    width = min(len(r) for r in rows)
    ones = width >= 2 and any(all(r[i] == "1" for r in rows) for i in range(width))
    return (line, times) if ones else None


def constant_field(text: str, inputs: dict[str, str]) -> tuple[str, int, int] | None:
    """``(value, lines, of)`` when 80 % or more of ``text``'s lines (3 or more) are one value that 90 % or more of
    the input lines hold as a field, or None: the script printed a field that is the same on every line, which
    says nothing of the rule (yield series v14 #2: ``+0000]``, the log's time zone, on 12 of 13 lines)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    sources = [ln.split() for data in inputs.values() for ln in data.splitlines() if ln.strip()]
    if len(lines) < 3 or not sources:
        return None
    value, times = Counter(lines).most_common(1)[0]
    if 5 * times < 4 * len(lines) or " " in value:
        return None
    holding = sum(value in fields for fields in sources)
    return (value, times, len(lines)) if 10 * holding >= 9 * len(sources) else None


def data_free(text: str, solve_sh: str) -> bool:
    """No number of ``text`` other than 0, and every other word of it written in ``solve_sh`` itself: nothing of
    the input reached the output (a rule that matched nothing leaves ``total``, ``-`` lines or ``0`` behind)."""
    words = set(re.findall(r"\w+", text))
    if any(w.isdigit() and int(w) != 0 for w in words):
        return False
    return {w for w in words if not w.isdigit()} <= set(re.findall(r"\w+", solve_sh))


# A script that asks for an input's first line itself: `head -1`, `NR==1`, `sed -n 1p`, `sed 1q`.
_FIRST_LINE = re.compile(r"\bhead\b|\bNR\s*==\s*1\b|\b1[pq]\b")


def header_only(text: str, inputs: dict[str, str], solve_sh: str) -> str | None:
    """The input whose header alone ``text`` is (a first line without digits that has as many fields as the next,
    split at commas, tabs, semicolons or bars, over rows with digits: a csv's column names), unless ``solve_sh``
    asks for a first line; else None. The rule matched no row, and the header
    passed it: an accepted 8ee4ab2 task asked for the sales rows whose units are above 10, where none is, and its
    tests wanted `date,region,product,units`, which awk's ``$4 > 10`` keeps (it compares the text `units` as text)."""
    lines = normalized(text)
    if len(lines) != 1 or _FIRST_LINE.search(solve_sh):
        return None
    for name, data in inputs.items():
        rows = normalized(data)
        if rows[:1] != lines or len(rows) < 2 or re.search(r"\d", rows[0]):
            continue
        columns = any(sep in rows[0] and rows[0].count(sep) == rows[1].count(sep) for sep in ",\t;|")
        if columns and any(re.search(r"\d", row) for row in rows[1:]):
            return name
    return None


def overwritten(solve_sh: str, path: str) -> bool:
    """Whether two commands of a branch-free ``solve_sh`` write ``path`` with ``>``: the second one replaces what
    the first wrote (yield series v11: two ``find ... > /app/result.txt`` lines, one of the two rules lost)."""
    if _BRANCHES.search(solve_sh):
        return False
    write = re.compile(r"(?<![>&\d])>\|?\s*['\"]?" + re.escape(path) + r"['\"]?(?![\w./-])")
    lines = [ln for ln in solve_sh.splitlines() if not ln.lstrip().startswith("#")]
    return sum(len(write.findall(ln)) for ln in lines) >= 2


def mechanical_problem(run: SolutionRun, inputs: dict[str, str], solve_sh: str = "") -> tuple[str, str] | None:
    """The first guard one run already fails ``(check id, detail)``, or None. ``solve_sh``: the script that ran
    (without it, ``output-without-data`` and ``output-overwritten`` are not checked)."""
    if run.exit_code != 0 or run.timed_out:
        why = "timed out" if run.timed_out else f"exited with {run.exit_code}"
        return SOLUTION_FAILED, f"solve.sh {why}: {run.stderr_tail or run.stdout_tail or '(no output)'}"
    if missing := _MISSING_FILE.search(run.stderr_tail):
        # a command early in a pipeline failed and the pipeline's last command still exited 0
        return SOLUTION_FAILED, f"solve.sh exited 0, but a command of it failed: {missing.group(0)}"
    for path, text in run.outputs.items():
        if text is None:
            return OUTPUT_MISSING, f"{path} was not created"
        if run.sizes.get(path, 0) > MAX_OUTPUT_BYTES:
            return OUTPUT_TOO_LARGE, f"{path} has {run.sizes[path]} bytes (at most {MAX_OUTPUT_BYTES})"
        if not text.strip():
            return OUTPUT_EMPTY, f"{path} is empty"
        if binary := len(_NOT_TEXT.findall(text)):
            return OUTPUT_BINARY, (
                f"{path} holds {binary} bytes that are not text: a compressed or binary file was read as text "
                "(read a .gz file with zcat)"
            )
        for name, data in inputs.items():
            if normalized(text) == normalized(data):
                return OUTPUT_COPIES_INPUT, f"{path} is a copy of the input {name}"
        if joined := joined_inputs(text, inputs):
            return OUTPUT_COPIES_INPUT, (
                f"{path} is the inputs {' and '.join(joined)} joined, every line kept as it was: the rule the "
                "instruction states removed or changed nothing; make solve.sh apply it"
            )
        if solve_sh and data_free(text, solve_sh):
            shown = " ".join(sorted(set(re.findall(r"\w+", text)))[:5]) or text.strip()[:20]
            return OUTPUT_WITHOUT_DATA, (
                f"nothing of the input reached {path}: its words ({shown}) are all written in solve.sh itself, so "
                "the rule matched nothing; check the field numbers and the pattern against an input line"
            )
        if solve_sh and (headed := header_only(text, inputs, solve_sh)):
            return OUTPUT_WITHOUT_DATA, (
                f"{path} holds only the header line of {headed}: no row matched the rule (a header line passes a "
                "comparison of its text with a number); skip the header (NR > 1) and check the rule against the rows"
            )
        prefix = file_prefix(text, inputs)
        if prefix is not None:
            return OUTPUT_FILE_PREFIX, (
                f"the lines of {path} start with an input file's name ({prefix}:...): grep prints it when it reads "
                "several files, and the instruction does not ask for it; use grep -h, or cat the files into one grep"
            )
        if piece := cut_field(text, inputs):
            return OUTPUT_CUTS_FIELDS, (
                f"the lines of {path} stop inside a field of their input line: `{piece[0]}` is cut from "
                f"`{piece[1]}`. grep -o prints only the part its pattern matched; print whole lines (no -o), or "
                "make the pattern end where a field ends"
            )
        if constant := constant_field(text, inputs):
            return OUTPUT_CONSTANT_FIELD, (
                f"{path} is `{constant[0]}` on {constant[1]} of its {constant[2]} lines, a field that nearly every "
                "input line holds: it says nothing of the rule; print the field the rule is about (count the fields "
                "of an input line)"
            )
        if repeated := repeated_count(text, solve_sh):
            how = (
                "uniq -c counted whole lines that differ in fields the output does not show; print only the field "
                "to count before sort | uniq -c"
                if _UNIQ_COUNT.search(solve_sh)
                else "a count of 1 on every line sums nothing; count per key (awk '{n[$4]++} END {for (k in n) "
                "print k, n[k]}', or sort | uniq -c)"
            )
            return OUTPUT_REPEATS_COUNTS, f"{path} lists `{repeated[0]}` {repeated[1]} times: {how}"
        if solve_sh and overwritten(solve_sh, path):
            return OUTPUT_OVERWRITTEN, (
                f"two commands of solve.sh write {path} with '>': the second one replaces what the first wrote; "
                "write it in one command, or append with '>>'"
            )
    for path in run.preexisting:
        return OUTPUT_IN_IMAGE, f"{path} already exists before the solution runs"
    for path, text in run.outputs.items():
        if text is not None and sha256_text(text) in run.image_hashes:
            return OUTPUT_IN_IMAGE, f"the content of {path} is already a file in the image"
    return None


def record_expectations(
    runner: DraftRunner,
    draft: Path,
    solve_sh: str,
    outputs: dict[str, str],
    inputs: dict[str, str],
) -> tuple[Recording, list[Expectation]]:
    """Run the solution twice in fresh containers; the outputs become the expectations if every guard holds.

    ``outputs`` maps each declared output path to its comparison mode.
    """
    try:
        first = runner.run(draft, solve_sh, list(outputs), scan_image=True)
        problem = mechanical_problem(first, inputs, solve_sh)
        if problem is None:
            second = runner.run(draft, solve_sh, list(outputs))
            if second.outputs != first.outputs:
                problem = (OUTPUT_UNSTABLE, "two runs of solve.sh wrote different outputs")
    except (BuildError, TaskFormatError) as e:
        return Recording(ok=False, check=DRAFT_BUILD, detail=str(e)), []
    if problem is not None:
        return Recording(ok=False, check=problem[0], detail=problem[1]), []
    texts = {p: t or "" for p, t in first.outputs.items()}
    expectations = [
        Expectation(path=p, expected=f"{i + 1}-{Path(p).name}", compare=outputs[p], sha256=sha256_text(texts[p]))  # type: ignore[arg-type]
        for i, p in enumerate(outputs)
    ]
    return Recording(ok=True, outputs=texts), expectations


def cross_oracle(
    runner: DraftRunner, child: Path, parent_solve_sh: str, expectations: list[Expectation], expected: dict[str, str]
) -> bool:
    """True when the parent's solution, run in the child, already produces the child's expected outputs."""
    try:
        run = runner.run(child, parent_solve_sh, [e.path for e in expectations])
    except EngineUnavailableError:
        raise
    except AutoEnvError:
        return False
    return all(
        (got := run.outputs.get(e.path)) is not None and matches(got, expected[e.path], e.compare) for e in expectations
    )
