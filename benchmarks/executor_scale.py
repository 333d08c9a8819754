"""The Ray executor against the local one on the same trials, and the driver's own cost per trial at scale.

    python benchmarks/executor_scale.py overhead [--tasks 8] [--attempts 2] [--sleep 1.0] [--slots 2]
    python benchmarks/executor_scale.py driver [--trials 10000] [--baseline-trials N] [--attempts 10] [--slots 4]
    (add --json out.json to keep the figures)

Both start a two-node Ray cluster on this machine (``ray.cluster_utils.Cluster``: a head and a worker node, each
declaring ``--slots`` of ``sandbox_slot``) and solve tasks with the oracle on ``ScoredFakeBackend`` (no Docker).

overhead: the same trials (each test.sh stands in for ``--sleep`` seconds of work) solved by the local executor
  with 2 x slots threads, then on Ray with 2 x slots slots; Ray's overhead is its extra wall time. Ray is run
  twice: cold (worker processes start and import the package) and warm (idle workers reused), as a long run is.
driver: ``--trials`` trials with no simulated work through Ray; the driver's CPU time (user + system, all its
  threads, from getrusage) divided by the trials is what the driver pays per trial: packing each task dir,
  Ray submission and results, landing each trial dir, appending and fsyncing results.jsonl. Run twice: with
  the executor's default (several trials per Ray task on a long run) and, as the baseline, one Ray task per
  trial (``items_per_task = 1``); ``--baseline-trials 0`` skips the baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import ray
from ray.cluster_utils import Cluster

from autoenvscaling.execution.executors import Executor, ExecutorConfig, LocalExecutor
from autoenvscaling.execution.ray_executor import RayExecutor
from autoenvscaling.roles.solve_run import SolveRun
from autoenvscaling.sandbox.fake_scored import ScoredFakeBackend, write_scored_task
from autoenvscaling.verify.trial_agents import OracleAgent


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _solve(root: Path, name: str, tasks: list[Path], attempts: int, executor: Executor, n: int) -> dict[str, Any]:
    run = SolveRun(root / name, ScoredFakeBackend(), OracleAgent, attempts=attempts, concurrency=n, executor=executor)
    cpu0, t0 = _cpu(), time.perf_counter()
    records, _ = run.run(tasks)
    wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
    assert len(records) == len(tasks) * attempts and all(r.reward == 1.0 for r in records), "a trial failed"
    lines = (root / name / "results.jsonl").read_text().count("\n")
    return {"trials": len(records), "wall_sec": round(wall, 3), "driver_cpu_sec": round(cpu, 3), "log_lines": lines}


def _cluster(slots: int) -> Cluster:
    res = {"sandbox_slot": slots}
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "resources": res})
    c.add_node(num_cpus=1, resources=res)
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False)
    return c


def overhead(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    tasks = [write_scored_task(root / "tasks" / f"t{i:03d}", sleep_sec=args.sleep) for i in range(args.tasks)]
    n = 2 * args.slots
    out: dict[str, Any] = {"local": _solve(root, "local", tasks, args.attempts, LocalExecutor(), n)}
    executor = RayExecutor(ExecutorConfig(kind="ray"))
    out["ray_cold"] = _solve(root, "ray-cold", tasks, args.attempts, executor, n)
    out["ray_warm"] = _solve(root, "ray-warm", tasks, args.attempts, executor, n)
    for k in ("ray_cold", "ray_warm"):
        out[k]["overhead_vs_local"] = round(out[k]["wall_sec"] / out["local"]["wall_sec"] - 1, 4)
    return out


def driver(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    per_task = args.attempts
    tasks = [write_scored_task(root / "tasks" / f"t{i:05d}") for i in range(args.trials // per_task)]
    out: dict[str, Any] = {}
    runs = [("ray", None, tasks), ("ray_task_per_trial", 1, tasks[: args.baseline_trials // per_task])]
    for name, items_per_task, its_tasks in runs:
        if not its_tasks:
            continue
        executor = RayExecutor(ExecutorConfig(kind="ray", items_per_task=items_per_task))
        out.setdefault("warmup", _solve(root, "warmup", tasks[: 2 * args.slots], 1, executor, 2 * args.slots))
        res = _solve(root, name, its_tasks, per_task, executor, 2 * args.slots)
        res["driver_ms_per_trial"] = round(1000 * res["driver_cpu_sec"] / res["trials"], 3)
        res["trials_per_sec"] = round(res["trials"] / res["wall_sec"], 1)
        out[name] = res
    if "ray_task_per_trial" in out:
        out["driver_cost_vs_task_per_trial"] = round(
            out["ray"]["driver_ms_per_trial"] / out["ray_task_per_trial"]["driver_ms_per_trial"], 3
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["overhead", "driver"])
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--attempts", type=int, default=None, help="overhead: 2; driver: 10")
    ap.add_argument("--sleep", type=float, default=1.0)
    ap.add_argument("--trials", type=int, default=10000)
    ap.add_argument("--baseline-trials", type=int, default=None, help="driver: baseline's trials (default: --trials)")
    ap.add_argument("--slots", type=int, default=None, help="sandbox_slot per node (overhead: 2; driver: 4)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    args.attempts = args.attempts or (2 if args.mode == "overhead" else 10)
    args.slots = args.slots or (2 if args.mode == "overhead" else 4)
    args.baseline_trials = args.trials if args.baseline_trials is None else args.baseline_trials
    root = Path(tempfile.mkdtemp(prefix="executor-scale-"))
    cluster = _cluster(args.slots)
    try:
        result = (overhead if args.mode == "overhead" else driver)(args, root)
    finally:
        ray.shutdown()
        cluster.shutdown()
        shutil.rmtree(root, ignore_errors=True)
    result |= {"mode": args.mode, "args": {k: str(v) for k, v in vars(args).items()}, "load": os.getloadavg()[0]}
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
