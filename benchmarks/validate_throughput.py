"""Wall time to validate the valid examples (K oracle runs + nop each) at concurrency 1 and 2, with the
share spent per phase and our per-trial overhead (everything except the task's own commands).

    python benchmarks/validate_throughput.py [--repeats 3] [--concurrency 1 2] [--tasks NAME ...] [--json out.json]
        [--task-dir DIR ...] [--image-alias FROM=TO ...] [--removal background|inline ...]

``--tasks``: only the valid examples with these dir names (default: all of them). ``--task-dir``: validate these
task dirs (or every task dir below each, as ``autoenv validate`` takes them), e.g. public Harbor tasks; with it,
the examples are left out unless ``--tasks`` also names some. ``--image-alias FROM=TO`` (repeatable) builds tasks
whose base image is FROM on the local image TO, as ``autoenv validate --image-alias`` does (the same parsing and
the same builder): ``benchmarks/harbor_standin/`` holds a stand-in for the public tasks' base images.
``--removal``: one run per entry at each concurrency, with each trial's containers removed in the background (the
default: the next trial runs meanwhile, and the run's wall includes waiting for the last) or ``inline`` (the trial
waits); ``--removal inline background background inline`` is an A/B within one run, with its wall ratio printed.
``not_valid`` counts the tasks whose verdict was not ``valid`` (their trials still count: check that it is 0).
``overhead_share`` is the overhead summed over the trials divided by their summed phase time (issue 14's target:
<= 25 % on small tasks, <= 5 % on real tasks whose own commands do real work).
``machine_cpu_busy`` is the whole machine's CPU use during the run (1.0: every core busy throughout). ``--floor N``
also times N bare container lifecycles per task (create, start, ``true``, stop) with the machine CPU each costs,
and prints ``container_cpu_share``: the trials' bare containers' CPU (two per separate-mode trial) over the
machine's CPU in the run. Run it on an otherwise idle machine: the CPU figures count every process.

``--harbor BIN`` also runs Harbor itself on the same tasks at each concurrency, in the same run (issue 14's
baseline): ``harbor run -a oracle -k K`` and ``harbor run -a nop`` over a dataset dir holding copies of the tasks,
``-n`` set to the concurrency. It prints Harbor's wall against ours (``harbor_ratio``: the small-task target is
>= 6x) and whether Harbor's rewards give each task the verdict ours does. BIN is the ``harbor`` of a Python >= 3.12
venv (``scripts/harbor_side_venv.sh`` makes one, outside this checkout, with the Docker Compose v2 plugin that
Harbor's docker environment needs; set ``DOCKER_CONFIG`` to the folder it prints). Harbor is not given
``--image-alias``: tag the stand-in with the base images' own names for it.

Images are built once before timing (a warm layer cache is the steady state of a flywheel).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from autoenvscaling.errors import UserInputError
from autoenvscaling.images.aliases import resolve_aliases
from autoenvscaling.sandbox.base import SandboxBackend
from autoenvscaling.sandbox.registry import get_backend
from autoenvscaling.tasks import load_task
from autoenvscaling.tasks.model import find_task_dirs
from autoenvscaling.validate.report import ValidationReport
from autoenvscaling.validate.run import ValidationRun
from autoenvscaling.validate.validator import ValidationConfig
from autoenvscaling.verify.environment import EnvironmentBuilder

ROOT = Path(__file__).resolve().parent.parent
PHASES = ("environment_setup", "agent_setup", "agent_execution", "verifier", "teardown")
REMOVALS = ("background", "inline")  # ValidationConfig.remove_in_background: the default, and the trial's own wait


def valid_examples() -> list[Path]:
    dirs = find_task_dirs([ROOT / "examples"])
    return [d for d in dirs if load_task(d).config.metadata.get("expected_verdict") == "valid"]


def trial_stats(reports: list[ValidationReport]) -> dict[str, float]:
    overheads, teardowns, walls = [], [], []
    phase_tot = dict.fromkeys(PHASES, 0.0)
    for r in reports:
        for t in r.trials:
            wall = sum(t.phases.get(p, 0.0) for p in PHASES)
            walls.append(wall)
            overheads.append(wall - t.commands.get("agent", 0.0) - t.commands.get("tests", 0.0))
            teardowns.append(t.phases.get("teardown", 0.0))
            for p in PHASES:
                phase_tot[p] += t.phases.get(p, 0.0)
    total = sum(phase_tot.values()) or 1.0
    out = {f"share_{p}": phase_tot[p] / total for p in PHASES}
    out["trials"] = float(len(overheads))
    out["overhead_median_s"] = statistics.median(overheads)
    out["overhead_max_s"] = max(overheads)
    out["overhead_share"] = sum(overheads) / (sum(walls) or 1.0)
    out["teardown_median_s"] = statistics.median(teardowns)
    out["teardown_max_s"] = max(teardowns)
    out["build_s"] = sum(r.timings.get("build", 0.0) for r in reports)
    out["leakage_s"] = sum(r.timings.get("leakage", 0.0) for r in reports)
    return out


def _cli(*args: str) -> float:
    """Run a docker CLI command; returns its wall seconds."""
    start = time.perf_counter()
    subprocess.run(["docker", *args], check=True, capture_output=True)
    return time.perf_counter() - start


def cli_baseline_trial(task_dir: Path, image: str) -> dict[str, float]:
    """One oracle trial the way a CLI-driven runner does it: docker run/cp/exec/rm, one process per step."""
    name = f"aes-bench-{os.getpid()}-{time.monotonic_ns()}"
    t: dict[str, float] = {}
    t["start"] = _cli("run", "-d", "--init", "--label", "autoenvscaling=1", "--name", name, image, "sleep", "infinity")
    try:
        t["upload_solution"] = _cli("cp", str(task_dir / "solution"), f"{name}:/solution")
        start = time.perf_counter()
        subprocess.run(
            [
                "docker",
                "exec",
                name,
                "bash",
                "-c",
                "mkdir -p /logs/agent /logs/verifier && bash /solution/solve.sh > /logs/agent/oracle.txt 2>&1",
            ],
            check=False,
            capture_output=True,
        )
        t["agent_exec"] = time.perf_counter() - start
        t["upload_tests"] = _cli("cp", str(task_dir / "tests"), f"{name}:/tests")
        start = time.perf_counter()
        subprocess.run(
            ["docker", "exec", name, "bash", "-c", "(bash /tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1"],
            check=False,
            capture_output=True,
        )
        t["tests_exec"] = time.perf_counter() - start
        with tempfile.TemporaryDirectory() as out:
            t["download"] = _cli("cp", f"{name}:/logs/verifier", out)
    finally:
        t["teardown"] = _cli("rm", "-f", name)
    return t


def cpu_busy_s() -> float:
    """Seconds of CPU time the whole machine has spent busy (every process: the engine's daemons, runc, the
    containers and this one), from /proc/stat; differences only mean something on an otherwise idle machine."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def container_lifecycle(
    backend: SandboxBackend, builder: EnvironmentBuilder, task_dir: Path, n: int
) -> dict[str, float]:
    """One bare container of the task's image as a trial makes it: create, start (the shell included), one
    ``true``, stop (removal). Median wall seconds of each part, and the machine's CPU seconds per container."""
    task = load_task(task_dir)
    image = builder.image_for(task)
    parts: dict[str, list[float]] = {"create": [], "start": [], "exec": [], "stop": []}
    cpu0 = cpu_busy_s()
    for i in range(n):
        spec = builder.spec_for(task, image, name_hint=f"floor-{i}", run_id="bench-floor", network=False)
        t0 = time.perf_counter()
        sb = backend.create(spec)
        t1 = time.perf_counter()
        try:
            sb.start()
            t2 = time.perf_counter()
            sb.exec("true", timeout=30)
            t3 = time.perf_counter()
        finally:
            sb.stop()
        t4 = time.perf_counter()
        for key, sec in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
            parts[key].append(sec)
    out = {k: statistics.median(v) for k, v in parts.items()}
    out["total"] = sum(out.values())
    out["cpu"] = (cpu_busy_s() - cpu0) / n
    return out


