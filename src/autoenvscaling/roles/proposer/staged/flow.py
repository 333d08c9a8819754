"""The order of a staged episode's stages: the two solve loops, the instruction's precision repair, and the
steps every staged arm ends with (record, novelty, check, submit). ``episode.Episode`` holds the state and
the single stages; this module decides which comes next."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

from autoenvscaling.errors import AutoEnvError
from autoenvscaling.llm.base import Model
from autoenvscaling.roles.proposer.novelty import check_novelty
from autoenvscaling.roles.proposer.records import GenerationResult, Mode
from autoenvscaling.roles.proposer.staged import record as rec
from autoenvscaling.roles.proposer.staged.calls import BudgetSpent
from autoenvscaling.roles.proposer.staged.claims import contradiction, with_direction
from autoenvscaling.roles.proposer.staged.config import StagedConfig
from autoenvscaling.roles.proposer.staged.episode import (
    ANSWER_IN_INSTRUCTION,
    IDEA_UNPARSEABLE,
    INPUT_IN_INSTRUCTION,
    INSTRUCTION_CONTRADICTS_OUTPUT,
    NO_SOLUTION,
    NOT_NEW,
    RULE_NOT_STATED,
    SOLUTION_IN_INSTRUCTION,
    Episode,
)
from autoenvscaling.roles.proposer.staged.giveaway import (
    answer_in_instruction,
    commands_named,
    quoted_output_lines,
    restated_field,
    solution_in_instruction,
    with_hints,
    without_commands,
    without_quoted_output,
)
from autoenvscaling.roles.proposer.staged.readback import ReadBack, read_back, reader_problem
from autoenvscaling.roles.proposer.staged.references import unnamed_references, unstated_rule, with_references
from autoenvscaling.roles.proposer.staged.repairs import explained, redo_data
from autoenvscaling.roles.proposer.staged.spec import DraftFiles, Expectation, Recording
from autoenvscaling.roles.proposer.staged.state import StagedContext
from autoenvscaling.roles.proposer.staged.text import (
    phantom_paths,
    unread_inputs,
    with_format_hint,
    with_input_hint,
    with_order_hint,
    with_unread_note,
)
from autoenvscaling.sandbox.base import EngineUnavailableError, SandboxBackend
from autoenvscaling.validate.validator import TaskValidator


def solve_loop(ep: Episode) -> bool:
    """Instruction first: solutions until one runs cleanly and the model calls its output ok.

    A small model's self-critique flip-flops: when the repairs run out without an ``ok``, the first clean
    solution is kept (its reading of the instruction is as good as any later one, and the blind reproduction
    judges it anyway).
    """
    ep.ask_solution()
    first_clean: DraftFiles | None = None
    attempts, data_redone = 1, False
    while True:
        ep.log.solution_attempts = attempts
        observation, problem = ep.observe()
        if problem is None:
            if first_clean is None:
                first_clean = ep.files.model_copy(deep=True)
            decision = ep.ask_decision(observation)
            ep.log.decisions.append(f"{decision.decision}: {decision.reason}"[:300])
            if decision.decision == "ok":
                return True
            if ep.log.repairs >= ep.config.max_repairs or attempts >= ep.config.solution_samples:
                ep.files = first_clean
                return True
            ep.log.repairs += 1
            if decision.decision == "fix_data" and ep.wants_data():
                ep.ask_data()
            elif decision.decision == "fix_instruction":
                ep.ask_instruction()
            else:
                attempts += 1
                ep.ask_solution(ep.files.solve_sh, decision.reason or "the output is not what was asked")
            continue
        ep.log.guard, ep.log.guard_detail = problem
        if redo_data(ep, problem, data_redone):
            data_redone = True
            continue
        if attempts >= ep.config.solution_samples:
            if first_clean is not None:
                ep.files = first_clean
                return True
            return False
        attempts += 1
        ep.retry(ep.ask_solution, attempts, explained(ep, problem))


def solution_first_loop(ep: Episode) -> bool:
    """Code first, words after: a script that runs cleanly, then the instruction that describes what it wrote
    (a coder model explains code it sees more reliably than it writes code to match vague words)."""
    ep.ask_solution_first()
    attempts, data_redone = 1, False
    while True:
        ep.log.solution_attempts = attempts
        observation, problem = ep.observe()
        if problem is None:
            break
        ep.log.guard, ep.log.guard_detail = problem
        if redo_data(ep, problem, data_redone):
            data_redone = True
            continue
        if attempts >= ep.config.solution_samples:
            return False
        attempts += 1
        ep.retry(ep.ask_solution_first, attempts, explained(ep, problem))
    ep.log.guard, ep.log.guard_detail = None, ""
    ep.ask_describe()
    decision = ep.ask_decision(observation)
    ep.log.decisions.append(f"{decision.decision}: {decision.reason}"[:300])
    if decision.decision == "fix_instruction" and ep.config.max_repairs > 0:
        ep.log.repairs += 1
        ep.ask_describe()
    elif ep.log.from_idea and decision.decision != "ok" and ep.config.max_repairs > 0:
        return _solve_the_sentence(ep)
    return True


def _solve_the_sentence(ep: Episode) -> bool:
    """No description of the script was usable, so the instruction is the idea's sentence, and the model says the
    script does not do it: a script for the sentence, as in the instruction-first order (``solve_loop``). In a
    recorded demo run the idea asked for "lines with status 400 or 500", the script counted them per status,
    and the instruction, that sentence, said nothing of counts: no blind reader or solver made the output. When no
    script for the sentence runs cleanly, the first script and the sentence stand, as before."""
    ep.log.repairs += 1
    ep.caller.note("decide", "the instruction is the idea's sentence, which the script does not do: a script for it")
    kept, run, attempts = ep.files.model_copy(deep=True), ep.last_run, ep.log.solution_attempts
    if solve_loop(ep):
        return True
    ep.files, ep.last_run, ep.log.solution_attempts = kept, run, attempts
    ep.log.guard, ep.log.guard_detail = None, ""
    return True


def _imprecision(ep: Episode) -> tuple[list[str], list[str]]:
    """What the instruction leaves out of the solution's rule, and the files it names that the rule never reads:
    inputs, and paths that do not exist (``phantom_paths``)."""
    return (
        unnamed_references(ep.files.instruction, ep.files.solve_sh, ep.output),
        unread_inputs(ep.files.instruction, ep.files.solve_sh, ep.inputs)
        + phantom_paths(ep.files.instruction, ep.inputs, ep.output, ep.files.solve_sh, ep.dockerfile),
    )


def _contradiction(ep: Episode) -> str | None:
    """What the instruction states that the last run's output breaks (``claims.contradiction``), or None."""
    output = ep.last_run.outputs.get(ep.output) if ep.last_run else None
    return contradiction(ep.files.instruction, output or "", ep.inputs, ep.compare)


