"""Generation yield: four proposer arms, paired, on the same model, resumable across invocations.

Arms (episode ``i`` of every arm uses the same digest finding and the same parent task; the parent is the one
whose children were accepted most often in the lead arm's earlier episodes, ``parents.parent_schedule``; the lead
arm is A1 when it runs):

    P0  prompt           one call writes every file (hand-written tests), as before
    P1  prompt-recorded  one call under the staged schema, then the same recorded-expectations step
    A0  agentic          the free workshop (edit, check, try, submit)
    A1  staged           the staged proposer with mutation starts (observe, decide, fix)

Every candidate is validated by the pipeline (K oracle runs + nop + leakage + novelty); recorded expectations
must also be reproduced by a blind solver attempt (instruction and environment only): a one-shot attempt (one
script, run once; two of them since 2026-12-04) or, when they fail, one of K attempts of the agent loop.
"Distinct" drops a valid candidate nearly equal to an earlier valid one of the same arm.

    .venv/bin/python benchmarks/generation_yield.py --n 20 --out runs/yield-1.5b          # starts or continues
    .venv/bin/python benchmarks/generation_yield.py --n 20 --out runs/yield-1.5b --report  # tables only

Each (arm, episode) item lands in OUT/items.jsonl as soon as it is done, so a killed run loses at most the item
in flight; the same command continues it. A log that lost lines (restored from an older copy) gets them back
from the run dir's records with ``--recover COMMIT`` (their CPU time is then unknown). An infrastructure failure
(the Docker engine lost, a validation or blind attempt that could not run) stops the run without recording the
item: it is never counted as a rejection.

Per arm: valid, distinct valid, self-consistent and reproduced counts (and how many a one-shot attempt
reproduced), Wilson 95% intervals, one-sided Fisher exact p against P1 and P0, uncached prompt + completion
tokens, wall and CPU seconds per valid environment, and the cost per valid environment as if a hosted model
(default gpt-4.1-mini on OpenAI) had served the same tokens.
Writes ITEMS.summary.json and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from autoenvscaling.agent.config import guarded_solver
from autoenvscaling.errors import AutoEnvError
from autoenvscaling.llm.config import parse_model_arg
from autoenvscaling.llm.cost import estimate_cost
from autoenvscaling.llm.factory import open_model
from autoenvscaling.roles.proposer.config import ProposerConfig
from autoenvscaling.roles.proposer.domain import domain_context
from autoenvscaling.roles.proposer.novelty import answer_key, grading_text, instruction_text, similarity
from autoenvscaling.roles.proposer.records import Mode, ProposalRecord
from autoenvscaling.roles.proposer.run import STAGED_MODES, ProposeConfig, ProposeRun
from autoenvscaling.roles.proposer.staged.parents import children_made, parent_history
from autoenvscaling.roles.solver_factory import solver_agents
from autoenvscaling.roles.tuning import tune_roles
from autoenvscaling.sandbox.registry import get_backend
from autoenvscaling.validate.probes import GENERATED_PROBES
from autoenvscaling.validate.validator import ValidationConfig
from autoenvscaling.verify.results import is_solved

ARMS: dict[str, Mode] = {
    "P0": "prompt",
    "P1": "prompt-recorded",
    "P1s": "prompt-recorded",  # P1 answering in header lines and fenced blocks: code needs no JSON escaping
    "A0": "agentic",
    "A1": "staged",
}
ARM_STAGED: dict[str, dict[str, Any]] = {"P1s": {"oneshot_format": "sections"}}  # StagedConfig per arm
BASELINES = ("P1", "P1s", "P0")  # Fisher p and cost ratios of every arm against these


class Item(BaseModel):
    arm: str
    index: int
    record: ProposalRecord
    cpu_sec: float | None  # this process (harness + the in-process model server), containers not included;
    # None: unknown (an item recovered from its run dir, ``--recover``)
    wall_sec: float
    instruction: str = ""  # kept so "distinct" can be judged after the run dir is gone
    grading: str = ""
    answer: str | None = None  # ``novelty.answer_key``: recorded outputs and environment paths (None: none)
    code: str = ""  # the commit the item ran on ("-dirty": with uncommitted changes); a report names every one


def code_version() -> str:
    """The last commit that changed the code this script imports (``src/``, ``examples/``), ``-dirty`` when those
    folders have uncommitted changes: a series continued from a later commit that changed only documents or
    benchmarks is still one code's series."""
    src = Path(__file__).resolve().parents[1]
    try:
        rev = subprocess.run(
            ["git", "-C", str(src), "log", "-1", "--format=%h", "--", "src", "examples"], capture_output=True, text=True
        )
        dirty = subprocess.run(
            ["git", "-C", str(src), "status", "--porcelain", "src", "examples"], capture_output=True, text=True
        )
    except OSError:
        return "unknown"
    if rev.returncode != 0 or not rev.stdout.strip():
        return "unknown"
    return rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def fingerprint(record: ProposalRecord) -> tuple[str, str, str | None]:
    if not record.candidate_dir or not Path(record.candidate_dir).is_dir():
        return "", "", None
    cand = Path(record.candidate_dir)
    return instruction_text(cand)[:4000], grading_text(cand)[:8000], answer_key(cand)


