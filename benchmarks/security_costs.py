"""What the sandbox's security controls cost, each measured on its own (docs/security.md cites these numbers).

    python benchmarks/security_costs.py [--calls 20] [--trials 6]

1. the storage watch's measure (``GET /containers/ID/json?size=1``) against a plain inspect, for a writable layer
   holding 0, 10,000 and 100,000 small files;
2. ending the agent phase's processes before shared-mode tests: through the persistent shell (before) against
   outside it with fresh shells after (``reset_channel``), each followed by the next command;
3. one oracle trial of a shipped example in shared and in separate verifier mode (no prewarmed sandboxes).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.sandbox.base import SandboxSpec
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.tasks import load_task
from autoenvscaling.verify.environment import EnvironmentBuilder
from autoenvscaling.verify.processes import _END_SCRIPT, _PASSES, agent_phase_mark
from autoenvscaling.verify.trial import TrialRunner
from autoenvscaling.verify.trial_agents import OracleAgent

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "terminal" / "log-error-summary"


def median_ms(fn: Callable[[], object], n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def storage_measure(backend: DockerBackend, calls: int) -> None:
    with backend.create(SandboxSpec(image=BASE_IMAGE, storage_mb=None)) as sb:
        api, cid = sb._api, sb.container_id
        made = 0
        for files in (0, 10_000, 100_000):
            if files > made:
                sb.exec(f"mkdir -p /d; cd /d; for i in $(seq {made + 1} {files}); do echo x > f$i; done", timeout=600)
                made = files
            plain = median_ms(lambda: api.inspect_container(cid), calls)
            sized = median_ms(sb.writable_layer_bytes, calls)
            print(f"storage measure, {files:>7} files in the layer: {sized:7.1f} ms (plain inspect {plain:.1f} ms)")


def sweep(backend: DockerBackend, calls: int) -> None:
    via_shell, outside = [], []
    with backend.create(SandboxSpec(image=BASE_IMAGE, storage_mb=None)) as sb:
        for _ in range(calls):
            script = _END_SCRIPT.format(mark=agent_phase_mark(sb), passes=_PASSES)
            t0 = time.perf_counter()
            assert sb.exec(script, timeout=60, user="0").ok
            sb.exec("true")
            via_shell.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            assert sb.reset_channel(script, 60) == 0
            sb.exec("true")
            outside.append(time.perf_counter() - t0)
    print(f"process sweep + next command, through the shell: {1000 * statistics.median(via_shell):.1f} ms")
    print(f"process sweep + next command, outside it (fresh shell): {1000 * statistics.median(outside):.1f} ms")


def verifier_modes(backend: DockerBackend, trials: int) -> None:
    builder = EnvironmentBuilder(backend)
    runner = TrialRunner(backend, builder, prewarm=False)
    with tempfile.TemporaryDirectory() as tmp:
        tasks = {}
        for mode in ("shared", "separate"):
            root = Path(tmp) / mode
            shutil.copytree(EXAMPLE, root)
            if mode == "shared":  # the example grades /app/report.txt in a separate verifier: undo that here
                toml = (root / "task.toml").read_text()
                toml = toml.replace('environment_mode = "separate"\n', "")
                (root / "task.toml").write_text(toml.replace('artifacts = ["/app/report.txt"]\n', ""))
            tasks[mode] = load_task(root)
            builder.image_for(tasks[mode])
        times: dict[str, list[float]] = {mode: [] for mode in tasks}
        for i in range(trials):
            for mode, task in tasks.items():
                t0 = time.perf_counter()
                res = runner.run(task, OracleAgent(), Path(tmp) / f"{mode}-{i}")
                times[mode].append(time.perf_counter() - t0)
                assert res.reward == 1.0, res.exception_info
    for mode, xs in times.items():
        print(f"oracle trial of {EXAMPLE.name}, {mode} verifier: {statistics.median(xs):.2f} s (median of {trials})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--trials", type=int, default=6)
    args = ap.parse_args()
    backend = DockerBackend()
    print(f"load average {os.getloadavg()[0]:.1f}")
    storage_measure(backend, args.calls)
    sweep(backend, args.calls)
    verifier_modes(backend, args.trials)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
