"""Mutation starts: a staged episode changes a validated parent task instead of writing one from nothing.

Parents, listed: environments accepted into the pool (newest first, passed in by the caller), the domain pack's
worked example (the guide's example as a task dir) and its starters (short tasks over other kinds of input: a CSV,
a passwd file, a config file), then the domain's example tasks. Each episode takes the parent
whose children were accepted most often so far (``parent_schedule``; with no history, the parents with the
shortest solution in turn, as listed, then the longer ones). The ``combine`` operator also takes a second parent:
the next one in the list that has an input file and the same base image (``second_parent``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from pydantic import BaseModel, Field

from autoenvscaling.roles.proposer.domain import DomainContext
from autoenvscaling.roles.proposer.records import ProposalRecord
from autoenvscaling.tasks.dockerfile import parse_instructions, parse_stages

WORKED_EXAMPLE = "worked-example"
STARTERS = "starters"
_HEAD_LINES = 12
_HEAD_CHARS = 900
_MAX_DATA_BYTES = 64 * 1024
MAX_INPUTS_SHOWN = 3


class Parent(BaseModel):
    """What a staged prompt shows of a parent, and what the harness needs of it.

    Input files are the text files the Dockerfile COPYs into the image, keyed by their path in the container;
    ``sources`` maps each to its path under ``environment/`` (where a child's changed copy is written).
    """

    name: str
    path: Path
    instruction: str
    solve_sh: str
    dockerfile: str = ""
    inputs: dict[str, str] = Field(default_factory=dict)  # container path -> first lines
    data: dict[str, str] = Field(default_factory=dict)  # container path -> full text (guards compare with it)
    sources: dict[str, str] = Field(default_factory=dict)  # container path -> path relative to environment/

    @property
    def main_input(self) -> str | None:
        return next(iter(self.data), None)


_WORD = re.compile(r"[a-z0-9_]+")
_ABS_PATH = re.compile(r"(?<![\w.])/(?:[\w.-]+/)*[\w.-]*\w")
_QUOTED = re.compile(r"(?<![A-Za-z])'([^'\n]+)'(?![A-Za-z])|\"([^\"\n]+)\"|`([^`\n]+)`")
# Words of an idea that say nothing about which task it changes.
_IDEA_FILLER = frozenset(
    "the and for with that this from into each every line lines file files output input write print count "
    "select only where which their they are was were has have not new task all any one two "
    # comparisons and pronouns: "larger than 1 MiB" in a file-permission task made an idea about status codes
    # "greater than 400" look like that task's (yield series v11)
    "than more less greater larger smaller least most equal above below over under those these them its".split()
)


def _shown(parent: Parent) -> str:
    """What the prompt showed of ``parent``: instruction, input paths and heads, solve.sh, the Dockerfile; not
    solve.sh's ``#!`` line, which every parent shows: its ``/bin/bash`` made an idea about the passwd starter's
    shells ("the users whose shell is /bin/bash") name a path of the config starter it was not about, and the
    episode kept that parent, whose input has no shells (3 of the 5 second proposals of the ad011ff demo series)."""
    script = "\n".join(ln for ln in parent.solve_sh.splitlines() if not ln.startswith("#!"))
    return " ".join([parent.instruction, script, parent.dockerfile, *parent.inputs, *parent.inputs.values()])


def idea_affinity(change: str, parent: Parent) -> int:
    """How many distinct words of an idea's one-sentence ``change`` occur in what the prompt showed of ``parent``
    (instruction, input heads, solve.sh, the Dockerfile where shown): which of two tasks the idea is about."""
    known = set(_WORD.findall(_shown(parent).lower()))
    words = {w for w in _WORD.findall(change.lower()) if (len(w) >= 3 or w.isdigit()) and w not in _IDEA_FILLER}
    return len(words & known)


# Words that say nothing of what an idea asks; unlike ``_IDEA_FILLER``, comparisons and numbers stay.
_GLUE = frozenset(
    "the a an and or of to in on at by for with that which where whose only all each every is are".split()
)


def made_already(change: str, made: list[str]) -> str | None:
    """The sentence of ``made`` that asks what ``change`` asks, or None: the same words, glue words left out
    (a Jaccard similarity of 0.8 or more; "status 404" and "status 500", "less than 400" and "greater than 400"
    differ). In demo run 2 on a4556e2 the second episode asked "filter the logs to only include requests with
    status code 400 or 500", the first one's sentence word for word, under the list that showed it."""
    words = {w for w in _WORD.findall(change.lower()) if w not in _GLUE}
    for sentence in made:
        other = {w for w in _WORD.findall(sentence.lower()) if w not in _GLUE}
        if words and other and len(words & other) >= 0.8 * len(words | other):
            return sentence
    return None


def about_second(change: str, parent: Parent, second: Parent) -> bool:
    """Whether an idea (not ``combine``) is about the second task rather than its parent.

    A small model often describes a change of the task it read last (the second one, shown only for combine)
    and names another operator. Paths decide first: an idea naming paths that only the second task shows is
    about the second, one naming paths only the parent shows is about the parent. Quoted texts next, against the
    input heads the prompt showed: "lines that start with the '#' character" with the config starter second and
    the log as parent (66937ae demo run 2, which then copied the log), "the username is 'alice'" with a passwd
    task second; of 54 recorded ideas with a second task shown, these decide 4, each for the task whose input
    holds the text (a quoted path is left to the paths, a blank to nothing). Else, by the other words:
    where the idea shares none with the parent and several with the second task (or one, when the parent has no
    input file and the second has), it is about the second; a closer call keeps the parent."""
    paths = set(_ABS_PATH.findall(change))
    first_text, second_text = _shown(parent), _shown(second)
    in_first = {p for p in paths if p in first_text}
    in_second = {p for p in paths if p in second_text}
    if in_first != in_second:
        return not in_first
    quoted = {t for m in _QUOTED.finditer(change) if (t := next(g for g in m.groups() if g).strip())}
    quoted = {q for q in quoted if not _ABS_PATH.fullmatch(q)}  # a quoted path: the paths above had their say
    in_first = {q for q in quoted if any(q in head for head in parent.inputs.values())}
    in_second = {q for q in quoted if any(q in head for head in second.inputs.values())}
    if in_first != in_second:
        return not in_first
    words = _ABS_PATH.sub(" ", change)  # a path's parts (app, log, 1) say little once the paths did not decide
    needed = 1 if second.data and not parent.data else 2
    return idea_affinity(words, parent) == 0 and idea_affinity(words, second) >= needed


def head(text: str) -> str:
    """The first lines of an input file, as prompts show it."""
    lines = text.splitlines()
    first = "\n".join(lines[:_HEAD_LINES])[:_HEAD_CHARS]
    return first + (f"\n... ({len(lines)} lines in all)" if len(lines) > _HEAD_LINES else "")


def _text(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) > _MAX_DATA_BYTES or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def copied_files(env_dir: Path, dockerfile: str) -> dict[str, str]:
    """Container path -> path under ``env_dir`` of each regular file a ``COPY src dst`` line brings in, under the
    name it has in the image: a file a later ``RUN gzip FILE`` compresses is ``FILE.gz`` (its text stays the
    source's; an instruction names the ``.gz`` file, and a solver reads it with zcat)."""
    out: dict[str, str] = {}
    workdir = "/"
    for ins in parse_instructions(dockerfile):
        if ins.keyword == "WORKDIR":
            workdir = ins.args.strip() or workdir
        if ins.keyword == "RUN":
            _gzipped(out, ins.args, workdir)
        if ins.keyword not in ("COPY", "ADD"):
            continue
        parts = [p for p in ins.args.split() if not p.startswith("--")]
        if len(parts) != 2:
            continue
        src_rel, dst = parts
        dst = dst if dst.startswith("/") else f"{workdir.rstrip('/')}/{dst}"
        src = (env_dir / src_rel).resolve()
        if not src.is_relative_to(env_dir.resolve()):
            continue
        if src.is_dir():
            for f in sorted(src.rglob("*")):
                if f.is_file() and not f.is_symlink():
                    out[f"{dst.rstrip('/')}/{f.relative_to(src).as_posix()}"] = f.relative_to(
                        env_dir.resolve()
                    ).as_posix()
        elif src.is_file():
            target = f"{dst.rstrip('/')}/{src.name}" if dst.endswith("/") else dst
            out[target] = src.relative_to(env_dir.resolve()).as_posix()
    return out


_GZIP = re.compile(r"(?<![\w./-])gzip((?:\s+[^\s;&|<>]+)+)")


def _gzipped(files: dict[str, str], run: str, workdir: str) -> None:
    """Rename in ``files`` each path that a ``gzip [-n] PATH...`` of the RUN line ``run`` compresses in place
    (``-k`` keeps the original too; ``-d``, ``-c`` and ``-t`` compress nothing in place)."""
    for m in _GZIP.finditer(run):
        words = m.group(1).split()
        options = "".join(w.lstrip("-") for w in words if w.startswith("-") and not w.startswith("--"))
        if set(options) & set("dct") or any(w in ("--decompress", "--stdout", "--test") for w in words):
            continue
        keep = "k" in options or "--keep" in words
        for word in (w for w in words if not w.startswith("-")):
            path = word if word.startswith("/") else f"{workdir.rstrip('/')}/{word}"
            if path in files:
                files[path + ".gz"] = files[path] if keep else files.pop(path)


def load_parent(task_dir: Path) -> Parent | None:
    """A parent view of ``task_dir``, or None when it lacks an instruction, a solution or an environment."""
    instruction = _text(task_dir / "instruction.md")
    solve = _text(task_dir / "solution" / "solve.sh")
    dockerfile = _text(task_dir / "environment" / "Dockerfile")
    if instruction is None or solve is None or dockerfile is None:
        return None
    data: dict[str, str] = {}
    sources: dict[str, str] = {}
    for container_path, rel in copied_files(task_dir / "environment", dockerfile).items():
        text = _text(task_dir / "environment" / rel)
        if text is not None:
            data[container_path], sources[container_path] = text, rel
    return Parent(
        name=task_dir.name,
        path=task_dir,
        instruction=instruction.strip(),
        solve_sh=solve.strip(),
        dockerfile=dockerfile.strip(),
        inputs={k: head(v) for k, v in list(data.items())[:MAX_INPUTS_SHOWN]},
        data=data,
        sources=sources,
    )


def worked_example(domain: DomainContext) -> Path | None:
    """The domain pack's worked example dir, when the pack ships one."""
    from autoenvscaling.roles.proposer.packs import pack_dir

    path = pack_dir(domain.name) / WORKED_EXAMPLE
    return path if path.is_dir() else None


def pack_parents(domain: DomainContext) -> list[Path]:
    """The task dirs the domain pack ships for episodes to start from: the worked example, then each starter (by
    name). Without starters every child reads one four-field log: in the hackable-share run on 14df066 all 36
    episodes of six rounds started from the worked example or a child of it, and in round 5 each of the three
    valid environments was a near-duplicate of a filter already in the pool."""
    from autoenvscaling.roles.proposer.packs import pack_dir

    starters = pack_dir(domain.name) / STARTERS
    listed = sorted(d for d in starters.iterdir() if d.is_dir()) if starters.is_dir() else []
    worked = worked_example(domain)
    return ([worked] if worked is not None else []) + listed


def solution_lines(parent: Parent) -> int:
    """The parent solution's length in command lines (comments and blank lines left out)."""
    return sum(1 for ln in parent.solve_sh.splitlines() if ln.strip() and not ln.lstrip().startswith("#"))


def parent_candidates(
    domain: DomainContext, pool_parents: list[Path] | None = None, max_solution_lines: int | None = None
) -> list[Parent]:
    """Every usable parent, in the order episodes take them: pool environments, the worked example and the pack's
    starters, the domain's examples. With ``max_solution_lines``, parents whose solution is longer are left out (a
    small model mutates a short script and a blind solver reproduces its child far more often), unless that leaves
    none."""
    dirs = [*(pool_parents or []), *pack_parents(domain), *domain.examples]
    parents = [p for d in dirs if (p := load_parent(d)) is not None]
    if max_solution_lines is not None:
        short = [p for p in parents if solution_lines(p) <= max_solution_lines]
        parents = short or parents
    return parents


ParentHistory = dict[str, tuple[int, int]]  # parent name -> (children proposed, children accepted)


def parent_history(records: Iterable[ProposalRecord]) -> ParentHistory:
    """Per parent, how many episodes started from it and how many of those gave a valid (and, for recorded
    expectations, reproduced) environment."""
    history: ParentHistory = {}
    for r in records:
        if r.parent is not None and r.verdict != "error":  # an infrastructure failure says nothing of the parent
            tried, accepted = history.get(r.parent, (0, 0))
            history[r.parent] = (tried + 1, accepted + r.is_valid)
    return history


def children_made(records: Iterable[ProposalRecord], most: int = 6) -> dict[str, list[str]]:
    """Per parent, what its accepted children asked (each idea's sentence, from the episode's ``staged.json``; the
    last ``most``), for the idea stage to ask something else: in yield series v20 the staged arm made "the lines
    with status less than 400" of the worked example twice in a row, under other words and output names."""
    made: dict[str, list[str]] = {}
    for r in records:
        if r.parent is None or not r.is_valid:
            continue
        change = idea_of(Path(r.episode_dir))[1]
        if change and change not in made.get(r.parent, []):
            made.setdefault(r.parent, []).append(change)
    return {name: changes[-most:] for name, changes in made.items()}


def idea_of(episode_dir: Path) -> tuple[str | None, str]:
    """The parent a staged episode used and its idea's sentence (cut at 200 characters), from its ``staged.json``;
    ``(None, "")`` when there is none to read."""
    try:
        log = json.loads((episode_dir / "staged.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, ""
    if not isinstance(log, dict):
        return None, ""
    return log.get("parent"), (((log.get("idea") or {}).get("change") or "").strip())[:200]


def parent_schedule(parents: list[Parent], history: Mapping[str, tuple[int, int]], count: int) -> list[int]:
    """The parent (an index into ``parents``) each of ``count`` episodes starts from: the one whose children were
    accepted most often, ``(accepted + 2 q) / (proposed + 2)``, the less tried one on a tie, then the one listed
    first. ``q``, a parent's rate before it has children, is 1/2 for the parents with the shortest solution and
    falls with the length of a parent's solution (``q = 1/2 * shortest / its lines``). An episode scheduled earlier
    in the same run counts as proposed and not accepted (its outcome comes after every episode was generated), so
    with no history the parents with the shortest solution are taken in turn, and a longer one once theirs have
    fallen below its prior. In the staged episodes of yield series v13-v20, the demo series of b546ada and the
    first three demo runs on 62c9339 (the 1.5B model), the children of the worked example (a one-line awk over a
    four-field log) were valid and reproduced 27 times in 46, those of the terminal examples of 5 and 6 command
    lines (three logs in nginx's format with a .gz; file permissions under /srv) once in 36: a small model's
    children of a parent that it mutates well are the ones a blind solver reproduces."""
    lines = [max(1, solution_lines(p)) for p in parents]
    prior = [min(lines) / (2 * n) for n in lines]
    tried = [history.get(p.name, (0, 0))[0] for p in parents]
    accepted = [history.get(p.name, (0, 0))[1] for p in parents]
    schedule = []
    for _ in range(count):
        best = max(range(len(parents)), key=lambda k: ((accepted[k] + 2 * prior[k]) / (tried[k] + 2), -tried[k], -k))
        schedule.append(best)
        tried[best] += 1
    return schedule


def base_image(dockerfile: str) -> str | None:
    """The image the Dockerfile's last stage starts FROM (where appended lines land), or None."""
    stages = parse_stages(dockerfile)
    return stages[-1].base if stages else None


def second_parent(parents: list[Parent], i: int) -> Parent | None:
    """The second parent for a first parent ``parents[i mod n]`` (for ``combine``): the next parent after it, in
    the same order, that has an input file and starts FROM the same image; None when no other parent qualifies."""
    if not parents:
        return None
    first = parents[i % len(parents)]
    image = base_image(first.dockerfile)
    for k in range(1, len(parents)):
        other = parents[(i + k) % len(parents)]
        if other.path != first.path and other.data and image and base_image(other.dockerfile) == image:
            return other
    return None