def _copied(ep: Episode) -> list[str]:
    """The output lines the instruction copies when they give the answer away (``answer_in_instruction``)."""
    outputs = {k: v for k, v in (ep.last_run.outputs if ep.last_run else {}).items() if v is not None}
    if answer_in_instruction(ep.files.instruction, outputs) is None:
        return []
    return [ln for lines in quoted_output_lines(ep.files.instruction, outputs).values() for ln in lines]


def precision_repair(ep: Episode) -> None:
    """When the instruction leaves out a path, a word or a threshold the solution relies on, names an input
    the solution never reads, states a comparison the output breaks, copies lines of the output that give the
    answer away or restates the input line by line, the model rewrites it once, told what is wrong (``finish``
    adds a sentence for whatever is still left out after that, cuts copied lines it can, and rejects a
    contradiction, a restated input or a copy it cannot cut)."""
    missing, unread = _imprecision(ep)
    ep.log.unnamed, ep.log.unread = missing, unread
    contradiction, copied, restated = _contradiction(ep), _copied(ep), restated_field(ep.files.instruction, ep.inputs)
    if not (missing or unread or contradiction or copied or restated) or not ep.config.precision_repair:
        return
    if ep.config.order != "solution_first" or ep.last_run is None or ep.caller.calls >= ep.caller.max_calls:
        return
    problems = []
    if copied:
        problems.append(
            f"Your previous instruction copies lines of {ep.output} (`{copied[0]}`): describe the rule, do not quote "
            "the output."
        )
        ep.caller.note("precision", f"the instruction copies {len(copied)} lines of the output")
    if restated:
        problems.append(
            "Your previous instruction lists the input's values line by line: describe the rule and the line format, "
            "the solver reads the input itself."
        )
        ep.caller.note("precision", restated)
    if contradiction:
        problems.append(f"Your previous instruction is wrong: {contradiction}. Say what the script does.")
        ep.caller.note("precision", contradiction)
    if missing:
        problems.append("Your previous instruction did not mention " + ", ".join(missing) + ".")
        ep.caller.note("precision", "the instruction does not mention: " + ", ".join(missing))
    if unread:
        absent = [p for p in unread if p not in ep.inputs]
        problems.append(
            "It names "
            + ", ".join(unread)
            + ", which the script never reads"
            + (f" ({', '.join(absent)}: no such file)" if absent else "")
            + ": name only the files the script reads."
        )
        ep.caller.note("precision", "the instruction names inputs the script never reads: " + ", ".join(unread))
    before = ep.files.instruction
    ep.ask_describe(problem=" ".join(problems))
    after_missing, after_unread = _imprecision(ep)
    lost = len(after_missing) + len(after_unread) - len(missing) - len(unread)
    worse = (_contradiction(ep) is not None) + bool(_copied(ep)) + bool(restated_field(ep.files.instruction, ep.inputs))
    if lost + worse > (contradiction is not None) + bool(copied) + bool(restated):
        ep.files.instruction = before  # the rewrite lost more than it gained
    ep.log.repairs += 1


