"""The staged proposer on Docker with scripted models: every stage, the repairs, each guard's check id, the
cross-oracle, and the blind reproduction that accepts or rejects recorded expectations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoenvscaling.agent.config import AgentConfig
from autoenvscaling.agent.trajectory import read_trajectory
from autoenvscaling.llm.scripted import ScriptedModel
from autoenvscaling.roles.proposer.domain import domain_context
from autoenvscaling.roles.proposer.records import NOT_REPRODUCED, ProposalRecord
from autoenvscaling.roles.proposer.run import ProposeConfig, ProposeRun
from autoenvscaling.roles.proposer.staged import record as rec
from autoenvscaling.roles.proposer.staged.episode import INSTRUCTION_CONTRADICTS_OUTPUT
from autoenvscaling.roles.proposer.staged.fixes import shell_fix
from autoenvscaling.roles.proposer.staged.parents import load_parent, worked_example
from autoenvscaling.roles.proposer.staged.render import write_draft
from autoenvscaling.roles.proposer.staged.spec import DraftFiles
from autoenvscaling.roles.solver import SolverAgent
from autoenvscaling.sandbox.docker import DockerBackend

pytestmark = [pytest.mark.docker, pytest.mark.slow]

IDEA = {
    "operator": "filter",
    "change": "Count the requests that ended with status 404",
    "output_file": "/app/count404.txt",
    "compare": "exact",
    "new_data": False,
}
INSTRUCTION = "Count the requests with status 404 in /app/data/access.log and write the number to /app/count404.txt."
GOOD = "```bash\ngrep -c ' 404$' /app/data/access.log > /app/count404.txt\n```"
OK = json.dumps({"decision": "ok", "reason": "it is the count"})


def _solver(*replies: str) -> SolverAgent:
    return SolverAgent(ScriptedModel(list(replies)), AgentConfig(max_turns=4))


def _run(
    tmp: Path, backend: DockerBackend, replies: list[str], solver_replies: tuple[str, ...] = (), **kw: object
) -> tuple[ProposalRecord, ScriptedModel]:
    model = ScriptedModel(replies)
    # The scripts below answer the instruction-first order without the self-check, unless a test says otherwise.
    staged = {"order": "instruction_first", "self_check": 0, **kw.pop("staged", {})}  # type: ignore[dict-item]
    base = {"mode": "staged", "n": 1, "reproduce_attempts": 2, "proposer": {"staged": staged}}
    config = ProposeConfig.model_validate({**base, **kw})
    run = ProposeRun(
        tmp / "out", backend, model, domain_context("terminal"), config, solver_factory=lambda: _solver(*solver_replies)
    )
    (record,) = run.run()
    return record, model


def test_a_staged_episode_is_accepted_when_a_blind_solver_reproduces_it(tmp_path: Path, backend: DockerBackend) -> None:
    broken = "```bash\nawk '{print $4 == 404' /app/data/access.log > /app/count404.txt\n```"  # a syntax error
    reader = "```bash\nawk '$4 == 404' /app/data/access.log | wc -l > /app/count404.txt\n```"  # the same count
    replies = [json.dumps(IDEA), INSTRUCTION, broken, GOOD, OK, reader]
    solver = ("```bash\ngrep -c 404 /app/data/access.log > /app/count404.txt\n```", "Done.\nsubmit")
    record, model = _run(tmp_path, backend, replies, solver, staged={"self_check": 2})

    assert record.verdict == "valid", record
    # The one-shot blind attempt (the solver's first reply, a whole script) reproduced it: no loop attempt ran.
    assert record.validation.recorded and record.validation.reproduce_oneshots == [1.0]
    assert record.validation.reproduce_rewards == []
    assert record.generation.exit_reason == "submitted" and record.generation.turns == 6
    # The repair prompt showed the failure; the decision prompt showed the real output.
    repair, decide = model.calls[3][-1].content, model.calls[4][-1].content
    assert "It failed: solve.sh exited with" in repair and "awk" in repair
    assert "/app/count404.txt (first lines):\n2" in decide
    assert [s.max_tokens for s in model.samplings if s] == [160, 220, 300, 300, 80, 300]
    # The self-check's reader saw the final instruction and the input, never the solution.
    reading = model.calls[5][-1].content
    assert reading.startswith("INSTRUCTION:\nCount the requests") and "10.0.0.1 GET /index.html 200" in reading
    assert "grep" not in reading
    episode = Path(record.episode_dir)
    stages = [(s.extra or {}).get("stage") for s in read_trajectory(episode / "trajectory.json").steps]
    for stage in ("idea", "instruction", "solution", "observe", "decide", "record", "reader", "self-check", "check"):
        assert stage in stages
    log = json.loads((episode / "staged.json").read_text())
    assert (log["solution_attempts"], log["recorded"], log["cross_oracle_passed"]) == (2, True, True)
    assert log["self_check"] == ["reader 1: same output"]  # one agreeing reader ends the self-check
    cand = Path(record.candidate_dir or "")
    assert (cand / "tests" / "expected" / "1-count404.txt").read_text() == "2\n"
    assert "grep -c ' 404$'" in (cand / "solution" / "solve.sh").read_text()
    assert "/app/count404.txt" in (cand / "task.toml").read_text()  # declared as an artifact


def test_recorded_expectations_nobody_reproduces_are_rejected(tmp_path: Path, backend: DockerBackend) -> None:
    record, _ = _run(tmp_path, backend, [json.dumps(IDEA), INSTRUCTION, GOOD, OK], ("```bash\nls\n```", "submit"))
    assert record.verdict == "invalid" and record.failed_checks == [NOT_REPRODUCED]
    assert record.validation.verdict == "valid" and record.validation.reproduce_rewards == [0.0, 0.0]
    assert record.validation.reproduce_oneshots == [0.0, 0.0]  # the one-shot attempts came first, and failed too


def test_a_data_only_mutation_is_rejected_by_the_cross_oracle(tmp_path: Path, backend: DockerBackend) -> None:
    idea = {**IDEA, "operator": "edge_case", "output_file": "/app/errors.txt", "new_data": True}
    parent_solve = (
        "```bash\n" + (worked_example(domain_context("terminal")) / "solution" / "solve.sh").read_text() + "```"
    )  # type: ignore[operator]
    same = (
        "/app/data/access.log has one request per line. Write /app/errors.txt: one line per status code >= 400, "
        'formatted "<status> <count>", sorted by status ascending.'
    )
    replies = [json.dumps(idea), "```\n10.0.0.9 GET /x 403\n10.0.0.9 GET /y 404\n```", same, parent_solve, OK]
    record, _ = _run(tmp_path, backend, replies)
    assert record.verdict == "no-candidate" and record.failed_checks == [rec.CROSS_ORACLE]


@pytest.mark.parametrize(
    ("solve", "check"),
    [
        ("exit 3", rec.SOLUTION_FAILED),
        ("true", rec.OUTPUT_MISSING),
        (": > /app/out.txt", rec.OUTPUT_EMPTY),
        ("cp /app/data/access.log /app/out.txt", rec.OUTPUT_COPIES_INPUT),
        ("cp /etc/debian_version /app/out.txt", rec.OUTPUT_IN_IMAGE),
        ("date +%s%N > /app/out.txt", rec.OUTPUT_UNSTABLE),
        ("head -c 70000 /dev/zero | tr '\\0' x > /app/out.txt", rec.OUTPUT_TOO_LARGE),
        ("gzip -c /app/data/access.log > /tmp/a.gz && cat /tmp/a.gz > /app/out.txt", rec.OUTPUT_BINARY),
        ("cat /app/data/nope /app/data/access.log | sort > /app/out.txt", rec.SOLUTION_FAILED),  # exits 0
        (
            "grep 404 /app/data/access.log > /app/out.txt\ngrep 500 /app/data/access.log > /app/out.txt",
            rec.OUTPUT_OVERWRITTEN,
        ),
        ("wc -l < /app/data/access.log > /app/out.txt", None),
    ],
)
def test_each_guard_rejects_with_its_own_check_id(
    tmp_path: Path, backend: DockerBackend, solve: str, check: str | None
) -> None:
    parent = load_parent(worked_example(domain_context("terminal")))  # type: ignore[arg-type]
    assert parent is not None
    files = DraftFiles(instruction="Count the lines.", solve_sh=solve)
    draft = write_draft(
        tmp_path / "d",
        parent=parent.path,
        files=files,
        name="d",
        description="",
        category="t",
        outputs=["/app/out.txt"],
    )
    runner = rec.DraftRunner(backend, run_id="test-staged-guards", timeout_sec=30)
    recording, expectations = rec.record_expectations(runner, draft, solve, {"/app/out.txt": "exact"}, parent.data)
    assert recording.check == check, recording.detail
    assert bool(expectations) is (check is None)


def test_when_the_model_never_says_ok_the_first_clean_solution_is_kept(tmp_path: Path, backend: DockerBackend) -> None:
    other = "```bash\ngrep -c ' 200$' /app/data/access.log > /app/count404.txt\n```"
    fix = json.dumps({"decision": "fix_solution", "reason": "count differently"})
    replies = [json.dumps(IDEA), INSTRUCTION, GOOD, fix, other, fix]
    record, model = _run(tmp_path, backend, replies, reproduce_attempts=0)
    assert record.verdict == "valid" and len(model.calls) == 6
    cand = Path(record.candidate_dir or "")
    assert "' 404$'" in (cand / "solution" / "solve.sh").read_text()
    assert (cand / "tests" / "expected" / "1-count404.txt").read_text() == "2\n"
    log = json.loads((Path(record.episode_dir) / "staged.json").read_text())
    assert log["repairs"] == 1 and [d.split(":")[0] for d in log["decisions"]] == ["fix_solution", "fix_solution"]


def test_solution_first_writes_the_instruction_from_the_real_output(tmp_path: Path, backend: DockerBackend) -> None:
    replies = [json.dumps(IDEA), GOOD, INSTRUCTION, OK]
    solver = ("```bash\ngrep -c 404 /app/data/access.log > /app/count404.txt\n```", "submit")
    record, model = _run(tmp_path, backend, replies, solver, staged={"order": "solution_first"})
    assert record.verdict == "valid", record
    describe = model.calls[2][-1].content
    assert "It wrote /app/count404.txt, which starts like this:\n2" in describe and "grep -c" in describe
    assert (Path(record.candidate_dir or "") / "instruction.md").read_text().startswith("Count the requests")


def test_lines_that_give_the_solution_nothing_to_select_are_asked_for_again(
    tmp_path: Path, backend: DockerBackend
) -> None:
    # A recorded `make demo` run: lines added for "status greater than 500" all had status 500, and three
    # solutions in a row wrote an empty file. Now the lines are asked for again once, and the script is kept.
    idea = {**IDEA, "change": "Keep the requests with status greater than 500", "output_file": "/app/big.txt"}
    idea |= {"new_data": True}
    solve = "```bash\nawk '$4 > 500' /app/data/access.log > /app/big.txt\n```"
    told = "Write the lines of /app/data/access.log whose status is greater than 500 to /app/big.txt, in order."
    replies = [json.dumps(idea), "```\n10.0.0.9 GET /x 500\n```", solve, "```\n10.0.0.9 GET /x 503\n```", told, OK]
    solver = (solve, "submit")
    record, model = _run(tmp_path, backend, replies, solver, staged={"order": "solution_first"})

    assert record.verdict == "valid", record
    again = model.calls[3][-1].content
    assert "Your earlier lines were:\n10.0.0.9 GET /x 500\n" in again and "/app/big.txt is empty" in again
    log = json.loads((Path(record.episode_dir) / "staged.json").read_text())
    assert log["decisions"][0] == "fix_data: output-empty" and log["solution_attempts"] == 1
    data = (Path(record.candidate_dir or "") / "environment" / "data" / "access.log").read_text()
    assert data.rstrip().endswith("10.0.0.9 GET /x 503") and " 500\n10.0.0.9 GET /x 500" not in data


def test_a_grep_that_no_input_line_matches_is_told_so_and_the_lines_are_asked_for_again(
    tmp_path: Path, backend: DockerBackend
) -> None:
    # yield series v16 A1 #7: three scripts in a row grepped `error` in logs that hold no such word, and each
    # failed with exit code 1 and no message. Now the failure names the pattern and the lines are asked again.
    # (v16 A1 #10: the same with no new lines wanted; the lines are asked for all the same)
    idea = {**IDEA, "change": "Keep the requests whose path holds error", "output_file": "/app/errors.txt"}
    idea |= {"new_data": False}
    solve = "```bash\ngrep -i 'error' /app/data/access.log > /app/errors.txt\n```"
    told = "Write the lines of /app/data/access.log whose path holds `error` to /app/errors.txt, in order."
    replies = [json.dumps(idea), solve, "```\n10.0.0.9 GET /error 500\n```", told, OK]
    record, model = _run(tmp_path, backend, replies, (solve, "submit"), staged={"order": "solution_first"})

    assert record.verdict == "valid", record
    again = model.calls[2][-1].content
    assert "No input line holds `error`: the grep selects nothing and exits 1" in again
    log = json.loads((Path(record.episode_dir) / "staged.json").read_text())
    assert log["decisions"][0] == "fix_data: solution-failed" and log["solution_attempts"] == 1
    assert (Path(record.candidate_dir or "") / "tests" / "expected" / "1-errors.txt").read_text() == (
        "10.0.0.9 GET /error 500\n"
    )


LOGIN = {**IDEA, "change": "Keep the login requests with status less than 500", "output_file": "/app/result.txt"}
GREP_LOGIN = "```bash\ngrep login /app/data/access.log > /app/result.txt\n```"
SAYS_LESS = "Write the lines of /app/data/access.log with path /login and status less than 500 to /app/result.txt."
SAYS_LOGIN = "Write the lines of /app/data/access.log whose path is /login to /app/result.txt, in input order."


def test_a_script_that_does_not_do_the_idea_s_sentence_left_as_the_instruction_is_written_again(
    tmp_path: Path, backend: DockerBackend
) -> None:
    # A recorded demo run (62c9339): the idea asked for lines, the script counted them, no description of it was
    # usable, and the instruction was the idea's sentence; the model's "fix_solution" was not acted on.
    idea = {**LOGIN, "change": "Keep the login requests"}
    counts = "```bash\ngrep -c login /app/data/access.log > /app/result.txt\n```"
    code_only = "```bash\ngrep -c login /app/data/access.log\n```"  # no prose: not an instruction
    fix = json.dumps({"decision": "fix_solution", "reason": "the output is a count, not the lines"})
    replies = [json.dumps(idea), counts, code_only, code_only, fix, GREP_LOGIN, OK]
    record, model = _run(tmp_path, backend, replies, (GREP_LOGIN, "submit"), staged={"order": "solution_first"})
    assert record.verdict == "valid", record
    assert len(model.calls) == len(replies)
    log = json.loads((Path(record.episode_dir) / "staged.json").read_text())
    assert log["from_idea"] is True and [d.split(":")[0] for d in log["decisions"]] == ["fix_solution", "ok"]
    assert "Write solve.sh for the INSTRUCTION above" in model.calls[5][-1].content  # a script for the sentence
    cand = Path(record.candidate_dir or "")
    assert (cand / "instruction.md").read_text().startswith("Keep the login requests")
    assert "grep login" in (cand / "solution" / "solve.sh").read_text()
    assert "/login" in (cand / "tests" / "expected" / "1-result.txt").read_text()  # the lines, not a count


def test_an_instruction_that_the_output_contradicts_is_described_again(tmp_path: Path, backend: DockerBackend) -> None:
    # yield series v13 #0: the instruction said "status less than 500" of a filter that kept a 500 line
    replies = [json.dumps(LOGIN), GREP_LOGIN, SAYS_LESS, OK, SAYS_LOGIN]
    record, model = _run(tmp_path, backend, replies, (GREP_LOGIN, "submit"), staged={"order": "solution_first"})
    assert record.verdict == "valid", record
    again = model.calls[4][-1].content
    assert 'Your previous instruction is wrong: the instruction says "less than 500", but the output line' in again
    assert "`10.0.0.1 POST /login 500`" in again
    assert (Path(record.candidate_dir or "") / "instruction.md").read_text().startswith("Write the lines")


@pytest.mark.parametrize("second", ["plain", "recipe"])
def test_an_instruction_that_says_how_is_asked_again_or_cut(
    tmp_path: Path, backend: DockerBackend, second: str
) -> None:
    # yield series v19 A1 #1: "Use the `grep` command to search for lines containing ...", and the blind solver
    # followed the recipe
    recipe = f"{SAYS_LOGIN}\n\n### How\n- Use the `grep` command to find the lines holding login.\n"
    replies = [json.dumps(LOGIN), GREP_LOGIN, recipe, SAYS_LOGIN if second == "plain" else recipe, OK]
    record, model = _run(tmp_path, backend, replies, (GREP_LOGIN, "submit"), staged={"order": "solution_first"})
    assert record.verdict == "valid", record
    assert "Your previous instruction said how to make the file (grep)" in model.calls[3][-1].content
    instruction = (Path(record.candidate_dir or "") / "instruction.md").read_text()
    assert instruction.startswith(SAYS_LOGIN) and "grep" not in instruction and "### How" not in instruction
    assert json.loads((Path(record.episode_dir) / "staged.json").read_text())["how_cut"] is (second == "recipe")


def test_a_cut_that_would_lose_the_rule_leaves_the_ideas_sentence(tmp_path: Path, backend: DockerBackend) -> None:
    # v20 A1 #6: the cut took the only sentence with the rule and left "Open the file ... in a text editor."
    idea = {**LOGIN, "change": "Keep the login requests of /app/data/access.log"}
    recipe = "Write /app/result.txt from /app/data/access.log as the task says.\nUse `grep` to keep the login lines."
    grep = GREP_LOGIN.replace("grep login", "grep 'login'")  # the rule's word, quoted: a reference of the script
    replies = [json.dumps(idea), grep, recipe, recipe, OK]
    record, _ = _run(tmp_path, backend, replies, (grep, "submit"), staged={"order": "solution_first"})
    assert record.verdict == "valid", record
    instruction = (Path(record.candidate_dir or "") / "instruction.md").read_text()
    assert instruction.startswith("Keep the login requests of /app/data/access.log\n") and "grep" not in instruction
    assert json.loads((Path(record.episode_dir) / "staged.json").read_text())["how_cut"] is False


def test_a_file_the_image_does_not_hold_is_described_away_or_noted(tmp_path: Path, backend: DockerBackend) -> None:
    # yield series v13 #9: the instruction named a .gz log that was never made
    phantom = "Write the lines of /app/data/access.log and /app/data/access.log.gz about /login to /app/result.txt."
    replies = [json.dumps(LOGIN), GREP_LOGIN, phantom, OK, phantom]  # the repair names it again
    record, model = _run(tmp_path, backend, replies, (GREP_LOGIN, "submit"), staged={"order": "solution_first"})
    assert "(/app/data/access.log.gz: no such file)" in model.calls[4][-1].content
    assert record.verdict == "valid", record
    instruction = (Path(record.candidate_dir or "") / "instruction.md").read_text()
    assert "There is no /app/data/access.log.gz: use only /app/data/access.log." in instruction


def test_an_instruction_the_output_still_contradicts_is_rejected(tmp_path: Path, backend: DockerBackend) -> None:
    replies = [json.dumps(LOGIN), GREP_LOGIN, SAYS_LESS, OK, SAYS_LESS]
    record, _ = _run(tmp_path, backend, replies, staged={"order": "solution_first"})
    assert record.verdict == "no-candidate" and record.failed_checks == [INSTRUCTION_CONTRADICTS_OUTPUT]


def test_an_instruction_that_states_no_rule_is_rejected(tmp_path: Path, backend: DockerBackend) -> None:
    # a demo run on 8046ba4: "If the condition is true, the first field is printed." of `$7 != "/bin/bash"`;
    # the values hint would have been the rule's only statement
    vague = "Write the lines of /app/data/access.log that satisfy the condition to /app/result.txt, in input order."
    grep = "```bash\ngrep 'login' /app/data/access.log > /app/result.txt\n```"
    replies = [json.dumps(LOGIN), grep, vague, OK, vague]  # the repair, told to mention login, does not
    record, model = _run(tmp_path, backend, replies, staged={"order": "solution_first"})
    assert "Your previous instruction did not mention login." in model.calls[4][-1].content
    assert record.verdict == "no-candidate" and record.failed_checks == ["rule-not-stated"]


def test_an_instruction_that_gives_the_answer_away_is_rejected(tmp_path: Path, backend: DockerBackend) -> None:
    idea = {**IDEA, "output_file": "/app/paths.txt"}
    solve = "```bash\nprintf '10.0.0.2 GET /missing\\n10.0.0.3 GET /missing\\n' > /app/paths.txt\n```"
    leaky = (
        "Write these lines to /app/paths.txt from /app/data/access.log: 10.0.0.2 GET /missing and 10.0.0.3 GET /missing"
    )
    replies = [json.dumps(idea), solve, leaky, OK, leaky]  # the last: the repair (the script reads no input)
    record, model = _run(tmp_path, backend, replies, staged={"order": "solution_first"})
    repair = model.calls[4][-1].content
    assert "/app/data/access.log, which the script never reads" in repair
    assert "Your previous instruction copies lines of /app/paths.txt (`10.0.0.2 GET /missing`)" in repair
    # the copies are the instruction's only line: nothing is left to cut them from
    assert record.verdict == "no-candidate" and record.failed_checks == ["answer-in-instruction"]


def test_an_instruction_that_restates_the_input_is_rejected(tmp_path: Path, backend: DockerBackend) -> None:
    # a flywheel round on e5c6de5: each line's status code listed, so the codes above 400 follow from the text alone
    idea = {**IDEA, "change": "Keep the status codes above 400", "output_file": "/app/codes.txt"}
    awk = "```bash\nawk '$4 > 400 {print $4}' /app/data/access.log > /app/codes.txt\n```"
    restated = (
        "Write the status codes above 400 of /app/data/access.log to /app/codes.txt, one per line, in input order. "
        "The first line has status 200, the second 404, the third 500 and the fourth 404."
    )
    replies = [json.dumps(idea), awk, restated, OK, restated]  # the repair restates them again
    record, model = _run(tmp_path, backend, replies, staged={"order": "solution_first"})
    assert "lists the input's values line by line" in model.calls[4][-1].content
    assert record.verdict == "no-candidate" and record.failed_checks == ["input-in-instruction"]


def test_an_example_that_copies_the_output_is_cut_from_the_instruction(tmp_path: Path, backend: DockerBackend) -> None:
    # a recorded demo run: a right rule, then an **Example** block quoting the output the model had seen
    idea = {**IDEA, "change": "Keep the requests for /missing", "output_file": "/app/result.txt"}
    grep = "```bash\ngrep /missing /app/data/access.log > /app/result.txt\n```"
    rule = "Write the lines of /app/data/access.log whose path is /missing to /app/result.txt, in input order."
    leaky = f"{rule}\n\n**Example**\n\n`10.0.0.2 GET /missing 404`\n\n`10.0.0.3 GET /missing 404`\n\n`10.0"
    replies = [json.dumps(idea), grep, leaky, OK, leaky]  # the repair copies them again
    record, model = _run(tmp_path, backend, replies, (grep, "submit"), staged={"order": "solution_first"})
    assert "copies lines of /app/result.txt" in model.calls[4][-1].content
    assert record.verdict == "valid", record
    instruction = (Path(record.candidate_dir or "") / "instruction.md").read_text()
    assert instruction.startswith(rule) and "Example" not in instruction and "10.0.0.3" not in instruction
    assert json.loads((Path(record.episode_dir) / "staged.json").read_text())["quotes_cut"] is True


@pytest.mark.parametrize("repaired", [True, False])
def test_an_instruction_that_leaves_out_the_rules_keyword_is_repaired_or_completed(
    tmp_path: Path, backend: DockerBackend, repaired: bool
) -> None:
    idea = {**IDEA, "change": "Count the requests of one method", "output_file": "/app/countpost.txt"}
    # the rule has two values and the instruction names one: stated in part, it is completed (naming neither is
    # `rule-not-stated`, test_an_instruction_that_states_no_rule_is_rejected)
    solve = "```bash\ngrep 'POST' /app/data/access.log | grep -c 'login' > /app/countpost.txt\n```"
    vague = "Count the login requests of one method in /app/data/access.log; write the number to /app/countpost.txt."
    fixed = "Count the POST requests for login in /app/data/access.log; write the number to /app/countpost.txt."
    replies = [json.dumps(idea), solve, vague, OK, fixed if repaired else vague]
    record, model = _run(tmp_path, backend, replies, reproduce_attempts=0, staged={"order": "solution_first"})
    assert record.verdict == "valid", record
    assert "did not mention POST" in model.calls[4][-1].content
    instruction = (Path(record.candidate_dir or "") / "instruction.md").read_text()
    log = json.loads((Path(record.episode_dir) / "staged.json").read_text())
    assert log["unnamed"] == ["POST"] and log["repairs"] == 1
    assert instruction.startswith(fixed if repaired else vague)
    assert ("The rule uses these values: `POST`." in instruction) is not repaired
    # The first line of the input the script reads, as a parsing hint.
    assert "A line of /app/data/access.log looks like: `10.0.0.1 GET /index.html 200`" in instruction


def test_a_blind_attempt_runs_under_the_reproduction_time_limit_not_the_tasks(
    tmp_path: Path, backend: DockerBackend
) -> None:
    replies = [json.dumps(IDEA), INSTRUCTION, GOOD, OK]
    record, _ = _run(
        tmp_path, backend, replies, ("```bash\nsleep 30\n```",), reproduce_attempts=1, reproduce_timeout_sec=3
    )
    assert record.failed_checks == [NOT_REPRODUCED] and record.validation.reproduce_rewards == [0.0]
    result = json.loads((tmp_path / "out" / "reproduce" / "staged-000__blind-1" / "result.json").read_text())
    # The attempt ended on its wall budget after 3 s (the task's own limit is 600 s), and was graded.
    meta = result["agent_result"]["metadata"]
    assert meta["exit_reason"] == "max_wall" and 2.5 < meta["wall_sec"] < 10
    assert result["verifier_result"]["rewards"] == {"reward": 0.0}


def test_an_instruction_that_gives_the_command_away_is_rejected(tmp_path: Path, backend: DockerBackend) -> None:
    given = (
        "Count the requests with status 404: run grep -c ' 404$' /app/data/access.log and write the number to "
        "/app/count404.txt."
    )
    record, _ = _run(tmp_path, backend, [json.dumps(IDEA), given, GOOD, OK], reproduce_attempts=0)
    assert (record.verdict, record.failed_checks) == ("no-candidate", ["solution-in-instruction"])
    log = json.loads((Path(record.episode_dir) / "staged.json").read_text())
    assert log["guard"] == "solution-in-instruction" and "grep -c ' 404$'" in log["guard_detail"]


def test_when_no_reader_makes_the_recorded_output_their_agreed_script_becomes_the_solution(
    tmp_path: Path, backend: DockerBackend
) -> None:
    lines = "```bash\ngrep ' 404$' /app/data/access.log > /app/count404.txt\n```"  # the lines, not their count
    failing = "```bash\nexit 3\n```"
    replies = [json.dumps(IDEA), INSTRUCTION, GOOD, OK, lines, failing, lines]  # reader 3: the call to spare
    record, _ = _run(tmp_path, backend, replies, staged={"self_check": 2}, reproduce_attempts=0)
    assert record.verdict == "valid", record
    log = json.loads((Path(record.episode_dir) / "staged.json").read_text())
    assert log["self_check"][0] == "reader 1: a different output (2 lines, recorded 1)"
    assert log["self_check"][1].startswith("reader 2: solution-failed")
    assert log["self_check"][2:] == ["reader 3: a different output (2 lines, recorded 1)",
                                     "the reader's script is the solution now"]  # fmt: skip
    cand = Path(record.candidate_dir or "")
    assert "grep ' 404$'" in (cand / "solution" / "solve.sh").read_text()
    expected = (cand / "tests" / "expected" / "1-count404.txt").read_text()  # recorded again
    assert expected == "10.0.0.2 GET /missing 404\n10.0.0.3 GET /missing 404\n"
    assert log["cross_oracle_passed"] is True and log["check_passed"] is True


def test_readers_who_agree_on_a_value_the_instruction_does_not_name_leave_the_solution(
    tmp_path: Path, backend: DockerBackend
) -> None:
    # A demo run on fdf91cc adopted two readers' `grep 'root'` under an instruction that named no rule: `root`
    # came from the input hint's example line. Here both readers count the 500s; the instruction names 404 only.
    other = "```bash\nawk '$4 == 500' /app/data/access.log | wc -l > /app/count404.txt\n```"
    replies = [json.dumps(IDEA), INSTRUCTION, GOOD, OK, other, other]
    record, _ = _run(tmp_path, backend, replies, staged={"self_check": 2}, reproduce_attempts=0)
    assert record.verdict == "valid", record
    log = json.loads((Path(record.episode_dir) / "staged.json").read_text())
    assert (
        log["self_check"][-1]
        == "the readers' script uses 500, which the instruction does not name: the solution stands"
    )
    cand = Path(record.candidate_dir or "")
    assert "grep -c ' 404$'" in (cand / "solution" / "solve.sh").read_text()
    assert (cand / "tests" / "expected" / "1-count404.txt").read_text() == "2\n"


def test_failing_or_lone_readers_leave_the_solution_and_the_one_shot_baseline_has_no_reader(
    tmp_path: Path, backend: DockerBackend
) -> None:
    broad = "```bash\nawk '$4 >= 400' /app/data/access.log | wc -l > /app/count404.txt\n```"  # 3, not 2
    # The first reader's script fails, so a third is asked (one call to spare); it fails too.
    replies = [json.dumps(IDEA), INSTRUCTION, GOOD, OK, "```bash\nexit 3\n```", broad, "```bash\nexit 4\n```"]
    staged = {"self_check": 2, "reread": False}  # no rewrite of the instruction: the next tests have it
    record, model = _run(tmp_path, backend, replies, staged=staged, reproduce_attempts=0)
    assert record.verdict == "valid", record
    log = json.loads((Path(record.episode_dir) / "staged.json").read_text())
    assert log["self_check"][0].startswith("reader 1: solution-failed")
    assert log["self_check"][2].startswith("reader 3: solution-failed")
    # one clean reader that differs is no reason to change the solution
    assert log["self_check"][1::2] == ["reader 2: a different output (1 lines, recorded 1)",
                                       "no two readers agree: the solution stands"]  # fmt: skip
    cand = Path(record.candidate_dir or "")
    assert "grep -c ' 404$'" in (cand / "solution" / "solve.sh").read_text()
    assert (cand / "tests" / "expected" / "1-count404.txt").read_text() == "2\n"
    # The one-shot recorded baseline (P1) answers once and is never read back, whatever self_check says.
    shot = {k: v for k, v in IDEA.items() if k != "new_data"}
    shot |= {"instruction": INSTRUCTION, "solve_sh": "grep -c ' 404$' /app/data/access.log > /app/count404.txt"}
    baseline, model = _run(
        tmp_path / "p1", backend, [json.dumps(shot)], mode="prompt-recorded", staged={"self_check": 2},
        reproduce_attempts=0,
    )  # fmt: skip
    assert baseline.verdict == "valid" and len(model.calls) == 1
    assert json.loads((Path(baseline.episode_dir) / "staged.json").read_text())["self_check"] == []


REWRITE = "Write to /app/count404.txt the number of lines of /app/data/access.log whose last field is exactly 404."


def test_an_instruction_no_reader_followed_is_rewritten_and_kept_when_a_reader_then_makes_the_output(
    tmp_path: Path, backend: DockerBackend
) -> None:
    broad = "```bash\nawk '$4 >= 400' /app/data/access.log | wc -l > /app/count404.txt\n```"  # 3, not 2
    other = "```bash\nawk '$4 == 200' /app/data/access.log | wc -l > /app/count404.txt\n```"  # 1: clean, differs
    exact = "```bash\nawk '$4 == 404' /app/data/access.log | wc -l > /app/count404.txt\n```"  # 2
    readers = [broad, "```bash\nexit 3\n```", other]  # no reader makes 2, no two agree
    replies = [json.dumps(IDEA), INSTRUCTION, GOOD, OK, *readers, REWRITE, exact]
    record, model = _run(tmp_path, backend, replies, staged={"self_check": 2}, reproduce_attempts=0)
    assert record.verdict == "valid", record
    log = json.loads((Path(record.episode_dir) / "staged.json").read_text())
    assert log["self_check"][3:] == [
        "no two readers agree: the solution stands",
        "reader 4: same output",
        "the rewritten instruction stands: a reader made the recorded output",
    ]
    # The rewrite was shown what the first clean reader made instead of the script's output.
    rewrite = model.calls[7][-1].content
    assert "without seeing the script made /app/count404.txt start like this instead:\n3\n" in rewrite
    assert "It wrote /app/count404.txt, which starts like this:\n2" in rewrite
    cand = Path(record.candidate_dir or "")
    assert (cand / "instruction.md").read_text().startswith(REWRITE)
    assert "grep -c ' 404$'" in (cand / "solution" / "solve.sh").read_text()  # the solution is unchanged
    assert (cand / "tests" / "expected" / "1-count404.txt").read_text() == "2\n"


def test_a_rewritten_instruction_that_no_reader_follows_either_gives_way_to_the_first(
    tmp_path: Path, backend: DockerBackend
) -> None:
    broad = "```bash\nawk '$4 >= 400' /app/data/access.log | wc -l > /app/count404.txt\n```"
    other = "```bash\nawk '$4 == 200' /app/data/access.log | wc -l > /app/count404.txt\n```"  # 1
    # Two clean readers that differ end the check; the rewrite's reader makes a third output.
    replies = [
        json.dumps(IDEA),
        INSTRUCTION,
        GOOD,
        OK,
        broad,
        other,
        REWRITE,
        "```bash\nawk '$4 == 500' /app/data/access.log | wc -l > /app/count404.txt\n```",  # 1 again
    ]
    record, model = _run(tmp_path, backend, replies, staged={"self_check": 2}, reproduce_attempts=0)
    assert record.verdict == "valid", record
    assert len(model.calls) == len(replies)
    log = json.loads((Path(record.episode_dir) / "staged.json").read_text())
    assert log["self_check"][2:] == [
        "no two readers agree: the solution stands",
        "reader 3: a different output (1 lines, recorded 1)",
        "the first instruction stands",
    ]
    cand = Path(record.candidate_dir or "")
    assert (cand / "instruction.md").read_text().startswith(INSTRUCTION)


def test_the_one_shot_baseline_answers_in_sections(tmp_path: Path, backend: DockerBackend) -> None:
    reply = (
        "operator: filter\nchange: Count the requests with status 404\noutput_file: /app/count404.txt\n"
        f"compare: exact\n```data\n```\n```instruction\n{INSTRUCTION}\n```\n{GOOD}\n"
    )
    record, model = _run(
        tmp_path, backend, [reply], mode="prompt-recorded", staged={"oneshot_format": "sections"},
        reproduce_attempts=0,
    )  # fmt: skip
    assert record.verdict == "valid", record
    assert "Answer in exactly this form: four header lines" in model.calls[0][-1].content
    cand = Path(record.candidate_dir or "")
    assert (cand / "tests" / "expected" / "1-count404.txt").read_text() == "2\n"
    assert (cand / "instruction.md").read_text().startswith(INSTRUCTION)


def test_a_path_typo_is_fixed_by_the_harness_without_a_model_call(tmp_path: Path, backend: DockerBackend) -> None:
    typo = "```bash\ngrep -c ' 404$' /app/data/acess.log > /app/count404.txt\n```"
    solver = ("```bash\ngrep -c 404 /app/data/access.log > /app/count404.txt\n```", "submit")
    replies = [json.dumps(IDEA), typo, INSTRUCTION, OK]  # no repair reply: the harness's rewrite passed
    record, model = _run(tmp_path, backend, replies, solver, staged={"order": "solution_first"})
    assert record.verdict == "valid", record
    assert len(model.calls) == 4
    solution = (Path(record.candidate_dir or "") / "solution" / "solve.sh").read_text()
    assert "grep -c ' 404$' /app/data/access.log" in solution
    episode = Path(record.episode_dir)
    assert json.loads((episode / "staged.json").read_text())["fixes"] == ["path: kept"]
    fix = [s for s in read_trajectory(episode / "trajectory.json").steps if (s.extra or {}).get("stage") == "fix"]
    assert len(fix) == 1 and "/app/data/acess.log -> /app/data/access.log" in str(fix[0].message)
    # The describe prompt saw the rewritten script and its real output.
    assert "/app/data/access.log" in model.calls[2][-1].content and "acess" not in model.calls[2][-1].content


def test_a_run_that_selected_nothing_is_repaired_with_the_inputs_fields(tmp_path: Path, backend: DockerBackend) -> None:
    # yield series v13 #14: three scripts in a row matched /^40[0-9]/ against lines that start with an IP
    nothing = "```bash\nawk '/^404/' /app/data/access.log | wc -l > /app/count404.txt\n```"  # writes 0
    replies = [json.dumps(IDEA), nothing, GOOD, INSTRUCTION, OK]
    solver = ("```bash\ngrep -c 404 /app/data/access.log > /app/count404.txt\n```", "submit")
    record, model = _run(tmp_path, backend, replies, solver, staged={"order": "solution_first"})
    assert record.verdict == "valid", record
    repair = model.calls[2][-1].content
    assert "nothing of the input reached /app/count404.txt" in repair
    assert "A line of /app/data/access.log, split at blanks: $1 `10.0.0.1`, $2 `GET`, $3 `/index.html`, $4 `200`" in (
        repair
    )


GZ = "gzip -c /app/data/access.log > /tmp/a.gz && "


@pytest.mark.parametrize(
    ("solve", "check", "name", "lines"),
    [
        # grep over the log and a compressed copy: file names in front, the copy skipped as binary
        (GZ + "grep ' 404$' /app/data/access.log /tmp/a.gz > /app/out.txt", rec.OUTPUT_FILE_PREFIX, "gz+grep-h", 4),
        (GZ + "sort -k4 /tmp/a.gz > /app/out.txt", rec.OUTPUT_BINARY, "gz", 4),
        # grep -o whose pattern stops inside the status code: every line ends in "40" or "50"
        ("grep -oE '^.* [45]0' /app/data/access.log > /app/out.txt", rec.OUTPUT_CUTS_FIELDS, "grep-o", 3),
        # `|` in a basic regex is a plain character: -v removed nothing
        ("grep -v '404|500' /app/data/access.log > /app/out.txt", rec.OUTPUT_COPIES_INPUT, "grep-E", 1),
        (GZ + "cat /tmp/a.gz /app/data/access.log | sort -u > /app/out.txt", rec.OUTPUT_BINARY, "gz", 4),
        # every guard passes, and grep skipped the compressed copy without a word: its 2 lines are missing
        (GZ + "grep ' 404$' /app/data/access.log /tmp/a.gz | awk '{print $3}' > /app/out.txt", None, "gz", 4),
    ],
)
def test_the_rewrites_run_in_the_real_image(
    tmp_path: Path, backend: DockerBackend, solve: str, check: str | None, name: str, lines: int
) -> None:
    parent = load_parent(worked_example(domain_context("terminal")))  # type: ignore[arg-type]
    assert parent is not None
    files = DraftFiles(instruction="Find the lines.", solve_sh=solve)
    draft = write_draft(tmp_path / "d", parent=parent.path, files=files, name="d", description="", category="t",
                        outputs=["/app/out.txt"])  # fmt: skip
    runner = rec.DraftRunner(backend, run_id="test-staged-fixes", timeout_sec=30)
    first = runner.run(draft, solve, ["/app/out.txt"])
    problem = rec.mechanical_problem(first, parent.data, solve)
    assert (problem[0] if problem else None) == check
    fix = shell_fix(solve, problem, first, list(parent.data))
    assert fix is not None and fix.name == name
    again = runner.run(draft, fix.script, ["/app/out.txt"])
    assert rec.mechanical_problem(again, parent.data, fix.script) is None, again
    assert len((again.outputs["/app/out.txt"] or "").splitlines()) == lines


def test_the_adversary_runs_in_the_check_and_the_validation_of_a_staged_task(
    tmp_path: Path, backend: DockerBackend
) -> None:
    # issue 12: the model probes on Docker in the proposer's check, then in the candidate's validation. The
    # adversary writes the reward file and an empty output; the recorded tests reward neither.
    write = "Cheating.\n```bash\necho 1 > /logs/verifier/reward.txt; : > /app/result.txt\n```"
    # its submit over an empty output goes through: the solver's submit guards are not the adversary's
    adversary = ScriptedModel([write, "```bash\nsubmit\n```"] * 2)  # one attempt in the check, one in the validation
    model = ScriptedModel([json.dumps(LOGIN), GREP_LOGIN, SAYS_LOGIN, OK])
    staged = {"order": "solution_first", "self_check": 0}
    probes = {"enabled": True, "adversarial_attempts": 1}
    config = ProposeConfig.model_validate(
        {"mode": "staged", "n": 1, "reproduce_attempts": 1, "proposer": {"staged": staged},
         "validation": {"repeats": 1, "probes": probes}}
    )  # fmt: skip
    run = ProposeRun(
        tmp_path / "out", backend, model, domain_context("terminal"), config,
        solver_factory=lambda: _solver(GREP_LOGIN, "submit"), probe_model=adversary,
    )  # fmt: skip
    (record,) = run.run()
    assert record.verdict == "valid", record
    assert len(adversary.calls) == 4  # both attempts ran, each to its submit
    log = json.loads((Path(record.episode_dir) / "staged.json").read_text())
    assert log["check_passed"] is True
    lines = (tmp_path / "out" / "validation" / "results.jsonl").read_text().splitlines()
    (report,) = [json.loads(ln) for ln in lines]
    (attempt,) = report["probes"]["adversarial"]["attempts"]
    assert attempt["reward"] == 0.0 and not attempt["confirmed"] and report["probes"]["flags"] == []