def containers_per_trial(task_dir: Path) -> int:
    config = load_task(task_dir).config
    return 2 if config.verifier.environment_mode == "separate" and not config.is_multi_step else 1


def harbor_rewards(jobs_dir: Path) -> dict[str, list[float | None]]:
    """Each task's rewards (by task dir name) over the trials of the Harbor jobs under ``jobs_dir``
    (None: the trial has no reward, an error)."""
    out: dict[str, list[float | None]] = {}
    for result in sorted(jobs_dir.glob("*/*/result.json")):
        data = json.loads(result.read_text())
        task_path = ((data.get("config") or {}).get("task") or {}).get("path")
        if not task_path:
            continue
        rewards = (data.get("verifier_result") or {}).get("rewards") or {}
        out.setdefault(Path(task_path).name, []).append(rewards.get("reward"))
    return out


def _harbor_images() -> set[str]:
    """The images Harbor's docker environment builds (``hb__<task>``), by id."""
    out = subprocess.run(
        ["docker", "images", "-q", "--filter", "reference=hb__*"], capture_output=True, text=True, check=True
    )
    return set(out.stdout.split())


def harbor_validation(harbor: str, tasks: list[Path], repeats: int, concurrency: int) -> dict[str, object]:
    """Harbor's oracle (``repeats`` attempts per task) and nop runs over copies of ``tasks``, ``concurrency``
    trials at a time: the wall of the two ``harbor run`` commands and the verdict each task gets from them.

    Both sides start from built images: an untimed nop run builds Harbor's first, and ``--no-delete`` keeps
    them between runs (its default, ``--delete``, removes each trial's image and the next trial builds it again
    from the layer cache). The images it built are removed at the end."""
    before = _harbor_images()
    walls, rewards = {}, {}
    try:
        with tempfile.TemporaryDirectory(prefix="aes-harbor-") as tmp:
            dataset, jobs = Path(tmp) / "dataset", Path(tmp) / "jobs"
            for t in tasks:
                shutil.copytree(t, dataset / t.name)
            env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
            for run, agent, attempts in (("warm", "nop", 1), ("oracle", "oracle", repeats), ("nop", "nop", 1)):
                cmd = [harbor, "run", "-a", agent, "-p", str(dataset), "-e", "docker", "-n", str(concurrency)]
                cmd += ["-k", str(attempts), "-o", str(jobs / run), "-y", "--no-delete"]
                start = time.perf_counter()
                proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
                walls[run] = time.perf_counter() - start
                if proc.returncode != 0:
                    raise SystemExit(f"harbor run -a {agent} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
                rewards[run] = harbor_rewards(jobs / run)
    finally:
        if built := sorted(_harbor_images() - before):
            subprocess.run(["docker", "image", "rm", "-f", *built], capture_output=True, check=False)
    verdicts = {}
    for t in tasks:
        oracle, nop = rewards["oracle"].get(t.name, []), rewards["nop"].get(t.name, [])
        if len(oracle) != repeats or len(nop) != 1 or None in oracle + nop:
            verdicts[t.name] = "error"
        else:
            verdicts[t.name] = "valid" if all(r == 1.0 for r in oracle) and nop == [0.0] else "invalid"
    return {
        "wall_s": walls["oracle"] + walls["nop"],
        "oracle_s": walls["oracle"],
        "nop_s": walls["nop"],
        "verdicts": verdicts,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--baseline-tasks", type=int, default=3, help="tasks whose oracle trials also run via the CLI")
    ap.add_argument("--tasks", nargs="+", metavar="NAME", help="only these valid examples (their dir names)")
    ap.add_argument(
        "--task-dir",
        nargs="+",
        type=Path,
        metavar="DIR",
        help="validate these task dirs (or the task dirs below each); the examples only with --tasks",
    )
    ap.add_argument(
        "--image-alias",
        action="append",
        metavar="FROM=TO",
        help="build tasks whose base image is FROM on the local image TO (repeatable; as autoenv validate)",
    )
    ap.add_argument(
        "--floor", type=int, default=0, metavar="N", help="also time N bare container lifecycles per task (the floor)"
    )
    ap.add_argument("--harbor", metavar="BIN", help="also run Harbor's oracle and nop on the same tasks (its `harbor`)")
    ap.add_argument(
        "--removal",
        nargs="+",
        choices=REMOVALS,
        default=["background"],
        help="how trials' containers are removed, one validation run per entry at each concurrency, in this order "
        "(e.g. inline background background inline: an A/B in one run)",
    )
    args = ap.parse_args()
    if args.harbor and not shutil.which(args.harbor):
        ap.error(f"--harbor: no such executable: {args.harbor}")

    try:
        aliases = resolve_aliases(args.image_alias)
        extra = find_task_dirs(args.task_dir) if args.task_dir else []
    except UserInputError as e:
        ap.error(str(e))
    tasks = valid_examples() if args.tasks or not extra else []
    if args.tasks:
        unknown = sorted(set(args.tasks) - {t.name for t in tasks})
        if unknown:
            ap.error(f"not a valid example: {', '.join(unknown)}")
        tasks = [t for t in tasks if t.name in args.tasks]
    tasks += [t for t in extra if t not in tasks]
    backend = get_backend("docker")
    builder = EnvironmentBuilder(backend, aliases=aliases)
    for t in tasks:  # warm the image cache; builds are not what we time here
        builder.image_for(load_task(t))

    # Baseline in the same run: the same oracle trials driven through the docker CLI.
    base_over, base_tear = [], []
    for t in tasks[: args.baseline_tasks]:
        task = load_task(t)
        image = builder.image_for(task)
        for _ in range(args.repeats):
            b = cli_baseline_trial(t, image)
            base_over.append(sum(b.values()) - b["agent_exec"] - b["tests_exec"])
            base_tear.append(b["teardown"])

    lifecycle: dict[Path, dict[str, float]] = {}
    for t in tasks if args.floor else []:
        lifecycle[t] = container_lifecycle(backend, builder, t, args.floor)
    by_name = {load_task(t).name: t for t in tasks}

    rows: dict[str, dict[str, float]] = {}
    walls: dict[tuple[int, str], list[float]] = {}  # (concurrency, removal): each run's wall
    for n in args.concurrency:
        for i, removal in enumerate(args.removal):
            label = f"c={n}" if len(args.removal) == 1 else f"c={n} {removal}#{args.removal[: i + 1].count(removal)}"
            rows[label] = _measured_run(args, backend, tasks, aliases, n, removal, lifecycle, by_name)
            walls.setdefault((n, removal), []).append(rows[label]["wall_s"])
    first = next(iter(rows))

    what = f"{len(tasks)} tasks" if extra else f"{len(tasks)} valid examples"
    print(f"{what}, K={args.repeats} + nop ({(args.repeats + 1) * len(tasks)} trials per run)")
    print(f"{'metric':<24}" + "".join(f"{label:>17}" for label in rows))
    for key in rows[first]:
        print(f"{key:<24}" + "".join(f"{row[key]:>17.3f}" for row in rows.values()))
    if len(args.concurrency) > 1 and len(args.removal) == 1:
        base = rows[first]["wall_s"]
        for n in args.concurrency[1:]:
            print(f"speed-up c={n} vs {first}: {base / rows[f'c={n}']['wall_s']:.2f}x")
    if len(set(args.removal)) > 1:
        for n in args.concurrency:
            ratio = statistics.mean(walls[n, "background"]) / statistics.mean(walls[n, "inline"])
            print(f"c={n}: mean wall, removal in the background / inline: {ratio:.3f}")
    if base_over:
        ours = rows[first]["overhead_median_s"]
        print(
            f"baseline (docker CLI per step, {len(base_over)} oracle trials): overhead median "
            f"{statistics.median(base_over):.3f} s, teardown median {statistics.median(base_tear):.3f} s; "
            f"ours/baseline overhead = {ours / statistics.median(base_over):.2f}"
        )
        rows["cli"] = {
            "overhead_median_s": statistics.median(base_over),
            "teardown_median_s": statistics.median(base_tear),
        }
    if lifecycle:
        print(f"bare container, median of {args.floor} per task: create / start / exec true / stop = wall s; CPU s")
        for t, v in lifecycle.items():
            walls = " / ".join(f"{v[k]:.3f}" for k in ("create", "start", "exec", "stop"))
            print(f"  {t.name:<22} {walls} = {v['total']:.3f}; {v['cpu']:.3f} ({containers_per_trial(t)} per trial)")
        print("container_cpu_share: the bare containers' CPU over the machine's CPU in the run (an idle machine)")
    if args.harbor:
        print("harbor_ratio: Harbor's wall (oracle + nop runs) over ours, same tasks and concurrency (target >= 6x)")
    print("teardown: with removal in the background, the hand-over (the run's wall includes waiting for the removals)")
    print("targets: overhead per trial <= 1 s, teardown <= 0.5 s")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


def _measured_run(
    args: argparse.Namespace,
    backend: SandboxBackend,
    tasks: list[Path],
    aliases: dict[str, str],
    n: int,
    removal: str,
    lifecycle: dict[Path, dict[str, float]],
    by_name: dict[str, Path],
) -> dict[str, float]:
    """One validation run of the tasks at concurrency ``n``: trial stats, wall, machine CPU, Harbor's figures."""
    with tempfile.TemporaryDirectory() as tmp:
        config = ValidationConfig(repeats=args.repeats, remove_in_background=removal == "background")
        run = ValidationRun(Path(tmp) / f"c{n}", backend, config, aliases=aliases, concurrency=n)
        start, cpu0 = time.perf_counter(), cpu_busy_s()
        reports, _ = run.run(tasks)
        wall, cpu = time.perf_counter() - start, cpu_busy_s() - cpu0
    stats = trial_stats(reports)
    stats["wall_s"] = wall
    stats["not_valid"] = float(sum(not r.is_valid for r in reports))
    stats["machine_cpu_busy"] = cpu / (wall * (os.cpu_count() or 1))  # 1.0: every core busy the whole run
    stats["machine_cpu_per_trial_s"] = cpu / (stats["trials"] or 1.0)
    if lifecycle:  # the bare containers' CPU, as a share of the machine's CPU in the run
        bare = sum(
            containers_per_trial(by_name[r.task_name]) * lifecycle[by_name[r.task_name]]["cpu"] * len(r.trials)
            for r in reports
        )
        stats["container_cpu_share"] = bare / (cpu or 1.0)
    if args.harbor:
        harbor = harbor_validation(args.harbor, tasks, args.repeats, n)
        ours = {by_name[r.task_name].name: r.verdict.value for r in reports}
        differ = {k: (ours.get(k), v) for k, v in harbor["verdicts"].items() if ours.get(k) != v}
        stats["harbor_wall_s"] = harbor["wall_s"]
        stats["harbor_ratio"] = harbor["wall_s"] / wall
        stats["harbor_verdicts_differ"] = float(len(differ))
        for k, (o, h) in differ.items():
            print(f"c={n}: {k}: ours {o}, Harbor {h}")
    return stats


if __name__ == "__main__":
    main()