def _recorded(ep: Episode, stage: str = "record") -> tuple[Recording, list[Expectation]]:
    """Record the current solution's outputs and apply the instruction guards; a failed guard is logged (as a
    ``stage`` step) and comes back as a recording that is not ``ok``."""
    draft = ep.draft()
    recording, expectations = rec.record_expectations(
        ep.runner, draft, ep.files.solve_sh, {ep.output: ep.compare}, ep.inputs
    )
    failure: tuple[str, str] | None = None
    leak = answer_in_instruction(ep.files.instruction, recording.outputs) if recording.ok else None
    if leak and (cut := without_quoted_output(ep.files.instruction, recording.outputs)) is not None:
        ep.files.instruction, ep.log.quotes_cut = cut, True  # a cut instruction gives nothing away
        ep.caller.note(stage, f"{leak}: those lines were cut from it")
        leak = None
    named = commands_named(ep.files.instruction, ep.files.solve_sh) if recording.ok else []
    if named and (plain := without_commands(ep.files.instruction, ep.files.solve_sh)) is not None:
        ep.files.instruction, ep.log.how_cut = plain, True
        ep.caller.note(stage, f"the instruction names the script's commands ({', '.join(named)}): those were cut")
        named = []
    if not recording.ok:
        failure = (recording.check or "record", recording.detail)
    elif leak:
        failure = (ANSWER_IN_INSTRUCTION, leak)
    elif restated := restated_field(ep.files.instruction, ep.inputs):
        failure = (INPUT_IN_INSTRUCTION, restated)
    elif given := solution_in_instruction(ep.files.instruction, ep.files.solve_sh):
        failure = (SOLUTION_IN_INSTRUCTION, given)
    elif named:
        failure = (SOLUTION_IN_INSTRUCTION, f"the instruction names the script's commands ({', '.join(named)})")
    elif broken := contradiction(ep.files.instruction, recording.outputs.get(ep.output) or "", ep.inputs, ep.compare):
        failure = (INSTRUCTION_CONTRADICTS_OUTPUT, broken)
    elif unstated := unstated_rule(ep.files.instruction, ep.files.solve_sh, ep.output):
        failure = (RULE_NOT_STATED, "the instruction names none of the rule's values: " + ", ".join(unstated))
    if failure is None:
        return recording, expectations
    ep.log.guard, ep.log.guard_detail = failure
    ep.caller.note(stage, f"not recorded: {failure[0]}: {failure[1]}")
    return Recording(ok=False, check=failure[0], detail=failure[1]), []


def _completed(ep: Episode, recording: Recording) -> str:
    """The instruction with what ``format_hint`` adds mechanically (from the solution and its recorded output): a
    "filter out" the output settles made plain, references, notes and hints. A hint that would put a whole
    recorded output into the instruction is left out (``StagedLog.hints_left_out``): in a flywheel round on
    265fe3a the input hint's field note, "field 1 is `10.0.0.1`", was the one line a filter printed, which the
    check's ``hackable:instruction-answer`` then failed."""
    if not ep.config.format_hint:
        return ep.files.instruction
    missing, unread = _imprecision(ep)
    recorded = recording.outputs.get(ep.output)
    steps: list[tuple[str, Callable[[str], str]]] = [
        ("direction", lambda t: with_direction(t, recorded or "", ep.inputs)),
        ("references", lambda t: with_references(t, missing, ep.files.solve_sh)),
        ("unread", lambda t: with_unread_note(t, unread, ep.inputs, ep.files.solve_sh)),
        ("input", lambda t: with_input_hint(t, ep.inputs, ep.files.solve_sh, recorded or "")),
        ("order", lambda t: with_order_hint(t, ep.files.solve_sh, ep.output, ep.compare, recorded, ep.inputs)),
        ("format", lambda t: with_format_hint(t, ep.output, recording.outputs, ep.compare)),
    ]
    text, left_out = with_hints(ep.files.instruction, steps, recording.outputs)
    ep.log.hints_left_out += [name for name in left_out if name not in ep.log.hints_left_out]
    return text


