"""Stages where environments are made: propose (episodes per domain) and validate (the pipeline's own checks).

Both run through ``roles.proposer.run.ProposeRun``, one per domain: ``propose/<domain>/`` holds its episodes
and candidates, ``validate/<domain>/`` its validation run. A domain is finished when its ``generations.json``
(propose) or ``records.json`` (validate) exists. A half-done propose domain is redone from an empty dir; a
half-done validate domain resumes: the validations and blind attempts in its logs stand, the rest are run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from autoenvscaling.execution.rundir import fresh_dir, write_atomic
from autoenvscaling.flywheel.context import RoundContext
from autoenvscaling.flywheel.crash import checkpoint
from autoenvscaling.flywheel.domains import allocate
from autoenvscaling.flywheel.records import DigestOutput, Generation, ProposeOutput, ValidateOutput
from autoenvscaling.llm.base import Message, Model, ModelError, ModelResponse, Sampling, ToolSpec
from autoenvscaling.llm.factory import open_model
from autoenvscaling.pool.models import EnvStatus
from autoenvscaling.roles.proposer.records import GenerationResult, ProposalRecord
from autoenvscaling.roles.proposer.reproduce import Reproduction, reproduction_attempts
from autoenvscaling.roles.proposer.run import ProposeConfig, ProposeRun
from autoenvscaling.roles.proposer.staged.parents import children_made, parent_history
from autoenvscaling.roles.proposer.staged.render import is_recorded
from autoenvscaling.roles.remote_solver import RemoteModel
from autoenvscaling.roles.tuning import resolve_mode, tune_solver
from autoenvscaling.validate.probes import ProbeConfig
from autoenvscaling.validate.report import ProbeBrief, ValidationReport, is_probe_check
from autoenvscaling.validate.validator import ValidationConfig

_GENERATIONS = TypeAdapter(list[GenerationResult])
_RECORDS = TypeAdapter(list[ProposalRecord])


class _NoModel:
    """Validation needs no model; ``ProposeRun`` takes one, so it gets this (which refuses to be called)."""

    name = "none"
    provider = "none"

    def complete(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        response_format: dict[str, Any] | None = None,
        sampling: Sampling | None = None,
    ) -> ModelResponse:
        raise ModelError("the validate stage calls no model")


def _parents(ctx: RoundContext, domain: str) -> list[Path]:
    """Accepted environments of the domain, newest first: the staged proposer's mutation starts."""
    entries = ctx.pool.list(status=[EnvStatus.LEARNABLE, EnvStatus.VALID], domain=domain)
    return [e.path for e in reversed(entries)]


def _parent_record(ctx: RoundContext, domain: str) -> dict[str, Any]:
    """The domain's earlier rounds, per parent: the children proposed and accepted (valid, reproduced), and what
    the accepted ones asked (``ProposeConfig.parent_history`` and ``parent_children``)."""
    records: list[ProposalRecord] = []
    for n in range(1, ctx.n):
        done = ctx.paths.stage_dir(n, "validate") / domain / "records.json"
        if done.is_file():
            records += _RECORDS.validate_json(done.read_bytes())
    return {"parent_history": parent_history(records), "parent_children": children_made(records)}


@contextlib.contextmanager
def _probe_model(ctx: RoundContext, *, remote: bool = False) -> Iterator[Model | None]:
    """The model of the judge and the adversarial solver for one stage: ``models.probes``, else the round's solver
    (a trained adapter after a train stage); None when ``[probes]`` asks for no model probe. ``remote``: the
    probes run on the configured executor's workers, each of which opens the model itself."""
    if not ctx.config.probes.model_probes:
        yield None
        return
    chosen = ctx.config.models.probes
    cfg = ctx.solver if chosen is None else tune_solver(chosen, concurrency=ctx.config.concurrency.validation)
    if remote:
        yield RemoteModel(cfg)
        return
    with open_model(cfg) as model:
        yield model


def _propose_config(ctx: RoundContext, n: int, digest: DigestOutput | None, domain: str) -> ProposeConfig:
    cfg = ctx.config
    return ProposeConfig(
        mode=resolve_mode(cfg.proposer_mode, ctx.proposer),
        n=max(1, n),
        concurrency=cfg.concurrency.propose,
        validation_concurrency=cfg.concurrency.validation,
        from_path=Path(digest.digest_path).parent if digest is not None else None,
        proposer=cfg.proposer,
        validation=ValidationConfig(
            repeats=cfg.counts.validation_repeats, probes=ProbeConfig.model_validate(cfg.probes.model_dump())
        ),
        parents=_parents(ctx, domain),
        reproduce_attempts=cfg.counts.reproduce_attempts,
        reproduce_one_shots=cfg.counts.reproduce_one_shots,
        solver=cfg.solver,
    )


def run_propose(ctx: RoundContext, digest: DigestOutput) -> ProposeOutput:
    counts = allocate(ctx.config.counts.proposals, ctx.config.domains)
    ctx.events.stage_started(ctx.n, "propose", sum(counts.values()))
    generations: list[Generation] = []
    name = ""
    with ctx.proposer_model() as model, _probe_model(ctx) as probe_model:
        name = model.name
        for domain, n in counts.items():
            if n == 0:
                continue
            made = _propose_domain(ctx, model, domain, n, digest, probe_model)
            generations += [Generation(domain=domain, result=g) for g in made]
    return ProposeOutput(round=ctx.n, stage="propose", proposer=name, generations=generations)