def _answer(item: Item) -> str | None:
    """The item's answer key; for an item logged before keys were kept, read from its run dir when it is there."""
    if item.answer is not None or not item.record.candidate_dir:
        return item.answer
    cand = Path(item.record.candidate_dir)
    return answer_key(cand) if cand.is_dir() else None


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a binomial proportion (sound at 0 and n, unlike the normal one)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo, hi = max(0.0, center - half), min(1.0, center + half)
    return (0.0 if successes == 0 else lo), (1.0 if successes == n else hi)  # exact at the ends, no rounding dust


def fisher_greater(a: int, n1: int, c: int, n2: int) -> float:
    """One-sided Fisher exact p: P(X >= a) for arm 1's successes given the margins (arm 1 better than arm 2)."""
    total, succ = n1 + n2, a + c
    denom = math.comb(total, succ)
    lo, hi = max(0, succ - n2), min(succ, n1)
    return sum(math.comb(n1, k) * math.comb(n2, succ - k) for k in range(max(a, lo), hi + 1)) / denom


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _per(total: float, k: int) -> float | None:
    return total / k if k else None


def per_valid_interval(total: float, n: int, lo: float, hi: float) -> list[float | None]:
    """A cost per valid environment at the 95% Wilson bounds of the distinct-valid rate: the cost per item over
    the rate's upper bound, and over its lower bound (None: unbounded, the lower bound is 0). With no valid
    environment the point value does not exist, and the first bound is what the arm costs at least."""
    if not n or total <= 0:
        return [None, None]
    per_item = total / n
    return [per_item / hi if hi > 0 else None, per_item / lo if lo > 0 else None]


def distinct_valid(items: list[Item], threshold: float) -> list[Item]:
    """Valid items that are not near-copies (instruction, or solution + tests) of an earlier valid one, nor ask
    for its answer (``novelty.answer_key``: the same recorded outputs from the same files)."""
    kept: list[Item] = []
    answers: dict[int, str | None] = {}  # by item index: read once (an older item's from its run dir)
    for it in sorted(items, key=lambda i: i.index):
        if not it.record.is_valid:
            continue
        answer = answers[it.index] = _answer(it)
        twin = any(
            (answer is not None and answer == answers[k.index])
            or max(similarity(it.instruction, k.instruction), similarity(it.grading, k.grading)) >= threshold
            for k in kept
        )
        if not twin:
            kept.append(it)
    return kept