def reread(
    ep: Episode, recording: Recording, expectations: list[Expectation], plain: str, readback: ReadBack
) -> tuple[Recording, list[Expectation]]:
    """No reader of the instruction made the recorded output: the model rewrites it once, shown what a reader made
    instead, the guards run on the rewrite, and one more reader (one to spare) reads it. A reader that makes the
    recorded output keeps the rewrite; otherwise the first instruction stands. Of 29 recorded staged candidates of
    yield series v20 and the demo series, a blind solver reproduced 13 of the 16 whose self-check reader made the
    recorded output, and 4 of the 11 where no reader did."""
    if ep.caller.calls + 2 > ep.caller.max_calls:
        ep.log.self_check.append("no calls left to rewrite the instruction")
        return recording, expectations
    kept, flags = ep.files.model_copy(deep=True), (ep.log.how_cut, ep.log.quotes_cut)
    ep.files.instruction = plain
    try:
        ep.ask_describe(problem=reader_problem(readback, ep.output))
        again, expected = _recorded(ep, "self-check")
        if not again.ok:
            ep.log.self_check.append(f"the rewrite was refused: {again.check}")
        else:
            ep.files.instruction = _completed(ep, again)
            if read_back(ep, again, 1, first=readback.asked + 1).reproduced:
                ep.log.self_check.append("the rewritten instruction stands: a reader made the recorded output")
                ep.caller.note("self-check", "the instruction was rewritten: its reader made the recorded output")
                return again, expected
    except BudgetSpent as e:
        ep.log.self_check.append(f"the rewrite stopped: {e.reason}")
    ep.files, (ep.log.how_cut, ep.log.quotes_cut) = kept, flags
    ep.log.guard, ep.log.guard_detail = None, ""
    ep.log.self_check.append("the first instruction stands")
    return recording, expectations


def _guessed(ep: Episode, script: str, plain: str) -> list[str]:
    """The values (and paths other than the inputs) of the readers' ``script`` that the instruction, without the
    harness's hints, does not name: the readers took them from the hints, not from the words. A demo run on
    fdf91cc adopted two readers' `grep 'root'` under an instruction that stated no rule ("the lines ... that
    satisfy the condition"): `root` was in the input hint's example line, and the values hint then named it."""
    return [ref for ref in unnamed_references(plain, script, ep.output) if ref not in ep.inputs]


