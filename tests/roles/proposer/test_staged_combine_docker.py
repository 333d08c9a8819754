"""The ``combine`` operator on Docker with scripted models: a child of two parents is built, recorded and
reproduced with both parents' inputs in its image, and rejected when either parent's solution solves it."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from combine_parents import ACCESS_LOG, make_parent

from autoenvscaling.agent.config import AgentConfig
from autoenvscaling.agent.trajectory import read_trajectory
from autoenvscaling.llm.scripted import ScriptedModel
from autoenvscaling.roles.proposer.domain import domain_context
from autoenvscaling.roles.proposer.records import ProposalRecord
from autoenvscaling.roles.proposer.run import ProposeConfig, ProposeRun
from autoenvscaling.roles.proposer.staged import record as rec
from autoenvscaling.roles.proposer.staged.parents import worked_example
from autoenvscaling.roles.solver import SolverAgent
from autoenvscaling.sandbox.docker import DockerBackend

pytestmark = [pytest.mark.docker, pytest.mark.slow]

OK = json.dumps({"decision": "ok", "reason": "it is right"})
BOTH_404 = "```bash\ncat /app/data/access.log /app/data/access-2.log | grep -c ' 404$' > /app/all404.txt\n```"
BOTH_INSTRUCTION = (
    "Count the requests with status 404 in /app/data/access.log and /app/data/access-2.log together and write "
    "the number to /app/all404.txt."
)


@pytest.fixture(scope="module")
def backend() -> Iterator[DockerBackend]:
    b = DockerBackend()
    try:
        yield b
    finally:
        b.client.close()


def _run(
    tmp: Path, backend: DockerBackend, replies: list[str], solver: tuple[str, ...], **kw: object
) -> ProposalRecord:
    # Parents in episode order: the pool task below, the worked example (the second parent), the examples.
    pool = make_parent(tmp / "pool", "ips-task")
    base = {"mode": "staged", "n": 1, "parents": [str(pool)], "proposer": {"staged": {"self_check": 0}}}
    config = ProposeConfig.model_validate({**base, **kw})
    agent = lambda: SolverAgent(ScriptedModel(list(solver)), AgentConfig(max_turns=4))  # noqa: E731
    run = ProposeRun(
        tmp / "out", backend, ScriptedModel(replies), domain_context("terminal"), config, solver_factory=agent
    )
    (record,) = run.run()
    return record


def test_a_combined_child_holds_both_parents_inputs_and_names_both_parents(
    tmp_path: Path, backend: DockerBackend
) -> None:
    idea: dict[str, object] = {"operator": "combine", "change": "Count the 404s of both logs"}
    idea |= {"output_file": "/app/all404.txt"}
    idea |= {"compare": "exact", "new_data": False}
    solver = (BOTH_404, "submit")
    record = _run(tmp_path, backend, [json.dumps(idea), BOTH_404, BOTH_INSTRUCTION, OK], solver, reproduce_attempts=1)

    assert record.verdict == "valid", record
    assert record.validation.reproduce_oneshots == [1.0] and record.validation.reproduce_rewards == []
    cand = Path(record.candidate_dir or "")
    assert (cand / "tests" / "expected" / "1-all404.txt").read_text() == "4\n"  # 2 in each log
    meta = tomllib.loads((cand / "task.toml").read_text())["metadata"]
    assert meta["lineage"] == {"parent": "ips-task", "second_parent": "worked-example", "operator": "combine"}
    log = json.loads((Path(record.episode_dir) / "staged.json").read_text())
    assert log["second_parent"] == "worked-example" and log["cross_oracle_passed"] is True
    assert log["renamed"] == {"/app/data/access.log": "/app/data/access-2.log"}
    # The solution prompt showed both inputs at the child's paths.
    steps = read_trajectory(Path(record.episode_dir) / "trajectory.json").steps
    solution_prompt = next(s.message for s in steps if (s.extra or {}).get("stage") == "solution")
    assert "input file /app/data/access.log (first lines):\n10.0.0.7" in str(solution_prompt)
    assert "input file /app/data/access-2.log (first lines):\n10.0.0.1" in str(solution_prompt)
    # The image built from the candidate holds each parent's input at the path shown.
    runner = rec.DraftRunner(backend, run_id="test-staged-combine", timeout_sec=30)
    run = runner.run(cand, "cat /app/data/access.log /app/data/access-2.log > /app/both.txt", ["/app/both.txt"])
    worked_log = (worked_example(domain_context("terminal")) / "environment" / "data" / "access.log").read_text()  # type: ignore[operator]
    assert run.exit_code == 0 and run.outputs["/app/both.txt"] == ACCESS_LOG + worked_log


def test_a_combined_child_the_second_parents_solution_solves_is_not_new(tmp_path: Path, backend: DockerBackend) -> None:
    idea: dict[str, object] = {"operator": "combine", "change": "Summarize the error codes"}
    idea |= {"output_file": "/app/errors.txt"}
    idea |= {"compare": "exact", "new_data": False}
    # The second parent's own script, at the path its input has in the child.
    again = (
        "```bash\nawk '$4 >= 400 {c[$4]++} END {for (s in c) print s, c[s]}' /app/data/access-2.log "
        "| sort -n > /app/errors.txt\n```"
    )
    words = (
        "/app/data/access-2.log has one request per line: IP, method, path, status. Write /app/errors.txt: one "
        'line per status code >= 400, formatted "<status> <count>", sorted by status ascending.'
    )
    record = _run(tmp_path, backend, [json.dumps(idea), again, words, OK], (), reproduce_attempts=0)
    assert (record.verdict, record.failed_checks) == ("no-candidate", [rec.CROSS_ORACLE])
    log = json.loads((Path(record.episode_dir) / "staged.json").read_text())
    assert log["recorded"] is True and log["cross_oracle_passed"] is False
    notes = [str(s.message) for s in read_trajectory(Path(record.episode_dir) / "trajectory.json").steps]
    assert any("the solution of the parent worked-example already passes" in n for n in notes)
