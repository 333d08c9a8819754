"""A staged episode: the harness drives the order, the model writes one piece per call, real runs decide.

Stages (every model call a short fresh prompt and an ATIF step; every harness run a user step)::

    idea         constrained JSON: operator on the parent, one-sentence task, output path, comparison
                 (``combine`` is offered when the context has a second parent: the child then holds both
                 parents' input files, see ``combine``)
    data         lines added to the main input file, when the idea asks for them
    instruction  plain text
    solution     a bash block; the harness runs it in the draft's image (observe; a script with a known shell
                 pitfall, such as a .gz input read as text, is rewritten and run again, see ``fixes``) ...
    decide       ... and the model judges the output (ok | fix_solution | fix_data | fix_instruction)
    record       the solution runs twice in fresh containers; guards; the outputs become the tests' answers
    novelty      the parent's solution (both parents' for combine) must fail the child (cross-oracle);
                 not similar to a reference
    check        the validator (lint, build, oracle, nop, leakage) on the finished task dir
    submit       the task dir goes to the candidate dir

The one-shot recorded baseline (``oneshot.propose_oneshot_recorded``) asks for idea, data, instruction and solution in
one JSON reply and then runs the same record and novelty steps: no observe, no fix.

Episode dir: ``trajectory.json``, ``staged.json`` (the decisions and what the harness saw), ``work/``
(drafts), ``check/`` (the validator's trials), ``generation.json``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autoenvscaling import __version__
from autoenvscaling.agent.trajectory import AgentInfo, TrajectoryRecorder
from autoenvscaling.llm.base import Model
from autoenvscaling.roles.proposer import prompts
from autoenvscaling.roles.proposer.novelty import DUPLICATE_CHECK
from autoenvscaling.roles.proposer.records import GenerationResult, Mode
from autoenvscaling.roles.proposer.staged import record as rec
from autoenvscaling.roles.proposer.staged.calls import StageCaller, fenced_or_plain, parse_json, prose_of
from autoenvscaling.roles.proposer.staged.combine import Combination, plan_combination
from autoenvscaling.roles.proposer.staged.config import StagedConfig
from autoenvscaling.roles.proposer.staged.fixes import shell_fix
from autoenvscaling.roles.proposer.staged.giveaway import (
    commands_named,
    solution_in_instruction,
    without_commands,
    without_cut_tail,
)
from autoenvscaling.roles.proposer.staged.parents import Parent, about_second, head, made_already
from autoenvscaling.roles.proposer.staged.references import unnamed_references
from autoenvscaling.roles.proposer.staged.render import write_draft
from autoenvscaling.roles.proposer.staged.spec import (
    COMBINE,
    COMPARE_HELP,
    DECISION_SCHEMA,
    Compare,
    Decision,
    DraftFiles,
    Idea,
    idea_schema,
    json_format,
    offered_operators,
    safe_output_path,
)
from autoenvscaling.roles.proposer.staged.state import StagedContext, StagedLog
from autoenvscaling.roles.proposer.staged.text import (
    clip_data,
    data_lines,
    ensure_output_named,
    looks_like_prose,
    new_lines,
)
from autoenvscaling.sandbox.base import BuildError, SandboxBackend
from autoenvscaling.tasks.names import slug

STAGED_AGENT = "autoenv-proposer-staged"
IDEA_UNPARSEABLE = "idea-unparseable"
ANSWER_IN_INSTRUCTION = "answer-in-instruction"
SOLUTION_IN_INSTRUCTION = "solution-in-instruction"
INPUT_IN_INSTRUCTION = "input-in-instruction"
INSTRUCTION_CONTRADICTS_OUTPUT = "instruction-contradicts-output"
RULE_NOT_STATED = "rule-not-stated"
NO_SOLUTION = "no-working-solution"
NOT_NEW = DUPLICATE_CHECK
DEFAULT_OUTPUT = "/app/result.txt"


class Episode:
    """State shared by the stages of one episode."""

    def __init__(
        self,
        model: Model,
        backend: SandboxBackend,
        ctx: StagedContext,
        config: StagedConfig,
        episode_dir: Path,
        task_id: str,
        mode: Mode,
    ) -> None:
        self.ctx = ctx
        self.config = config
        self.episode_dir = episode_dir
        self.task_id = task_id
        self.runner = rec.DraftRunner(backend, run_id=ctx.run_id, timeout_sec=config.run_timeout_sec)
        self.backend = backend
        info = AgentInfo(name=STAGED_AGENT, version=__version__, model_name=model.name, extra={"mode": mode})
        self.recorder = TrajectoryRecorder(episode_dir / "trajectory.json", agent=info)
        system = prompts.render("staged/system.j2", domain=ctx.domain.name, description=ctx.domain.description)
        self.caller = StageCaller(
            model,
            self.recorder,
            system,
            max_calls=config.max_calls,
            max_wall_sec=config.max_wall_sec,
            sampling=config.sampling,
        )
        self.log = StagedLog(parent=ctx.parent.name)
        self.files = DraftFiles()
        self.output = DEFAULT_OUTPUT
        self.compare: Compare = "exact"
        # combine: what the child would take of the second parent; ``combined`` once the idea chose it
        self.plan: Combination | None = plan_combination(ctx.parent, ctx.second) if ctx.second else None
        self.combined: Combination | None = None
        self.operators = offered_operators(self.plan is not None)
        second = self.plan.second if self.plan else None
        self.parent_block = prompts.render("staged/parent.j2", parent=ctx.parent, second=second, combining=False)
        self.draft_no = 0
        self.last_draft: Path | None = None
        self.last_run: rec.SolutionRun | None = None

    # -- helpers ------------------------------------------------------------------------------------------
    def bases(self) -> list[Parent]:
        """The parents whose input files the child holds: the parent, and the second one of a combine."""
        return [self.ctx.parent] + ([self.combined.second] if self.combined else [])

    def parent_solutions(self) -> list[tuple[str, str]]:
        """(name, solve.sh) of each parent the child must not be solved by (cross-oracle)."""
        return [(p.name, p.solve_sh) for p in self.bases()]

    @property
    def main_input(self) -> str | None:
        """The input file new data lines go to: the parent's main one, else the second parent's."""
        return next((p.main_input for p in self.bases() if p.main_input is not None), None)

    @property
    def dockerfile(self) -> str:
        return self.combined.files["Dockerfile"] if self.combined else self.ctx.parent.dockerfile

    @property
    def inputs(self) -> dict[str, str]:
        """Container path -> full text of every input file, as the child has them."""
        return {c: self.files.data.get(p.sources.get(c, ""), t) for p in self.bases() for c, t in p.data.items()}

    def input_heads(self) -> dict[str, str]:
        heads = {c: h for p in self.bases() for c, h in p.inputs.items()}
        base = {c: t for p in self.bases() for c, t in p.data.items()}
        for path, text in self.inputs.items():
            if path in heads and text != base.get(path):
                heads[path] = head(text)
        return heads

    def added_lines(self) -> list[str]:
        """The lines the model added to the main input so far (none before ``ask_data``)."""
        main = self.main_input
        parent = next((p for p in self.bases() if main in p.data), None)
        if main is None or parent is None:
            return []
        now = self.files.data.get(parent.sources[main])
        base = parent.data[main].rstrip("\n")
        if now is None or not now.startswith(base):
            return []
        return [ln for ln in now[len(base) :].splitlines() if ln.strip()]

    def base_input(self) -> str:
        """The main input file as its parent holds it ("" when there is none)."""
        main = self.main_input
        return next((p.data[main] for p in self.bases() if main in p.data), "")

    def extend_input(self, lines: list[str]) -> None:
        """Append ``lines`` to the main input file, in place of the lines appended before (a small model's "new
        file" is often one line long); no lines leave the file as its parent holds it."""
        main = self.main_input
        if main is None:
            return
        if not lines:
            self.files.data = {}
            return
        parent = next(p for p in self.bases() if main in p.data)
        base = parent.data[main].rstrip("\n")
        self.files.data = {parent.sources[main]: base + "\n" + "\n".join(lines)}

    def choose(self, idea: Idea) -> None:
        """Take ``idea``: its output and comparison, and for ``combine`` the second parent's files."""
        if idea.operator == COMBINE and self.plan is None:
            idea = idea.model_copy(update={"operator": "new_question"})
            self.caller.note("idea", "combine needs a second parent and there is none: taken as new_question")
        second = self.ctx.second
        if idea.operator != COMBINE and second is not None and about_second(idea.change, self.ctx.parent, second):
            self.caller.note("idea", f"the idea is about the second task ({second.name}): it is the parent now")
            self.ctx = self.ctx.model_copy(update={"parent": second, "second": self.ctx.parent})
            self.log.parent = second.name
            self.plan = None  # combine was not chosen
        self.log.idea = idea
        self.output = safe_output_path(idea.output_file) or DEFAULT_OUTPUT
        self.compare = idea.compare
        self.log.output = self.output
        self.combined = self.plan if idea.operator == COMBINE else None
        if self.combined is not None:
            self.files.added = dict(self.combined.files)
            self.log.second_parent, self.log.renamed = self.combined.second.name, dict(self.combined.renamed)
        taken = self.combined.second if self.combined else None
        self.parent_block = prompts.render("staged/parent.j2", parent=self.ctx.parent, second=taken, combining=True)

    def write(self, dest: Path, **kw: Any) -> Path:
        idea = self.log.idea
        return write_draft(
            dest,
            parent=self.ctx.parent.path,
            files=self.files,
            name=slug(idea.change if idea else self.task_id, lower=True, keep="", max_len=40),
            description=(idea.change if idea else "")[:200],
            category=self.ctx.domain.name,
            outputs=[self.output],
            lineage={
                "parent": self.ctx.parent.name,
                **({"second_parent": self.combined.second.name} if self.combined else {}),
                "operator": idea.operator if idea else "",
            },
            **kw,
        )

    def draft(self) -> Path:
        self.draft_no += 1
        self.last_draft = self.write(self.episode_dir / "work" / f"draft-{self.draft_no:02d}" / self.task_id)
        return self.last_draft

    # -- model stages ---------------------------------------------------------------------------------------
    def ask_idea(self) -> bool:
        """The idea, with one retry for a reply that does not parse (a constrained reply rarely fails, a cut-off one
        can), and fresh samples of the same prompt for an idea that asks nothing new (``_asks_nothing_new``),
        ``idea_resamples`` at most; the last answer stands whatever it asks.

        The prompt does not list what was made: shown the list, the 1.5B model copies it (the idea prompt of
        yield series v21's staged item 4, sampled 12 times at the stage's temperature: 9 of 12 asked a listed
        sentence again, 4 distinct ideas; without the list 1 of 12, 10 distinct)."""
        findings, failures, resamples, last = self.ctx.findings, 0, 0, None
        while True:
            reply = self.caller.ask(
                "idea",
                "idea.j2",
                max_tokens=self.config.sampling.idea_max_tokens,
                schema=json_format("idea", idea_schema(len(findings), list(self.operators))),
                parent_block=self.parent_block,
                findings=findings,
                operators=self.operators,
                compares=COMPARE_HELP,
                parent_has_inputs=bool(self.ctx.parent.data),
                can_combine="combine" in self.operators,
            )
            idea = parse_json(reply, Idea)
            if not isinstance(idea, Idea):
                failures += 1
                if failures < 2:
                    continue
                if last is None:
                    return False
                idea = last
            elif resamples < self.config.idea_resamples and (why := self._asks_nothing_new(idea)):
                resamples, last = resamples + 1, idea
                self.caller.note("idea", f"{why} (sampled again)")
                continue
            self.choose(idea)
            return True

    def _asks_nothing_new(self, idea: Idea) -> str | None:
        """Why ``idea`` asks nothing new, or None: it asks what the parent's children already asked
        (``made_already``), or its change is the prompt's own description of an operator. In the 66937ae demo
        series two first proposals' change was "select different lines or records than the parent does", the
        filter operator's line of the prompt; one became that task's instruction word for word, and neither was
        reproduced by a blind solver."""
        if twin := made_already(idea.change, self.ctx.made):
            return f"already made from this parent: {twin}"
        if told := made_already(idea.change, list(self.operators.values())):
            return f"the change repeats the prompt's description of an operator: {told}"
        return None

    def wants_data(self) -> bool:
        idea = self.log.idea
        return idea is not None and self.main_input is not None and (idea.new_data or idea.operator == "edge_case")

    def ask_data(self, problem: str = "") -> None:
        """New lines for the main input (they replace the ones asked before); ``problem``: what the solution
        made of the earlier ones (an empty output: none of them is a case of the new task)."""
        name = self.main_input
        assert name is not None and self.log.idea is not None
        lo, hi = self.config.data_lines
        reply = self.caller.ask(
            "data",
            "data.j2",
            max_tokens=self.config.sampling.data_max_tokens,
            parent_block=self.parent_block,
            idea=self.log.idea,
            file_name=name,
            min_lines=lo,
            max_lines=hi,
            problem=problem,
            previous=self.added_lines(),
        )
        base = self.base_input()
        lines, commands = data_lines(clip_data(fenced_or_plain(reply)), base)
        if commands:
            self.caller.note("data", f"{commands} shell commands that append a line read as that line")
        kept = new_lines(lines, base, self.log.idea.change)
        if len(kept) < len(lines):
            left_out = len(lines) - len(kept)
            self.caller.note("data", f"{left_out} of the {len(lines)} lines left out: lines of {name}, or comments")
        self.extend_input(kept)

    def ask_instruction(self) -> None:
        """Up to two samples; a reply that is not prose falls back to the idea's sentence plus the paths."""
        assert self.log.idea is not None
        inputs = list(self.input_heads())
        self.sample_instruction(
            "instruction.j2", parent_block=self.parent_block, idea=self.log.idea, inputs=inputs or ["(see the parent)"]
        )

    def sample_instruction(self, template: str, **variables: Any) -> None:
        """Up to two samples; a reply that is not prose falls back to the idea's sentence plus the paths.

        A reply cut at its token cap loses its unfinished end. One that names the script's programs (how, not
        what: ``commands_named``) is asked again, told so; if the second names them too, the first reply with
        those sentences cut that is still prose stands (``without_commands``)."""
        assert self.log.idea is not None
        fallback, self.log.from_idea = None, False
        for _ in range(2):
            reply = self.caller.ask(
                "instruction", template, max_tokens=self.config.sampling.instruction_max_tokens, **variables
            )
            text = prose_of(reply).strip()
            if self.caller.cut:
                text = without_cut_tail(text)
            if not looks_like_prose(text) or solution_in_instruction(text, self.files.solve_sh):
                continue
            if named := commands_named(text, self.files.solve_sh):
                fallback = fallback or self._without_how(text)
                self.caller.note("instruction", f"the instruction says how ({', '.join(named)}), not what")
                variables["problem"] = (
                    f"{variables.get('problem') or ''} Your previous instruction said how to make the file "
                    f"({', '.join(named)}): say only what {self.output} holds (no commands, no steps)."
                ).strip()
                continue
            self.files.instruction = ensure_output_named(text, self.output)
            return
        if fallback is not None:
            self.log.how_cut = True
            self.caller.note("instruction", "the sentences that say how were cut from the instruction")
            self.files.instruction = ensure_output_named(fallback, self.output)
            return
        inputs = list(self.input_heads())
        source = f"The input is {', '.join(inputs)}. " if inputs else ""
        self.files.instruction = f"{self.log.idea.change}\n{source}Write the result to {self.output}."
        self.log.from_idea = True
        self.caller.note("instruction", "the instruction is the idea's sentence (no usable reply)")

    def _without_how(self, text: str) -> str | None:
        """``text`` without the sentences that say how (``without_commands``), if that cut leaves out nothing of
        the script's rule that ``text`` named: in yield series v20 (A1 #6) a cut took the only sentence with the
        rule's threshold and left "1. Open the file `/app/data/access.log` in a text editor."."""
        cut = without_commands(text, self.files.solve_sh)
        if cut is None:
            return None
        before = set(unnamed_references(text, self.files.solve_sh, self.output))
        return cut if set(unnamed_references(cut, self.files.solve_sh, self.output)) <= before else None

    def ask_solution(self, previous: str = "", problem: str = "") -> None:
        reply = self.caller.ask(
            "solution",
            "solution.j2",
            max_tokens=self.config.sampling.solution_max_tokens,
            instruction=self.files.instruction,
            inputs=self.input_heads(),
            dockerfile=self.dockerfile,
            parent_solve_sh=self.ctx.parent.solve_sh,
            previous=previous,
            problem=problem,
            output_file=self.output,
        )
        self.files.solve_sh = fenced_or_plain(reply)

    def ask_reader(self) -> str:
        """A script written from the instruction and the inputs' first lines alone, as a blind solver sees them."""
        reply = self.caller.ask(
            "reader",
            "reader.j2",
            max_tokens=self.config.sampling.solution_max_tokens,
            instruction=self.files.instruction,
            inputs=self.input_heads(),
            dockerfile=self.dockerfile,
            output_file=self.output,
        )
        return fenced_or_plain(reply)

    def ask_decision(self, observation: str) -> Decision:
        reply = self.caller.ask(
            "decide",
            "decide.j2",
            max_tokens=self.config.sampling.decision_max_tokens,
            schema=json_format("decision", DECISION_SCHEMA),
            instruction=self.files.instruction,
            solve_sh=self.files.solve_sh,
            observation=observation,
        )
        decision = parse_json(reply, Decision)
        return decision if isinstance(decision, Decision) else Decision(decision="ok", reason="(unparseable: ok)")

    # -- harness stages --------------------------------------------------------------------------------------
    def observe(self) -> tuple[str, tuple[str, str] | None]:
        draft = self.draft()
        try:
            run = self.runner.run(draft, self.files.solve_sh, [self.output])
        except BuildError as e:
            text = f"the draft's image did not build: {e}"
            self.caller.note("observe", text)
            self.log.observations.append(text)
            return text, (rec.DRAFT_BUILD, text)
        self.last_run = run
        text = rec.describe_run(run)
        self.caller.note("observe", text)
        self.log.observations.append(text)
        problem = rec.mechanical_problem(run, self.inputs, self.files.solve_sh)
        fixed = self.fixed(run, problem) if self.config.shell_fixes else None
        return fixed or (text, problem)

    def fixed(self, run: rec.SolutionRun, problem: tuple[str, str] | None) -> tuple[str, None] | None:
        """When a known shell pitfall explains the run's failure, or the script reads a .gz input as text
        (``fixes``), the rewritten script runs in the same image; it replaces the model's when it passes every
        guard. Returns its observation, or None."""
        fix = shell_fix(self.files.solve_sh, problem, run, list(self.inputs))
        if fix is None or self.last_draft is None:
            return None
        again = self.runner.run(self.last_draft, fix.script, [self.output])
        after = rec.mechanical_problem(again, self.inputs, fix.script)
        if after is None and "binary file matches" in again.stderr_tail:
            after = (rec.OUTPUT_BINARY, "grep still skipped a binary file")
        if after is not None:
            self.log.fixes.append(f"{fix.name}: not kept ({after[0]})")
            self.caller.note("fix", f"the harness tried a rewrite of solve.sh ({fix.detail}): {after[0]}; not kept")
            return None
        self.files.solve_sh, self.last_run = fix.script, again
        text = rec.describe_run(again)
        self.log.fixes.append(f"{fix.name}: kept")
        self.log.observations.append(text)
        self.caller.note("fix", f"the harness rewrote solve.sh ({fix.detail}) and ran it again:\n{text}")
        return text, None

    def retry(self, ask: Callable[..., None], attempt: int, problem: str) -> None:
        """Alternate a repair (error shown) with a fresh sample: small models often repeat a broken script. A
        reply that is the failed script again is replaced by one fresh sample (in yield series v13-v18, 13 of the
        staged arm's 43 solution replies after the first were the script before them, unchanged: a wasted call
        and a run whose failure was already known)."""
        failed = self.files.solve_sh
        if attempt % 2 == 0:
            ask(failed, problem)
        else:
            ask()
        if self.files.solve_sh.strip() == failed.strip():
            self.caller.note("solution", "the reply is the failed script again: a fresh sample instead")
            ask()

    def ask_solution_first(self, previous: str = "", problem: str = "") -> None:
        assert self.log.idea is not None
        reply = self.caller.ask(
            "solution",
            "solution_first.j2",
            max_tokens=self.config.sampling.solution_max_tokens,
            parent_block=self.parent_block,
            idea=self.log.idea,
            inputs=self.input_heads(),
            previous=previous,
            problem=problem,
            output_file=self.output,
        )
        self.files.solve_sh = fenced_or_plain(reply)

    def ask_describe(self, problem: str = "") -> None:
        """The instruction, written from the script and the output it really produced."""
        assert self.log.idea is not None and self.last_run is not None
        text = self.last_run.outputs.get(self.output) or ""
        lines = text.splitlines()
        head = "\n".join(ln[:160] for ln in lines[:8]) + (
            f"\n... ({len(lines)} lines in all)" if len(lines) > 8 else ""
        )
        self.sample_instruction(
            "describe.j2",
            idea=self.log.idea,
            inputs=self.input_heads(),
            solve_sh=self.files.solve_sh,
            output_file=self.output,
            output_head=head,
            problem=problem,
        )

    def close(self, result: GenerationResult, started: float) -> GenerationResult:
        result.turns = self.caller.calls
        result.usage = self.caller.usage
        result.tries_used = self.log.solution_attempts
        result.checks_used = int(self.log.check_passed is not None)
        result.wall_sec = time.perf_counter() - started
        (self.episode_dir / "staged.json").write_text(self.log.model_dump_json(indent=2), encoding="utf-8")
        self.recorder.finish(
            exit_reason=result.exit_reason,
            failed_checks=result.failed_checks,
            parent=self.ctx.parent.name,
            second_parent=self.log.second_parent,
            wall_sec=round(result.wall_sec, 3),
        )
        (self.episode_dir / "generation.json").write_text(result.model_dump_json(indent=2), encoding="utf-8")
        return result
