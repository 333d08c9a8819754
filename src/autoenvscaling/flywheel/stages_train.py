"""Stages that hand the round to a trainer: export (datasets and JSONL, see ``export.round``) and train.

The ``command`` trainer is any program: it gets the export dir, trains, serves the new model behind an
OpenAI-compatible endpoint and reports it as ``{"base_url": ..., "model": ...}`` (in the endpoint file, or as
the last JSON line it prints). The following stages and rounds use that endpoint. A trainer that fails or
times out is a recorded error: the solver stays as it was and the run goes on.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from autoenvscaling.execution.rundir import fresh_dir
from autoenvscaling.export.round import ProposerEpisode, SolverTrial, export_round
from autoenvscaling.flywheel.child import die_with_parent
from autoenvscaling.flywheel.context import RoundContext
from autoenvscaling.flywheel.records import CalibrateOutput, ExportOutput, SolveOutput, TrainOutput
from autoenvscaling.llm.config import ModelConfig


def run_export(ctx: RoundContext, solve: SolveOutput, calibrate: CalibrateOutput) -> ExportOutput:
    out = fresh_dir(ctx.stage_dir("export"))
    trials = [
        SolverTrial(trial_dir=a.trial_dir, task_name=a.task_name, reward=a.reward, source="solve")
        for t in solve.tasks
        for a in t.attempts
    ]
    trials += [
        SolverTrial(trial_dir=a.trial_dir, task_name=a.task_name, reward=a.reward, source="calibrate", env_id=t.key)
        for t in calibrate.tasks
        for a in t.attempts
    ]
    episodes = [ProposerEpisode.model_validate(r.model_dump()) for r in calibrate.rewards]
    ctx.events.stage_started(ctx.n, "export", None)
    result = export_round(ctx.pool, out, round_=ctx.n, solver_trials=trials, episodes=episodes)
    ctx.events.advance(ctx.n, "export", f"{result.learnable} learnable, {result.sft_examples} SFT examples")
    return ExportOutput(round=ctx.n, stage="export", **result.model_dump())


def _endpoint(endpoint_file: Path, log: Path) -> dict[str, Any] | None:
    if endpoint_file.is_file():
        data = json.loads(endpoint_file.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else None
    for line in reversed(log.read_text(encoding="utf-8", errors="replace").splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(data, dict) and "base_url" in data:
                return data
    return None


def run_train(ctx: RoundContext, export: ExportOutput) -> TrainOutput:
    cfg = ctx.config.train
    base = TrainOutput(round=ctx.n, stage="train", kind=cfg.kind)
    if cfg.kind in ("trl-grpo", "sft"):
        from autoenvscaling.flywheel.stages_trl import run_trl

        return run_trl(ctx, export, base)
    if cfg.kind == "none" or cfg.command is None:
        return base
    out = fresh_dir(ctx.stage_dir("train"))
    endpoint_file, log = out / "endpoint.json", out / "train.log"
    values = {"export_dir": export.export_dir, "round": str(ctx.n), "run_dir": str(ctx.paths.root),
              "endpoint_file": str(endpoint_file)}  # fmt: skip
    command = cfg.command
    for k, v in values.items():
        command = command.replace("{" + k + "}", v)
    env = {**os.environ, **{f"AUTOENV_{k.upper()}": v for k, v in values.items()}}
    ctx.events.stage_started(ctx.n, "train", None)
    base = base.model_copy(update={"log_path": str(log)})
    try:
        with log.open("w", encoding="utf-8") as f:
            proc = subprocess.run(  # the user's own command line, as written in their config
                command, shell=True, cwd=ctx.paths.root, env=env, stdout=f, stderr=subprocess.STDOUT,
                timeout=cfg.timeout_sec, preexec_fn=die_with_parent, check=False,
            )  # fmt: skip
    except subprocess.TimeoutExpired:
        return base.model_copy(update={"error": f"the train command ran past {cfg.timeout_sec:g} s"})
    except OSError as e:
        return base.model_copy(update={"error": f"cannot run the train command: {e}"})
    if proc.returncode != 0:
        return base.model_copy(update={"exit_code": proc.returncode, "error": f"exit code {proc.returncode}"})
    try:
        found = _endpoint(endpoint_file, log)
    except (OSError, json.JSONDecodeError) as e:
        found, base.error = None, f"unreadable endpoint: {e}"
    if not found or not found.get("model"):
        error = base.error or 'the train command reported no endpoint ({"base_url": ..., "model": ...})'
        return base.model_copy(update={"exit_code": 0, "error": error})
    solver = ModelConfig(
        provider="openai",
        name=str(found["model"]),
        base_url=str(found["base_url"]) if found.get("base_url") else None,
        api_key_env=str(found.get("api_key_env") or cfg.api_key_env),
        temperature=ctx.solver.temperature,
        max_tokens=ctx.solver.max_tokens,
    )
    ctx.events.advance(ctx.n, "train", f"new solver endpoint: {solver.name} at {solver.base_url}")
    return base.model_copy(update={"exit_code": 0, "solver": solver})
