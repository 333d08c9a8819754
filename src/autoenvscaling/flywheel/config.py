"""``FlywheelConfig``: what one flywheel run does, loaded from TOML plus ``key=value`` overrides.

Models are given in the CLI's ``--model`` syntax (``"embedded"``, ``"scripted:replies.json"``, a model name)
or as a ``ModelConfig`` table. Paths in the file (seed tasks, held-out tasks, scripted replies) are relative
to the file. The resolved config (absolute paths, every default filled in) is saved in the run dir, and
``resume`` reads only that.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from autoenvscaling.agent.config import AgentConfig, guarded_solver
from autoenvscaling.errors import UserInputError
from autoenvscaling.execution.executors import ExecutorConfig
from autoenvscaling.llm.config import ModelConfig, parse_model_arg
from autoenvscaling.pool.dedup import DedupConfig
from autoenvscaling.pool.models import CalibrationBand
from autoenvscaling.roles.proposer.config import ProposerConfig
from autoenvscaling.train.settings import TrainSettings
from autoenvscaling.validate.probes import ProbeConfig

_SAME = ("", "same", "solver")
DEFAULT_SOLVER_TURNS = 30


def _model(value: Any) -> Any:
    return parse_model_arg(value) if isinstance(value, str) else value


class ModelsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    solver: ModelConfig = Field(default_factory=ModelConfig)
    proposer: ModelConfig | None = Field(
        default=None, description="None (or 'same'): the solver's model proposes too (co-evolution)"
    )
    probes: ModelConfig | None = Field(
        default=None,
        description="the model of the judge and the adversarial solver ([probes] judge, adversarial_attempts); "
        "None (or 'solver'): the round's solver (a trained adapter after a train stage)",
    )

    @field_validator("solver", mode="before")
    @classmethod
    def _solver(cls, v: Any) -> Any:
        return _model(v)

    @field_validator("proposer", "probes", mode="before")
    @classmethod
    def _same_or_model(cls, v: Any) -> Any:
        return None if isinstance(v, str) and v.strip().lower() in _SAME else _model(v)

    @property
    def co_evolution(self) -> bool:
        return self.proposer is None


class CountsConfig(BaseModel):
    """How much work one round does."""

    model_config = ConfigDict(extra="forbid")

    seed_tasks: int = Field(default=4, ge=0, description="tasks the solver attempts in the solve stage")
    solve_attempts: int = Field(default=1, ge=1, description="attempts per task in the solve stage")
    proposals: int = Field(default=4, ge=0, description="proposals per round, split across domains by the mix")
    calibration_attempts: int = Field(default=4, ge=1, description="solver attempts per valid new environment")
    validation_repeats: int = Field(default=3, ge=1, description="reference-solution runs that must all score 1")
    digest_trials: int = Field(default=24, ge=0, description="solver trials the proposer reads")
    reproduce_attempts: int = Field(
        default=3, ge=0, description="blind solver attempts that must reproduce recorded expectations (staged)"
    )
    reproduce_one_shots: int = Field(
        default=2, ge=0, le=10, description="one-shot blind attempts (one script, run once) before those attempts"
    )


class ProbesConfig(ProbeConfig):
    """The quality probes of the round's candidates, in the proposer's ``check`` and the validate stage. The rule
    probes are on (generated environments are untrusted work); the model probes (``judge``,
    ``adversarial_attempts``) are off: each costs model calls per candidate (minutes on the embedded CPU model).
    They run on ``models.probes`` (default: the round's solver); on Ray, each worker opens that model itself."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = Field(default=True, description="the rule probes (exploits, answer in the image, mutants)")


class ConcurrencyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    solve: int = Field(default=1, ge=1, description="tasks attempted at once (solve, calibrate, evaluate)")
    propose: int = Field(default=1, ge=1, description="proposer episodes at once")
    validation: int = Field(default=1, ge=1, description="candidates validated at once")


class BudgetsConfig(BaseModel):
    """Caps over the whole run; per-attempt and per-episode budgets live in [solver] and [proposer]."""

    model_config = ConfigDict(extra="forbid")

    max_cost_usd: float | None = Field(default=None, gt=0, description="no new round starts past this spend")
    max_tokens: int | None = Field(default=None, gt=0, description="no new round starts past these tokens")


class CalibrationConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    band: CalibrationBand = Field(default_factory=CalibrationBand)


class EvalConfig(BaseModel):
    """The held-out set: any Harbor task dirs (or dirs of them), solved after each round's train stage."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[Path] = Field(default_factory=list)
    attempts: int = Field(default=1, ge=1)


class TrainConfig(TrainSettings):
    """``none`` keeps the solver model; ``trl-grpo`` / ``sft`` train it with TRL (``train/``); ``command`` runs a
    user command on the round's export dir.

    ``trl-grpo``: GRPO with LoRA on the round's learnable environments, rollouts in our sandbox, rewards from
    the tasks' tests. ``sft``: rejection-sampling fine-tuning on the round's successful solver trajectories.
    Both write a LoRA adapter; the next stages and rounds run it as ``hf:<adapter>`` (in-process transformers),
    and the next round trains on from it. The keys inherited from ``TrainSettings`` tune them.

    The command runs with ``AUTOENV_EXPORT_DIR``, ``AUTOENV_ROUND``, ``AUTOENV_RUN_DIR`` and
    ``AUTOENV_ENDPOINT_FILE`` set (``{export_dir}``, ``{round}``, ``{run_dir}``, ``{endpoint_file}`` are
    substituted in it too). It reports the trained model's OpenAI-compatible endpoint as JSON
    ``{"base_url": ..., "model": ...}``: written to the endpoint file, or as the last JSON line of stdout.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["none", "command", "trl-grpo", "sft"] = "none"
    command: str | None = None
    timeout_sec: float = Field(default=24 * 3600.0, gt=0)
    api_key_env: str = Field(default="OPENAI_API_KEY", description="for the endpoint the command reports")

    @field_validator("command")
    @classmethod
    def _command(cls, v: str | None) -> str | None:
        return v.strip() or None if v is not None else None


class FlywheelConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="flywheel", description="prefix of the run dir name")
    rounds: int = Field(default=1, ge=1)
    backend: str = Field(default="docker", description="sandbox backend: docker, fake, or pkg.module:Class")
    runs_root: Path = Path("runs")
    pool: Path | None = Field(default=None, description="pool dir; None: <run dir>/pool")
    models: ModelsConfig = Field(default_factory=ModelsConfig)
    domains: dict[str, float] = Field(default_factory=lambda: {"terminal": 1.0}, description="name -> weight")
    seed_tasks: list[Path] = Field(default_factory=list, description="empty: the domains' example tasks")
    proposer_mode: Literal["auto", "staged", "agentic", "prompt", "prompt-recorded"] = Field(
        default="auto", description="auto: staged for the embedded model, the free workshop for any other"
    )
    counts: CountsConfig = Field(default_factory=CountsConfig)
    probes: ProbesConfig = Field(default_factory=ProbesConfig)
    concurrency: ConcurrencyConfig = Field(default_factory=ConcurrencyConfig)
    executor: ExecutorConfig = Field(
        default_factory=ExecutorConfig,
        description="where solver, calibration and evaluation attempts and the candidates' validation run: local "
        "threads, or kind = 'ray' (one Ray task per attempt or validation; address, resource, max_retries); see "
        "docs/multi-node.md",
    )
    budgets: BudgetsConfig = Field(default_factory=BudgetsConfig)
    solver: AgentConfig = Field(default_factory=lambda: guarded_solver(max_turns=DEFAULT_SOLVER_TURNS))
    proposer: ProposerConfig = Field(default_factory=ProposerConfig)
    calibration: CalibrationConfig = Field(default_factory=CalibrationConfig)
    dedup: DedupConfig = Field(default_factory=DedupConfig)
    eval: EvalConfig = Field(default_factory=EvalConfig)
    train: TrainConfig = Field(default_factory=TrainConfig)
    image_aliases: dict[str, str] = Field(default_factory=dict)

    @field_validator("solver", mode="before")
    @classmethod
    def _solver_over_guards(cls, v: Any) -> Any:
        """A ``[solver]`` table changes the keys it names; the rest keep the round's defaults (the small-model
        guards of ``guarded_solver``), as when there is no table. Set a guard to its off value to drop it."""
        if isinstance(v, dict):
            turns = v.get("max_turns", DEFAULT_SOLVER_TURNS)
            base = guarded_solver(max_turns=turns if isinstance(turns, int) else DEFAULT_SOLVER_TURNS)
            return base.model_dump() | v
        return v

    @field_validator("domains")
    @classmethod
    def _domains(cls, v: dict[str, float]) -> dict[str, float]:
        if not v or any(w < 0 for w in v.values()) or sum(v.values()) <= 0:
            raise ValueError("domains: give at least one domain with a positive weight")
        return v

    def resolved(self, base: Path) -> FlywheelConfig:
        """A copy with every relative path made absolute against ``base`` (the config file's dir)."""

        def fix(p: Path) -> Path:
            return p if p.is_absolute() else (base / p).resolve()

        models = self.models.model_copy(
            update={
                "solver": _fix_model(self.models.solver, fix),
                "proposer": None if self.models.proposer is None else _fix_model(self.models.proposer, fix),
                "probes": None if self.models.probes is None else _fix_model(self.models.probes, fix),
            }
        )
        return self.model_copy(
            update={
                "models": models,
                "seed_tasks": [fix(p) for p in self.seed_tasks],
                "eval": self.eval.model_copy(update={"tasks": [fix(p) for p in self.eval.tasks]}),
                "pool": None if self.pool is None else fix(self.pool),
                "train": self.train.model_copy(update={"base_model": _fix_base_model(self.train.base_model, fix)}),
            }
        )

    def to_toml_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