def arm_stats(items: list[Item], price_as: str, threshold: float) -> dict[str, Any]:
    recs = [i.record for i in items]
    n = len(recs)
    valid = sum(r.is_valid for r in recs)
    distinct = len(distinct_valid(items, threshold))
    recorded = [r for r in recs if r.validation.recorded]
    self_consistent = sum(r.validation.verdict == "valid" for r in recorded)
    reproduced = sum(r.validation.reproduced for r in recorded)
    oneshot = sum(any(is_solved(x) for x in r.validation.reproduce_oneshots) for r in recorded)
    uncached = sum(r.generation.prompt_tokens - r.generation.cached_tokens for r in recs)
    blind = sum(r.validation.reproduce_tokens for r in recs)  # the blind solver's, prompt + completion
    completion = sum(r.generation.completion_tokens for r in recs)
    cached = sum(r.generation.cached_tokens for r in recs)
    hosted = estimate_cost(
        price_as, base_url=None, prompt_tokens=uncached + cached, completion_tokens=completion, cached_tokens=cached
    )
    wall = sum(i.wall_sec for i in items)
    cpu = sum(i.cpu_sec for i in items if i.cpu_sec is not None)
    cpu_unknown = sum(i.cpu_sec is None for i in items)
    lo, hi = wilson(distinct, n)
    reasons: dict[str, int] = {}
    for r in recs:
        if not r.is_valid:
            for c in r.failed_checks or [r.verdict]:
                reasons[c] = reasons.get(c, 0) + 1
    return {
        "n": n,
        "valid": valid,
        "distinct_valid": distinct,
        "distinct_valid_rate": distinct / n if n else 0.0,
        "distinct_valid_ci95": [lo, hi],
        "self_consistent": self_consistent,
        "reproduced": reproduced,
        "reproduced_oneshot": oneshot,  # of them, by the one-shot blind attempt
        "uncached_prompt_tokens": uncached,
        "completion_tokens": completion,
        "blind_solver_tokens": blind,
        "tokens_per_valid": _per(uncached + completion, distinct),
        "wall_sec": wall,
        "wall_per_valid_sec": _per(wall, distinct),
        "cpu_sec": cpu,
        "cpu_per_valid_sec": _per(cpu, distinct) if not cpu_unknown else None,
        "cpu_unknown_items": cpu_unknown,
        "hosted_cost_usd": hosted,
        "hosted_cost_per_valid_usd": _per(hosted, distinct),
        "hosted_cost_per_valid_ci95": per_valid_interval(hosted, n, lo, hi),
        "rejection_reasons": dict(sorted(reasons.items(), key=lambda kv: -kv[1])),
    }


def load_items(path: Path) -> list[Item]:
    if not path.is_file():
        return []
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            items.append(Item.model_validate_json(line))
        except ValueError:
            continue  # a torn last line from a killed run: that item runs again
    return items


