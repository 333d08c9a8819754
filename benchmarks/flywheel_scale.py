"""A simulated flywheel round at scale: N scripted proposals of trivial environments through the real pipeline
(propose -> validate -> dedup -> calibrate -> export) on Docker, and the pool's insert/query latency at 100k.

    python benchmarks/flywheel_scale.py [--n 200] [--concurrency 1] [--calibration-attempts 2] [--repeats 1]
                                        [--pool-n 100000] [--json out.json] [--keep]

Reports environments per minute and the orchestration overhead: the share of each stage's wall time spent
with no backend call in flight (image builds, sandbox create/start/exec/copies/stop), measured by the run's own
instrumented backend (``flywheel.backend.RunBackend``) as the union of the calls' intervals, since calls overlap
(trials start the next sandbox in the background; items run concurrently above --concurrency 1).

Each proposal is a distinct "sum the integers" task (random numbers, a random sentence so no two are
near-duplicates) graded by a one-line bash test; the scripted solver alternates a right and a wrong command,
so every environment calibrates as learnable (p = 1/2). The task images are removed at the end (--keep keeps
them and the run dir).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from autoenvscaling.execution.rundir import ResultsLog
from autoenvscaling.flywheel.backend import CallStats
from autoenvscaling.flywheel.config import load_config
from autoenvscaling.flywheel.rounds import Flywheel
from autoenvscaling.pool import Pool
from autoenvscaling.validate.report import ValidationReport

HERE = Path(__file__).resolve().parent
WORDS = ("amber basil cedar delta ember fjord grove harbor iris juniper kestrel lumen maple nectar onyx pebble quartz "
         "raven sable thistle umber violet willow xenon yarrow zephyr").split()  # fmt: skip
SOLVE = "awk '{s += $1} END {print s}' /app/numbers.txt > /app/sum.txt"
TEST_SH = (
    "#!/bin/bash\nmkdir -p /logs/verifier\n"
    'if [ "$(tr -d \'[:space:]\' < /app/sum.txt 2>/dev/null)" = "{total}" ]; then echo 1 > /logs/verifier/reward.txt;'
    " else echo 0 > /logs/verifier/reward.txt; fi\n"
)


def proposal(i: int, rng: random.Random) -> str:
    numbers = [rng.randint(1, 999) for _ in range(rng.randint(3, 8))]
    note = " ".join(rng.choice(WORDS) for _ in range(24))
    return json.dumps({
        "name": f"sum-{i:04d}", "description": "Sum integers.", "difficulty": "easy",
        "instruction": f"The file /app/numbers.txt holds one integer per line ({note}).\n\n"
                       "Write the sum of the integers to /app/sum.txt as a single number.\n",
        "dockerfile": "FROM autoenv/terminal:latest\nWORKDIR /app\nCOPY numbers.txt /app/numbers.txt\n",
        "environment_files": [{"path": "numbers.txt", "content": "".join(f"{x}\n" for x in numbers)}],
        "solve_sh": f"#!/bin/bash\nset -euo pipefail\n{SOLVE}\n",
        "test_sh": TEST_SH.replace("{total}", str(sum(numbers))),
        "test_files": [],
    })  # fmt: skip


def script(n: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    right = [f"```bash\n{SOLVE}\n```", "submit"]
    wrong = ["```bash\necho 0 > /app/sum.txt\n```", "submit"]
    return {
        "rules": [
            {"match": "^You write environments", "variants": [[proposal(i, rng)] for i in range(n)]},
            {"match": "Write the sum of the integers", "variants": [right, wrong]},
        ],
        "default": ["submit"],
    }


class StageClock:
    """Events that note, per stage, the wall time and the backend seconds spent while it ran."""

    def __init__(self) -> None:
        self.flywheel: Flywheel | None = None
        self._last = CallStats()
        self._last_t = time.perf_counter()
        self.stages: dict[str, dict[str, float]] = {}

    def stage_started(self, round_: int, stage: str, total: int | None) -> None:
        return None

    def advance(self, round_: int, stage: str, note: str = "") -> None:
        return None

    def stage_finished(self, round_: int, stage: str, summary: str, *, skipped: bool) -> None:
        backend = self.flywheel.backend if self.flywheel else None
        now, stats = time.perf_counter(), backend.stats if backend else CallStats()
        calls = {f"calls_{k}": v - self._last.calls.get(k, 0) for k, v in stats.calls.items()}
        wall = now - self._last_t
        busy, summed = stats.busy_sec - self._last.busy_sec, stats.total_sec - self._last.total_sec
        self.stages[stage] = {"wall_s": wall, "backend_busy_s": busy, "backend_summed_s": summed, **calls}
        self._last, self._last_t = stats, now
        print(f"  {stage}: {wall:.1f} s  {summary}", flush=True)

    def message(self, text: str) -> None:
        print(text)


def simulate(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    replies = work / "replies.json"
    replies.write_text(json.dumps(script(args.n, args.seed)))
    c = args.concurrency
    cfg = load_config(None, [
        "rounds=1", 'proposer_mode="prompt"', "domains={terminal = 1}", "counts.seed_tasks=0",
        f"counts.proposals={args.n}", f"counts.calibration_attempts={args.calibration_attempts}",
        f"counts.validation_repeats={args.repeats}", f"concurrency.solve={c}", f"concurrency.validation={c}",
        f'models.solver="scripted:{replies}"', "solver.max_turns=3",
    ])  # fmt: skip
    clock = StageClock()
    fw = Flywheel.create(cfg, work / "flywheel-bench", events=clock)
    clock.flywheel = fw
    started = time.perf_counter()
    (metrics,) = fw.run()
    total = time.perf_counter() - started
    pipeline = [clock.stages[s] for s in ("validate", "dedup", "calibrate") if s in clock.stages]
    wall = sum(s["wall_s"] for s in pipeline)
    backend = sum(s["backend_busy_s"] for s in pipeline)
    return {
        "n": args.n,
        "concurrency": c,
        "validation_repeats": args.repeats,
        "calibration_attempts": args.calibration_attempts,
        "valid": metrics.valid,
        "learnable": metrics.learnable,
        "round_wall_s": total,
        "pipeline_wall_s": wall,
        "pipeline_backend_s": backend,
        "envs_per_min_pipeline": metrics.valid / wall * 60 if wall else None,
        "envs_per_min_round": metrics.valid / total * 60,
        "overhead_share": (wall - backend) / wall if wall else None,
        "stages": clock.stages,
        "run_dir": str(fw.paths.root),
    }


def remove_images(run_dir: Path) -> int:
    """The task images this run built (validation reports name them; calibration tags carry the env ids)."""
    import docker

    client = docker.from_env()
    tags = {r.image for r in ResultsLog(run_dir / "rounds/1/validate/terminal/validation/results.jsonl",
                                        ValidationReport).load() if r.image}  # fmt: skip
    with Pool.open(run_dir / "pool") as pool:
        ids = {e.id for e in pool.list()}
    for image in client.images.list(name="autoenv-task/*"):
        tags |= {t for t in image.tags if t.split("/", 1)[1].split(":")[0] in ids}
    removed = 0
    for tag in tags:
        try:
            client.images.remove(tag)
            removed += 1
        except docker.errors.APIError:
            pass
    client.close()
    return removed


def pool_latency(n: int) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    import pool_scale

    ns = argparse.Namespace(n=n, queries=300, inserts=300, brute_queries=3, workers=2, seed=1)
    with tempfile.TemporaryDirectory() as tmp:
        r = pool_scale.run(ns, Path(tmp) / "catalog.sqlite")
    return {k: r[k] for k in ("n", "fill_s", "query_sql_lsh", "insert", "query_then_insert", "planted_found")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200, help="proposals in the round")
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--calibration-attempts", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=1, help="validation: reference-solution runs per environment")
    ap.add_argument("--seed", type=int, default=None, help="default: random (fresh images, no build cache hits)")
    ap.add_argument("--pool-n", type=int, default=100_000, help="pool size for the latency part; 0 skips it")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--keep", action="store_true", help="keep the run dir and the task images")
    args = ap.parse_args()
    args.seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    work = Path(tempfile.mkdtemp(prefix="autoenv-flywheel-bench-"))
    results: dict[str, Any] = {}
    try:
        print(f"simulated round: {args.n} proposals, concurrency {args.concurrency} ({work})", flush=True)
        results["round"] = sim = simulate(args, work)
        print(f"valid {sim['valid']}/{args.n}, learnable {sim['learnable']}; "
              f"{sim['envs_per_min_pipeline']:.1f} envs/min through validate+dedup+calibrate "
              f"({sim['envs_per_min_round']:.1f} over the whole round)", flush=True)  # fmt: skip
        print(
            f"orchestration overhead (wall time with no backend call in flight): {sim['overhead_share']:.1%} "
            f"of {sim['pipeline_wall_s']:.0f} s",
            flush=True,
        )
        if not args.keep:
            print(f"removed {remove_images(Path(sim['run_dir']))} task images")
        if args.pool_n:
            results["pool"] = pool = pool_latency(args.pool_n)
            print(f"pool at {pool['n']}: query p50 {pool['query_sql_lsh']['p50_ms']:.2f} ms "
                  f"(p99 {pool['query_sql_lsh']['p99_ms']:.2f}), insert p50 {pool['insert']['p50_ms']:.2f} ms, "
                  f"query+insert p50 {pool['query_then_insert']['p50_ms']:.2f} ms")  # fmt: skip
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