def _fix_base_model(value: str, fix: Any) -> str:
    """A train base model given as a path is relative to the config file; names (embedded:0.5b, tiny) stay."""
    if not value or value == "tiny" or value == "embedded" or value.startswith("embedded:"):
        return value
    return str(fix(Path(value).expanduser()))


def _fix_model(cfg: ModelConfig, fix: Any) -> ModelConfig:
    keys = ("scripted_path", "embedded_path", "hf_path")
    update = {k: fix(getattr(cfg, k)) for k in keys if getattr(cfg, k) is not None}
    return cfg.model_copy(update=update)


def parse_override(item: str) -> tuple[list[str], Any]:
    """``a.b.c=VALUE``: VALUE is read as a TOML value when it is one (3, true, "x", [1, 2]), else a string."""
    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise UserInputError(f"override {item!r}: expected key=value")
    try:
        value: Any = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return [k.strip() for k in key.split(".")], value


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    for item in overrides:
        path, value = parse_override(item)
        node = data
        for k in path[:-1]:
            child = node.get(k)
            if not isinstance(child, dict):
                child = {} if child is None else _as_table(child, k)
                node[k] = child
            node = child
        node[path[-1]] = value
    return data


def _as_table(value: Any, key: str) -> dict[str, Any]:
    if isinstance(value, str) and key in ("solver", "proposer", "probes"):  # "embedded" -> its ModelConfig table
        return parse_model_arg(value).model_dump(mode="json", exclude_none=True)
    raise UserInputError(f"override: {key} is not a table")


def load_config(path: Path | None, overrides: list[str] | None = None) -> FlywheelConfig:
    """Read ``path`` (None: all defaults), apply ``overrides``, validate, resolve paths."""
    data: dict[str, Any] = {}
    base = Path.cwd()
    if path is not None:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as e:
            raise UserInputError(f"{path}: cannot read config: {e.strerror or e}") from None
        except tomllib.TOMLDecodeError as e:
            raise UserInputError(f"{path}: not valid TOML: {e}") from None
        base = path.resolve().parent
    apply_overrides(data, list(overrides or []))
    try:
        config = FlywheelConfig.model_validate(data)
    except ValidationError as e:
        raise UserInputError(f"{path or 'config'}: {first_error(e)}") from None
    return config.resolved(base)


def first_error(e: ValidationError) -> str:
    """The first problem of a config, on one line: ``key: message (and N more)``."""
    first = e.errors()[0]
    loc = ".".join(str(p) for p in first["loc"])
    where = f"{loc}: " if loc else ""  # a check over the whole config has no key
    more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
    return f"{where}{first['msg'].removeprefix('Value error, ')}{more}"