def report(items: list[Item], arms: list[str], args: argparse.Namespace) -> dict[str, Any]:
    by_arm = {a: [i for i in items if i.arm == a] for a in arms}
    stats = {a: arm_stats(by_arm[a], args.price_as, args.novelty_threshold) for a in arms}
    for a in arms:
        for base in BASELINES:
            if base in stats and base != a:
                s, b = stats[a], stats[base]
                stats[a][f"fisher_p_vs_{base}"] = fisher_greater(
                    s["distinct_valid"], s["n"], b["distinct_valid"], b["n"]
                )
                cost, base_cost = s["hosted_cost_per_valid_usd"], b["hosted_cost_per_valid_usd"]
                stats[a][f"cost_ratio_vs_{base}"] = cost / base_cost if cost is not None and base_cost else None
                least = b["hosted_cost_per_valid_ci95"][0]
                if cost is not None and base_cost is None and least:  # no valid one in the baseline: a bound
                    stats[a][f"cost_ratio_vs_{base}_at_most"] = cost / least
    print(f"\n{args.model} / {args.domain}: items per arm " + ", ".join(f"{a} {stats[a]['n']}" for a in arms))
    for a in arms:
        if stats[a]["cpu_unknown_items"]:
            print(f"{a}: CPU seconds unknown for {stats[a]['cpu_unknown_items']} recovered item(s): no CPU s / valid")
    versions: dict[str, int] = {}
    for it in items:
        versions[it.code or "unrecorded"] = versions.get(it.code or "unrecorded", 0) + 1
    print("code versions: " + ", ".join(f"{v} ({n} items)" for v, n in versions.items()))
    columns = [
        "arm", "distinct valid", "95% Wilson", "valid", "self-consistent", "reproduced",
        *(f"p vs {b}" for b in BASELINES if b != "P1s" or b in arms),
        "uncached prompt + completion tokens", "blind-solver tokens", "wall s / valid", "CPU s / valid",
        "$ / valid (hosted)", "rejections",
    ]  # fmt: skip
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for a in arms:
        s = stats[a]
        lo, hi = s["distinct_valid_ci95"]

        def f(v: float | None, fmt: str = "{:.0f}") -> str:
            return "-" if v is None else fmt.format(v)

        top = ", ".join(f"{k} {v}" for k, v in list(s["rejection_reasons"].items())[:4])
        shots = f" ({s['reproduced_oneshot']} one-shot)" if s.get("reproduced_oneshot") else ""
        print(
            f"| {a} {ARMS[a]} | {s['distinct_valid']}/{s['n']} | [{lo:.2f}, {hi:.2f}] | {s['valid']} | "
            f"{s['self_consistent']} | {s['reproduced']}{shots} | "
            + "".join(f"{f(s.get(f'fisher_p_vs_{b}'), '{:.3f}')} | " for b in BASELINES if b != "P1s" or b in arms)
            + f"{s['uncached_prompt_tokens']:,} + {s['completion_tokens']:,} | "
            f"{s['blind_solver_tokens']:,} | "
            f"{f(s['wall_per_valid_sec'])} | {f(s['cpu_per_valid_sec'])} | "
            f"{f(s['hosted_cost_per_valid_usd'], '{:.5f}')} | {top} |"
        )
    for a in arms:
        if line := parents_line(by_arm[a], a):
            print(f"{a} by parent (accepted/proposed): {line}")
    for a in arms:
        lo_cost, hi_cost = stats[a]["hosted_cost_per_valid_ci95"]
        if lo_cost is not None:
            print(
                f"{a}: $ / valid (hosted), 95%: [{lo_cost:.5f}, {'unbounded' if hi_cost is None else f'{hi_cost:.5f}'}]"
            )
        for base in BASELINES:
            if (ratio := stats[a].get(f"cost_ratio_vs_{base}")) is not None:
                print(f"{a}: cost per valid / {base}'s = {ratio:.3f}")
            elif (bound := stats[a].get(f"cost_ratio_vs_{base}_at_most")) is not None:
                print(f"{a}: cost per valid / {base}'s <= {bound:.3f} ({base} has no valid one: its 95% lower bound)")
    return stats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="embedded")
    ap.add_argument("--base-url", default=None)
    ap.add_argument("--n", type=int, default=20, help="episodes per arm")
    ap.add_argument("--arms", default="A1,P1,P0,A0", help="comma-separated, run in this order per episode")
    ap.add_argument("--domain", default="terminal")
    ap.add_argument("--from", dest="from_path", type=Path, default=None, help="solve run dir or trials dir")
    ap.add_argument("--out", type=Path, default=Path("runs/generation-yield"), help="episodes and candidates")
    ap.add_argument(
        "--items", type=Path, default=None, help="the results log (default OUT/items.jsonl); small, may be committed"
    )
    ap.add_argument("--max-turns", type=int, default=15, help="A0: model calls per episode")
    ap.add_argument("--max-checks", type=int, default=3, help="A0: checks per episode")
    ap.add_argument("--repeats", type=int, default=3, help="validation: reference-solution runs")
    ap.add_argument("--reproduce", type=int, default=3, help="blind solver attempts for recorded expectations")
    ap.add_argument("--solver-turns", type=int, default=10, help="blind solver: model calls per attempt")
    ap.add_argument("--price-as", default="gpt-4.1-mini", help="hosted model the tokens are priced as")
    ap.add_argument("--novelty-threshold", type=float, default=0.8)
    ap.add_argument("--backend", default="docker")
    ap.add_argument("--report", action="store_true", help="print the tables of what is done; run nothing")
    ap.add_argument(
        "--recover",
        metavar="COMMIT",
        default=None,
        help="add to the log the items whose records are in OUT but not in the log (a log that lost lines), as run "
        "on COMMIT; their wall time is their phases' sum, their CPU time is unknown; runs nothing else",
    )
    args = ap.parse_args()
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        sys.exit(f"--arms: unknown {unknown}; known: {', '.join(ARMS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    items_path = args.items or args.out / "items.jsonl"
    items_path.parent.mkdir(parents=True, exist_ok=True)
    items = load_items(items_path)
    if args.recover:
        recover_items(args, arms, items, items_path)
        items = load_items(items_path)
    elif not args.report:
        try:
            run_items(args, arms, items, items_path)
        except KeyboardInterrupt:
            sys.exit("interrupted; the item under way is not recorded; the same command continues from there")
        items = load_items(items_path)
    stats = report(items, arms, args)
    result = {"model": args.model, "domain": args.domain, "n_per_arm": args.n, "arms": stats, "command": sys.argv}
    summary = items_path.with_suffix(".summary.json")
    summary.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(f"wrote {summary}")


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def recover_items(args: argparse.Namespace, arms: list[str], items: list[Item], items_path: Path) -> None:
    """Append an item for each (arm, episode) of ``range(args.n)`` missing from the log whose run dir holds its
    finished record (``OUT/ARM/NNN/results.jsonl``; an ``error`` record is no item)."""
    done = {(i.arm, i.index) for i in items}
    recovered = []
    for i in range(args.n):
        for arm in arms:
            path = args.out / arm / f"{i:03d}" / "results.jsonl"
            if (arm, i) in done or not path.is_file():
                continue
            lines = path.read_text(encoding="utf-8").splitlines()
            record = ProposalRecord.model_validate_json(lines[-1]) if lines else None
            if record is None or record.verdict == "error":
                continue
            v = record.validation
            wall = record.generation.wall_sec + (v.wall_sec or 0.0) + (v.reproduce_wall_sec or 0.0)
            text, grading, answer = fingerprint(record)
            item = Item(arm=arm, index=i, record=record, cpu_sec=None, wall_sec=wall, instruction=text,
                        grading=grading, answer=answer, code=args.recover)  # fmt: skip
            with items_path.open("a", encoding="utf-8") as f:
                f.write(item.model_dump_json() + "\n")
            recovered.append(f"{arm} #{i} ({record.verdict})")
    print(f"recovered {len(recovered)} item(s): {', '.join(recovered) or '-'}")


def _lead_records(items: list[Item], arms: list[str], index: int) -> list[ProposalRecord]:
    """The lead arm's records before ``index`` (the lead arm: A1 when it runs or ran in this series, so that a
    baseline arm continued past A1's items still starts where A1 would; else the first arm that starts from
    parents; none: no records)."""
    has_a1 = "A1" in arms or any(it.arm == "A1" for it in items)
    lead = "A1" if has_a1 else next((a for a in arms if ARMS[a] in STAGED_MODES), None)
    return [it.record for it in sorted(items, key=lambda it: it.index) if it.arm == lead and it.index < index]


def lead_history(items: list[Item], arms: list[str], index: int) -> dict[str, tuple[int, int]]:
    """The parents' record so far: the children proposed and accepted in the lead arm's episodes before
    ``index`` (no lead arm: no history, parents in turn)."""
    return parent_history(_lead_records(items, arms, index))


def parent_record(items: list[Item], arms: list[str], arm: str, index: int) -> dict[str, Any]:
    """What item ``index`` of ``arm`` starts from, so that every arm's item i gets the same: the lead arm's
    parent record (``ProposeConfig.parent_history``, ``parent_children``: what accepted children asked); and
    ``references``, the arm's own earlier valid candidates, which a candidate must not copy."""
    lead = _lead_records(items, arms, index)
    own = [it.record.candidate_dir for it in items if it.arm == arm and it.index < index and it.record.is_valid]
    return {
        "parent_history": parent_history(lead),
        "parent_children": children_made(lead),
        "references": [Path(c) for c in own if c and Path(c).is_dir()],
    }


def arm_proposer(base: ProposerConfig, arm: str) -> ProposerConfig:
    """``base`` with the arm's own staged settings (``ARM_STAGED``: P1s answers in sections)."""
    return base.model_copy(update={"staged": base.staged.model_copy(update=ARM_STAGED.get(arm, {}))})


def parents_line(items: list[Item], arm: str) -> str:
    """``parent proposed/accepted`` for each parent the arm's episodes started from."""
    history = parent_history(it.record for it in items if it.arm == arm)
    return ", ".join(f"{name} {accepted}/{tried}" for name, (tried, accepted) in sorted(history.items()))


def run_items(args: argparse.Namespace, arms: list[str], items: list[Item], items_path: Path) -> None:
    items = list(items)
    done = {(i.arm, i.index) for i in items}
    todo = [(i, a) for i in range(args.n) for a in arms if (a, i) not in done]
    if not todo:
        return
    domain = domain_context(args.domain)
    backend = get_backend(args.backend)
    # A previous run killed by a signal may have left sandboxes behind: their creator is gone, so they go now.
    swept = backend.cleanup()
    if swept:
        print(f"removed {swept} container(s)/image(s) left by an earlier, killed run", flush=True)
    # SIGTERM unwinds like Ctrl-C, so the running item's sandboxes are torn down and nothing half-done is recorded.
    signal.signal(signal.SIGTERM, _interrupt)
    base = parse_model_arg(args.model, base_url=args.base_url)
    # One server for every arm: the largest shape any arm needs (the workshop's long context). The blind solver
    # gets the solver's tuning on that server, as in the flywheel and `autoenv propose`.
    shape, solver_shape = tune_roles(base, "agentic")
    blind_loop = guarded_solver(args.solver_turns)
    base = ProposerConfig(max_turns=args.max_turns, max_checks=args.max_checks, start_from="example")
    version = code_version()
    print(f"{len(todo)} items to run ({len(done)} done) on {version} -> {items_path}", flush=True)
    with open_model(shape) as model, solver_agents(solver_shape, blind_loop, remote=False) as (blind_solver, _):
        for k, (i, arm) in enumerate(todo, 1):
            mode = ARMS[arm]
            config = ProposeConfig(
                mode=mode,
                n=1,
                first_index=i,
                from_path=args.from_path,
                proposer=arm_proposer(base, arm),
                validation=ValidationConfig(repeats=args.repeats, probes=GENERATED_PROBES),
                reproduce_attempts=args.reproduce,
                solver=blind_loop,
                **parent_record(items, arms, arm, i),
            )
            cpu0, t0 = _cpu(), time.perf_counter()
            try:
                (record,) = ProposeRun(
                    args.out / arm / f"{i:03d}", backend, model, domain, config, solver_factory=blind_solver
                ).run()
            except AutoEnvError as e:
                sys.exit(f"stopped at {arm} #{i}, not recorded: {e}\nthe same command continues from there")
            if record.verdict == "error":  # an infrastructure failure is not a rejection: never counted
                why = record.validation.error or record.generation.error
                sys.exit(f"stopped at {arm} #{i}, not recorded: {why}\nthe same command continues from there")
            text, grading, answer = fingerprint(record)
            item = Item(
                arm=arm,
                index=i,
                record=record,
                cpu_sec=_cpu() - cpu0,
                wall_sec=time.perf_counter() - t0,
                instruction=text,
                grading=grading,
                answer=answer,
                code=version,
            )
            with items_path.open("a", encoding="utf-8") as f:
                f.write(item.model_dump_json() + "\n")
            items.append(item)
            why = ", ".join(record.failed_checks) or "-"
            print(
                f"[{k}/{len(todo)}] {arm} #{i} from {record.parent or '-'}: {record.verdict} ({why}) "
                f"{item.wall_sec:.0f}s oneshot={record.validation.reproduce_oneshots} "
                f"blind={record.validation.reproduce_rewards}",
                flush=True,
            )


if __name__ == "__main__":
    main()
