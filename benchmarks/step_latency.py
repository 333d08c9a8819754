"""Latency of one trivial command (`true`) through three channels into the same running container:

* ``DockerSandbox.exec`` (the persistent framed bash; what agents and verifiers use),
* ``docker exec CONTAINER true`` through the CLI (a subprocess per call),
* ``container.exec_run("true")`` through the docker SDK (an exec instance per call).

    python benchmarks/step_latency.py [--image autoenv/base:bookworm] [--n 300] [--n-slow 50] [--json out.json]

All three run in the same process and container, interleaved in rounds so load on a shared machine hits them
alike. Target: DockerSandbox median <= 5 ms.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.sandbox.base import SandboxSpec
from autoenvscaling.sandbox.docker import DockerBackend

TARGET_MEDIAN_MS = 5.0


class ChannelStats(BaseModel):
    channel: str
    calls: int
    median_ms: float
    p99_ms: float
    mean_ms: float


class Report(BaseModel):
    image: str
    channels: list[ChannelStats]
    target_median_ms: float = TARGET_MEDIAN_MS
    meets_target: bool


def stats(channel: str, seconds: list[float]) -> ChannelStats:
    ms = sorted(s * 1000 for s in seconds)
    p99 = ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))]
    return ChannelStats(
        channel=channel, calls=len(ms), median_ms=statistics.median(ms), p99_ms=p99, mean_ms=statistics.fmean(ms)
    )


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def measure(image: str, n: int, n_slow: int) -> Report:
    backend = DockerBackend()
    docker_cli = shutil.which("docker")
    with backend.create(SandboxSpec(image=image, name_hint="bench")) as sb:
        container = backend.client.containers.get(sb.id)
        channels: dict[str, Callable[[], object]] = {
            "DockerSandbox.exec": lambda: sb.exec("true"),
            "container.exec_run": lambda: container.exec_run(["true"]),
        }
        if docker_cli:
            channels["docker exec (CLI)"] = lambda: subprocess.run(
                [docker_cli, "exec", sb.id, "true"], check=True, capture_output=True
            )
        for fn in channels.values():  # warm-up: connections, page cache
            fn()
        samples: dict[str, list[float]] = {name: [] for name in channels}
        rounds = max(n_slow, 1)
        per_round = max(n // rounds, 1)
        for _ in range(rounds):  # interleaved, so background load affects every channel alike
            samples["DockerSandbox.exec"] += [timed(channels["DockerSandbox.exec"]) for _ in range(per_round)]
            for name in channels:
                if name != "DockerSandbox.exec":
                    samples[name].append(timed(channels[name]))
    result = [stats(name, s) for name, s in samples.items()]
    return Report(image=image, channels=result, meets_target=result[0].median_ms <= TARGET_MEDIAN_MS)


def print_report(report: Report) -> None:
    base = report.channels[0]
    print(f"image {report.image}: `true` round trip, milliseconds")
    print(f"{'channel':<22}{'calls':>7}{'median':>10}{'p99':>10}{'mean':>10}{'median x':>11}")
    for c in report.channels:
        ratio = c.median_ms / base.median_ms if base.median_ms else float("nan")
        print(f"{c.channel:<22}{c.calls:>7}{c.median_ms:>10.2f}{c.p99_ms:>10.2f}{c.mean_ms:>10.2f}{ratio:>10.1f}x")
    verdict = "meets" if report.meets_target else "MISSES"
    print(f"DockerSandbox.exec median {base.median_ms:.2f} ms {verdict} the target of {report.target_median_ms} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--image", default=BASE_IMAGE)
    parser.add_argument("--n", type=int, default=300, help="calls through DockerSandbox.exec")
    parser.add_argument("--n-slow", type=int, default=50, help="calls through each docker exec channel")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    report = measure(args.image, args.n, args.n_slow)
    print_report(report)
    if args.json:
        args.json.write_text(report.model_dump_json(indent=2))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
