"""A round's hand-off to trainers, in one dir::

    export/
      dataset/                 the pool's learnable environments as a Harbor dataset (task dirs, Harbor's
                               dataset.toml with task digests, and our dataset.json)
      pool.parquet             every pool row (needs the ``report`` extra; skipped with a note without it)
      sft.jsonl                successful solver trajectories as chat messages with structured tool calls
      proposer_episodes.jsonl  each proposer episode with its learnability reward (and its messages)
      manifest.json            what was written, with counts

Each part is written on its own: a part that fails (a full disk, a missing optional package) is noted in the
manifest and the other parts are still written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from autoenvscaling.agent.errors import TrajectoryError
from autoenvscaling.agent.trajectory import read_trajectory
from autoenvscaling.export.chat import ChatMessage, sft_example, trajectory_messages
from autoenvscaling.export.harbor_dataset import DEFAULT_ORG, export_harbor_dataset
from autoenvscaling.export.pool_dataset import export_parquet
from autoenvscaling.pool import Pool
from autoenvscaling.pool.errors import OptionalDependencyError
from autoenvscaling.pool.models import EnvStatus
from autoenvscaling.verify.results import is_solved


class SolverTrial(BaseModel):
    trial_dir: str
    task_name: str = ""
    reward: float | None = None
    source: str = "solve"  # the stage it came from
    env_id: str | None = None


class ProposerEpisode(BaseModel):
    key: str
    domain: str
    episode_dir: str
    env_id: str | None = None
    verdict: str
    pass_rate: float | None = None
    reward: float = 0.0


class EpisodeLine(ProposerEpisode):
    """One line of ``proposer_episodes.jsonl``."""

    round: int
    messages: list[ChatMessage] = Field(default_factory=list)


class RoundExport(BaseModel):
    export_dir: str
    dataset_dir: str = ""
    learnable: int = 0
    parquet: str | None = None
    sft_path: str = ""
    sft_examples: int = 0
    episodes_path: str = ""
    episodes: int = 0
    notes: list[str] = Field(default_factory=list)


def _part(export: RoundExport, name: str, fn: Callable[[], None]) -> None:
    try:
        fn()
    except (OSError, OptionalDependencyError) as e:
        export.notes.append(f"{name}: {type(e).__name__}: {e}")


def export_round(
    pool: Pool,
    out_dir: Path,
    *,
    round_: int,
    solver_trials: list[SolverTrial],
    episodes: list[ProposerEpisode],
) -> RoundExport:
    out_dir.mkdir(parents=True, exist_ok=True)
    export = RoundExport(export_dir=str(out_dir))

    def dataset() -> None:
        manifest = export_harbor_dataset(
            pool,
            out_dir / "dataset",
            EnvStatus.LEARNABLE,
            name=f"{DEFAULT_ORG}/round-{round_:03d}",
            description=f"the learnable environments of the pool after flywheel round {round_}",
        )
        export.dataset_dir, export.learnable = str(out_dir / "dataset"), manifest.count

    def parquet() -> None:
        export.parquet = str(export_parquet(pool, out_dir / "pool.parquet"))

    def sft() -> None:
        path = out_dir / "sft.jsonl"
        solved = [t for t in solver_trials if is_solved(t.reward)]
        export.sft_examples = write_sft(path, solved, round_, export.notes)
        export.sft_path = str(path)

    def proposer() -> None:
        path = out_dir / "proposer_episodes.jsonl"
        export.episodes = write_episodes(path, episodes, round_)
        export.episodes_path = str(path)

    for name, fn in (("dataset", dataset), ("parquet", parquet), ("sft", sft), ("episodes", proposer)):
        _part(export, name, fn)
    (out_dir / "manifest.json").write_text(export.model_dump_json(indent=2), encoding="utf-8")
    return export


def write_sft(path: Path, trials: list[SolverTrial], round_: int, notes: list[str]) -> int:
    count = 0
    with path.open("w", encoding="utf-8") as f:
        for t in trials:
            meta: dict[str, Any] = {"round": round_, "source": t.source, "task": t.task_name, "reward": t.reward,
                                    "trial_dir": t.trial_dir, "env_id": t.env_id}  # fmt: skip
            try:
                example = sft_example(Path(t.trial_dir) / "agent" / "trajectory.json", **meta)
            except TrajectoryError as e:
                notes.append(f"sft: skipped {t.trial_dir}: {e}")
                continue
            f.write(example.to_json_line())
            count += 1
    return count


def write_episodes(path: Path, episodes: list[ProposerEpisode], round_: int) -> int:
    with path.open("w", encoding="utf-8") as f:
        for ep in episodes:
            traj = Path(ep.episode_dir) / "trajectory.json"
            messages: list[ChatMessage] = []
            if traj.is_file():
                try:
                    messages = trajectory_messages(read_trajectory(traj))
                except TrajectoryError:
                    messages = []
            line = EpisodeLine(**ep.model_dump(), round=round_, messages=messages)
            f.write(line.model_dump_json(exclude_none=True) + "\n")
    return len(episodes)