def _propose_domain(
    ctx: RoundContext, model: Model, domain: str, n: int, digest: DigestOutput, probe_model: Model | None
) -> list[GenerationResult]:
    out = ctx.stage_dir("propose") / domain
    done = out / "generations.json"
    if done.is_file():
        results = _GENERATIONS.validate_json(done.read_bytes())
        for g in results:
            ctx.events.advance(ctx.n, "propose", f"{domain}/{g.id}")
        return results
    # A killed propose stage starts over: an episode's draws depend on the episodes before it in the process (a
    # scripted proposer takes its rules' variants in turn), so keeping some would change the others' proposals.
    fresh_dir(out)
    # The parents' record is read here only: the validate stage's config schedules no episode.
    config = _propose_config(ctx, n, digest, domain).model_copy(update=_parent_record(ctx, domain))
    run = ProposeRun(out, ctx.backend, model, ctx.domains[domain], config, probe_model=probe_model)

    def on_generated(g: GenerationResult) -> None:
        what = "candidate" if g.candidate_dir else (g.error or ", ".join(g.failed_checks) or "no candidate")
        ctx.events.advance(ctx.n, "propose", f"{domain}/{g.id}: {what}")
        checkpoint("item")

    results = run.generate(on_generated)
    write_atomic(done, _GENERATIONS.dump_json(results, indent=2).decode())
    return results


def run_validate(ctx: RoundContext, proposed: ProposeOutput) -> ValidateOutput:
    by_domain: dict[str, list[GenerationResult]] = {}
    for g in proposed.generations:
        by_domain.setdefault(g.domain, []).append(g.result)
    ctx.events.stage_started(ctx.n, "validate", sum(1 for g in proposed.generations if g.result.candidate_dir))
    records: list[ProposalRecord] = []
    probes: dict[str, ProbeBrief] = {}
    with _probe_model(ctx, remote=ctx.config.executor.kind != "local") as probe_model:  # validation runs there
        for domain, gens in by_domain.items():
            records += _validate_domain(ctx, domain, gens, probe_model)
            probes |= probe_briefs(ctx.stage_dir("validate") / domain, domain)
    for r in records:  # the proposer's own check failed on a probe: the gate caught it before this stage
        flags = [c for c in r.failed_checks if is_probe_check(c)]
        if flags and f"{r.domain}/{r.id}" not in probes:
            probes[f"{r.domain}/{r.id}"] = ProbeBrief(probed=True, flags=flags)
    return ValidateOutput(round=ctx.n, stage="validate", records=records, probes=probes)


def probe_briefs(domain_dir: Path, domain: str) -> dict[str, ProbeBrief]:
    """The probes' result of each proposal in a domain's validation run (``validation/results.jsonl``), by
    ``<domain>/<proposal id>`` (the key of its ``AddRecord``: a candidate's dir is named by its proposal id).
    A line that does not parse (a torn last line) is skipped."""
    path = domain_dir / "validation" / "results.jsonl"
    out: dict[str, ProbeBrief] = {}
    if not path.is_file():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(ValueError):
            r = ValidationReport.model_validate_json(line)
            out[f"{domain}/{Path(r.task_path).name}"] = ProbeBrief.of(r)
    return out


def _validate_domain(
    ctx: RoundContext, domain: str, gens: list[GenerationResult], probe_model: Model | None
) -> list[ProposalRecord]:
    out = ctx.stage_dir("validate") / domain
    done = out / "records.json"
    if done.is_file():
        return _RECORDS.validate_json(done.read_bytes())
    resume = (out / "validation" / "results.jsonl").is_file()  # a killed stage: its finished checks stand
    if not resume:
        fresh_dir(out)
    config = _propose_config(ctx, len(gens), None, domain)

    def on_validated(report: Any) -> None:
        # The validator's verdict; recorded expectations still need a blind solver's reproduction after it.
        verdict = report.verdict.value if hasattr(report.verdict, "value") else str(report.verdict)
        if verdict == "valid" and is_recorded(Path(report.task_path)) and config.reproduce_attempts > 0:
            verdict = "checks passed, reproduction next"
        ctx.events.advance(ctx.n, "validate", f"{domain}/{Path(report.task_path).name}: {verdict}")
        checkpoint("item")

    def on_reproduced(gid: str, r: Reproduction) -> None:
        said = "reproduced" if r.reproduced else "not reproduced"
        how = reproduction_attempts(r)
        ctx.events.message(f"{domain}/{gid}: blind solver {said} ({how})")

    # The blind reproduction runs the round's solver: the model the environments are for.
    with ctx.solver_factory() as (factory, _name), ctx.executor() as executor:
        run = ProposeRun(
            out, ctx.backend, _NoModel(), ctx.domains[domain], config, solver_factory=factory,
            executor=executor, backend_name=ctx.config.backend, probe_model=probe_model,
        )  # fmt: skip
        records = run.validate(gens, on_validated, on_reproduced, resume=resume)
    write_atomic(done, _RECORDS.dump_json(records, indent=2).decode())
    return records