def finish(ep: Episode, result: GenerationResult, candidate_dir: Path, *, check: bool, readers: int = 0) -> None:
    """Record, (self-check,) novelty, check, submit: the steps every staged arm (the one-shot baseline too) shares.

    ``readers`` (the staged arm's ``StagedConfig.self_check``; 0: no self-check): when no blind reader of the final
    instruction makes the recorded output and two readers agree on another, their script replaces the solution
    and is recorded in its turn (with every guard), so the instruction is one its readers followed; if that
    recording fails, or their script uses a value the instruction's own words do not name (``_guessed``), the
    first one stands. When the readers made neither (``StagedConfig.reread``), the
    instruction is rewritten once and read back again (``reread``).
    """
    ep.log.guard, ep.log.guard_detail = None, ""
    recording, expectations = _recorded(ep)
    if not recording.ok:
        result.failed_checks = [recording.check or "record"]
        return
    ep.log.recorded = True
    plain = ep.files.instruction
    ep.files.instruction = _completed(ep, recording)
    if readers > 0:
        readback = read_back(ep, recording, readers)
        if readback.missed and ep.config.reread:
            recording, expectations = reread(ep, recording, expectations, plain, readback)
        if (script := readback.agreed) is not None and (guessed := _guessed(ep, script, plain)):
            ep.log.self_check.append(
                f"the readers' script uses {', '.join(guessed)}, which the instruction does not name: "
                "the solution stands"
            )
        elif script is not None:
            kept = ep.files.model_copy(deep=True)
            ep.files.solve_sh, ep.files.instruction = script, plain
            again, expected = _recorded(ep, "self-check")
            if not again.ok:
                ep.files = kept
                ep.log.self_check.append(f"the reader's script was not recorded ({again.check}): the solution stands")
                ep.log.guard, ep.log.guard_detail = None, ""
            else:
                recording, expectations = again, expected
                ep.files.instruction = _completed(ep, recording)
                ep.log.self_check.append("the reader's script is the solution now")
                ep.caller.note("self-check", "the solution is now the reader's script; its outputs were recorded")
    final = ep.write(ep.episode_dir / "final" / ep.task_id, expectations=expectations, expected=recording.outputs)
    ep.caller.note("record", "recorded: " + ", ".join(f"{e.path} ({e.compare})" for e in expectations))
    if ep.config.cross_oracle:  # every parent's solution (both of a combine) must fail the child
        solved_by = next(
            (
                name
                for name, solve_sh in ep.parent_solutions()
                if rec.cross_oracle(ep.runner, final, solve_sh, expectations, recording.outputs)
            ),
            None,
        )
        ep.log.cross_oracle_passed = solved_by is None
        if solved_by is not None:
            ep.caller.note("novelty", f"the solution of the parent {solved_by} already passes this task: not new")
            result.failed_checks = [rec.CROSS_ORACLE]
            return
    novelty = check_novelty(final, ep.ctx.references, ep.ctx.novelty_threshold)
    if not novelty.is_new:
        ep.caller.note("novelty", f"too similar to {novelty.duplicate_of}")
        result.failed_checks = [NOT_NEW]
        return
    if check:
        with TaskValidator(
            ep.backend,
            ep.runner.builder,
            ep.ctx.validation.model_copy(update={"repeats": 1, "network": False}),
            ep.episode_dir / "check" / "trials",
            run_id=ep.ctx.run_id,
            model_probes=ep.ctx.model_probes,
        ) as validator:
            report = validator.validate(final)
        ep.log.check_passed = report.verdict.value == "valid"
        ep.log.check_failed = list(report.failed_checks) or ([report.error] if report.error else [])
        ep.caller.note("check", f"check: {report.verdict.value} {' '.join(report.failed_checks)}".strip())
        if report.verdict.value == "error":
            raise AutoEnvError(f"check could not run: {report.error}")
        if not ep.log.check_passed:
            result.failed_checks = list(report.failed_checks)
            return
    shutil.rmtree(candidate_dir, ignore_errors=True)
    shutil.copytree(final, candidate_dir)
    result.candidate_dir, result.chosen_draft = str(candidate_dir), "current"
    result.last_check_passed = ep.log.check_passed
    result.exit_reason = "submitted"


def drive_episode(
    body: Callable[[Episode, GenerationResult], None],
    mode: Mode,
    model: Model,
    backend: SandboxBackend,
    ctx: StagedContext,
    *,
    episode_dir: Path,
    task_id: str,
    config: StagedConfig,
    exit_reason: str,
) -> GenerationResult:
    """Set up an episode, run ``body``, and close it: a spent budget is an exit reason, an endpoint or engine
    failure an error (never a rejection)."""
    shutil.rmtree(episode_dir, ignore_errors=True)
    episode_dir.mkdir(parents=True)
    started = time.perf_counter()
    result = GenerationResult(id=task_id, mode=mode, episode_dir=str(episode_dir), exit_reason=exit_reason)
    ep = Episode(model, backend, ctx, config, episode_dir, task_id, mode)
    try:
        body(ep, result)
    except BudgetSpent as e:
        result.exit_reason, result.failed_checks = e.reason, [e.reason]
    except EngineUnavailableError:
        raise  # no engine, no episode: the run stops with the error and continues when rerun
    except AutoEnvError as e:
        result.exit_reason, result.error = "error", f"{type(e).__name__}: {e}"
    return ep.close(result, started)


def run_staged_episode(
    model: Model,
    backend: SandboxBackend,
    ctx: StagedContext,
    *,
    episode_dir: Path,
    candidate_dir: Path,
    task_id: str,
    config: StagedConfig | None = None,
) -> GenerationResult:
    """One staged episode; a task dir lands in ``candidate_dir`` only when every stage passed."""
    config = config or StagedConfig()

    def body(ep: Episode, result: GenerationResult) -> None:
        if not ep.ask_idea():
            result.failed_checks = [IDEA_UNPARSEABLE]
            return
        if ep.wants_data():
            ep.ask_data()
        if config.order == "solution_first":
            solved = solution_first_loop(ep)
        else:
            ep.ask_instruction()
            solved = solve_loop(ep)
        if not solved:
            result.failed_checks = [ep.log.guard or NO_SOLUTION]
            return
        precision_repair(ep)
        finish(ep, result, candidate_dir, check=config.check, readers=config.self_check)

    return drive_episode(
        body,
        "staged",
        model,
        backend,
        ctx,
        episode_dir=episode_dir,
        task_id=task_id,
        config=config,
        exit_reason="rejected",
    )
