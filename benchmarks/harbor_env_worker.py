"""The HarborSpec side of ``benchmarks/train_env.py``: runs in a separate Python >= 3.12 venv that has
``trl`` and ``harbor`` (never this project), so it imports nothing of ``autoenvscaling``.

    HARBOR_PYTHON benchmarks/harbor_env_worker.py

One JSON object per stdin line: first ``{"dataset": DIR}`` (answered ``TASKS {"task_dirs": [...]}``), then one
rollout per line, ``{"task_dir", "kind", "commands", "timed"}``, each answered by one stdout line
``RESULT {json}`` (its reward and timings, or its error). At end of input the last sandbox is stopped
(``CLOSED``). A rollout is driven as TRL's ``GRPOTrainer`` drives an environment: one instance from
``HarborSpec(DIR).environment_factory`` reused throughout, ``reset(**row)`` with the row of
``HarborSpec(DIR).train_dataset`` whose ``task_dir`` it names, ``bash(command)`` per command, then ``reward``.
Harbor's own logging goes to stderr.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm (imported by harbor) stays offline


def emit(kind: str, payload: dict[str, Any]) -> None:
    sys.stdout.write(f"{kind} {json.dumps(payload)}\n")
    sys.stdout.flush()


def rollout(env: Any, row: dict[str, Any] | None, item: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"task_dir": item["task_dir"], "kind": item["kind"], "timed": item["timed"]}
    if row is None:
        return {**out, "reward": None, "error": "task not in HarborSpec's train_dataset"}
    t0 = time.perf_counter()
    try:
        env.reset(**row)
        t1 = time.perf_counter()
        for command in item["commands"]:
            env.bash(command)
        t2 = time.perf_counter()
        reward = float(env.reward)
        t3 = time.perf_counter()
    except Exception as e:  # one failed rollout is reported, the others still run
        return {**out, "reward": None, "error": f"{type(e).__name__}: {e}"[:2000]}
    return {**out, "reward": reward, "seconds": t3 - t0, "reset_sec": t1 - t0, "commands_sec": t2 - t1,
            "reward_sec": t3 - t2}  # fmt: skip


def main() -> int:
    first = sys.stdin.readline()
    if not first:
        return 2
    from trl.experimental.harbor import HarborSpec

    spec = HarborSpec(json.loads(first)["dataset"], agent="bash", environment_type="docker")
    rows = {Path(r["task_dir"]).resolve().as_posix(): r for r in spec.train_dataset}
    emit("TASKS", {"task_dirs": sorted(rows)})
    env = spec.environment_factory()
    for line in sys.stdin:
        if line.strip():
            item = json.loads(line)
            emit("RESULT", rollout(env, rows.get(Path(item["task_dir"]).resolve().as_posix()), item))
    t0 = time.perf_counter()
    env._run(env._stop())  # the last sandbox (HarborEnv stops each other one in the next reset)
    emit("CLOSED", {"seconds": time.perf_counter() - t0})
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    # Not sys.exit: HarborEnv.__del__ at interpreter exit waits on its event loop's thread, which is gone by then.
    os._exit(code)
