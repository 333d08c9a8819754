"""The Ray executor on a real two-node cluster on this machine (``ray.cluster_utils.Cluster``).

Same verdicts and rewards as the local executor; a worker node removed mid-run loses and duplicates nothing; a
killed driver's run finishes on ``--resume``. Most trials run on ``ScoredFakeBackend`` (no Docker): what is under
test is the executor, the shipping of task and trial dirs, and the run dir's bookkeeping; one test validates and
solves two of the examples on Docker through both executors.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from autoenvscaling.agent.config import AgentConfig
from autoenvscaling.execution.executors import ExecutorConfig, LocalExecutor
from autoenvscaling.execution.portable import SCRATCH_PREFIX, process_alive
from autoenvscaling.execution.ray_executor import RayExecutor
from autoenvscaling.flywheel.solving import solve_tasks
from autoenvscaling.llm.config import parse_model_arg
from autoenvscaling.llm.scripted import ScriptedModel
from autoenvscaling.roles import remote_solver
from autoenvscaling.roles.adversary import model_probes_for
from autoenvscaling.roles.judge import CRITERIA
from autoenvscaling.roles.proposer import reproduce as reproduce_mod
from autoenvscaling.roles.proposer.domain import domain_context
from autoenvscaling.roles.proposer.run import ProposeConfig, ProposeRun
from autoenvscaling.roles.remote_solver import RemoteModel, RemoteSolverFactory
from autoenvscaling.roles.solve_run import SolveRun
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.sandbox.fake_scored import NAME, ScoredFakeBackend, write_scored_task
from autoenvscaling.validate.probes import ProbeConfig
from autoenvscaling.validate.run import ValidationRun
from autoenvscaling.validate.validator import ValidationConfig
from autoenvscaling.verify.trial_agents import OracleAgent

ray = pytest.importorskip("ray", reason="the `ray` extra (make setup installs it)")
from ray.cluster_utils import Cluster  # noqa: E402

pytestmark = [
    pytest.mark.ray,
    pytest.mark.slow,
    # Ray's node launcher leaves /dev/null handles for the garbage collector (ray 2.49)
    pytest.mark.filterwarnings("ignore:unclosed file <_io.TextIOWrapper name='/dev/null':ResourceWarning"),
    pytest.mark.filterwarnings(
        "ignore:Exception ignored in. <_io.FileIO name='/dev/null':pytest.PytestUnraisableExceptionWarning"
    ),
]

SLOTS = {"sandbox_slot": 2}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "resources": SLOTS})
    c.add_node(num_cpus=1, resources=SLOTS)
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False)
    try:
        yield c
    finally:
        ray.shutdown()
        c.shutdown()


def _tasks(root: Path, sleep_sec: float = 0.0) -> list[Path]:
    return [
        write_scored_task(root / "good", sleep_sec=sleep_sec),
        write_scored_task(root / "nop-passes", unsolved=1, sleep_sec=sleep_sec),
        write_scored_task(root / "oracle-fails", solved=0, sleep_sec=sleep_sec),
    ]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_validate_and_solve_through_ray_match_local(cluster: Cluster, tmp_path: Path) -> None:
    tasks = _tasks(tmp_path / "tasks")
    config = ValidationConfig(repeats=2)
    ray_exec = RayExecutor(ExecutorConfig(kind="ray", address=cluster.address))
    verdicts = {}
    for name, executor in [("local", LocalExecutor()), ("ray", ray_exec)]:
        run = ValidationRun(tmp_path / f"v-{name}", ScoredFakeBackend(), config, executor=executor, concurrency=2)
        reports, _ = run.run(tasks)
        verdicts[name] = [
            (r.task_path, r.verdict.value, r.failed_checks, [(t.agent, t.reward) for t in r.trials]) for r in reports
        ]
    assert verdicts["ray"] == verdicts["local"]
    assert [v[1] for v in verdicts["ray"]] == ["valid", "invalid", "invalid"]

    rewards = {}
    for name, executor in [("local", LocalExecutor()), ("ray", ray_exec)]:
        solve = SolveRun(tmp_path / f"s-{name}", ScoredFakeBackend(), OracleAgent, attempts=2, executor=executor)
        records, _ = solve.run(tasks)
        rewards[name] = [(r.task_path, r.attempt, r.reward, Path(r.trial_dir).name) for r in records]
    assert rewards["ray"] == rewards["local"]
    assert [r[2] for r in rewards["ray"]] == [1.0, 1.0, 1.0, 1.0, 0.0, 0.0]
    # the driver wrote each trial dir, with the driver's paths in it (not the worker's scratch dir)
    for _, _, _, trial in rewards["ray"]:
        result = (tmp_path / "s-ray" / "trials" / trial / "result.json").read_text()
        assert "autoenv-work-" not in result and str(tmp_path / "s-ray" / "trials" / trial) in result


def test_flywheel_attempts_through_ray_match_local(cluster: Cluster, tmp_path: Path) -> None:
    items = [(p.name, p) for p in _tasks(tmp_path / "tasks")]
    out = {}
    for name, executor in [("local", None), ("ray", RayExecutor(ExecutorConfig(kind="ray")))]:
        done = solve_tasks(
            tmp_path / name, items, backend=ScoredFakeBackend(), agent_factory=OracleAgent, attempts=2,
            executor=executor, backend_name=NAME,
        )  # fmt: skip
        out[name] = [(t.key, t.error, [a.reward for a in t.attempts]) for t in done]
    assert out["ray"] == out["local"] == [("good", None, [1.0, 1.0]), ("nop-passes", None, [1.0, 1.0]),
                                          ("oracle-fails", None, [0.0, 0.0])]  # fmt: skip


def test_killed_driver_resumes_and_finishes(cluster: Cluster, tmp_path: Path) -> None:
    tasks = [write_scored_task(tmp_path / "tasks" / f"t{i}", sleep_sec=0.5) for i in range(3)]
    run_dir = tmp_path / "solve"
    cmd = [sys.executable, "-m", "autoenvscaling.cli", "solve", *map(str, tasks), "--agent", "oracle", "-k", "3"]
    cmd += ["--backend", NAME, "--run-dir", str(run_dir), "--executor", "ray", "--ray-address", cluster.address]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    log = run_dir / "results.jsonl"
    try:
        deadline = time.monotonic() + 120
        while not (log.exists() and log.read_text().count("\n") >= 2):
            assert proc.poll() is None, "the run finished before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert len(_lines(log)) < 9
    resumed = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    keys = Counter((x["task_path"], x["attempt"]) for x in _lines(log))
    assert sorted(keys) == [(str(t), i) for t in tasks for i in (1, 2, 3)] and set(keys.values()) == {1}
    assert all(x["reward"] == 1.0 for x in _lines(log))


def test_trials_packed_several_to_a_ray_task_land_as_one_task_per_trial_does(cluster: Cluster, tmp_path: Path) -> None:
    tasks = [write_scored_task(tmp_path / "tasks" / f"t{i}") for i in range(4)] + _tasks(tmp_path / "tasks")
    got = {}
    for per_task in (1, 3):
        run_dir = tmp_path / f"solve-{per_task}"
        executor = RayExecutor(ExecutorConfig(kind="ray", items_per_task=per_task))
        records, _ = SolveRun(run_dir, ScoredFakeBackend(), OracleAgent, attempts=3, executor=executor).run(tasks)
        keys = Counter((x["task_path"], x["attempt"]) for x in _lines(run_dir / "results.jsonl"))
        assert sorted(keys) == sorted((str(t), i) for t in tasks for i in (1, 2, 3)) and set(keys.values()) == {1}
        assert len(list((run_dir / "trials").iterdir())) == 3 * len(tasks)
        got[per_task] = [(Path(r.task_path).name, r.attempt, r.reward, r.error) for r in records]
    assert got[3] == got[1]


def test_removing_a_worker_node_mid_run_loses_and_duplicates_nothing(cluster: Cluster, tmp_path: Path) -> None:
    tasks = [write_scored_task(tmp_path / "tasks" / f"t{i}", sleep_sec=1.0) for i in range(4)]
    cluster.add_node(num_cpus=1, resources=SLOTS)
    cluster.wait_for_nodes()
    driver = ray._private.worker.global_worker.node._raylet_socket_name  # never remove the driver's own node
    victim = next(n for n in cluster.worker_nodes if n._raylet_socket_name != driver)
    run_dir = tmp_path / "solve"
    executor = RayExecutor(ExecutorConfig(kind="ray", max_retries=3))
    run = SolveRun(run_dir, ScoredFakeBackend(), OracleAgent, attempts=3, executor=executor)
    outcome: dict[str, Any] = {}

    def go() -> None:
        try:
            outcome["records"], _ = run.run(tasks)
        except BaseException as e:  # surfaced by the assertions below
            outcome["error"] = e

    thread = threading.Thread(target=go)
    thread.start()
    log = run_dir / "results.jsonl"
    deadline = time.monotonic() + 120
    while not (log.exists() and log.read_text().count("\n") >= 2):
        assert thread.is_alive() and time.monotonic() < deadline
        time.sleep(0.05)
    cluster.remove_node(victim)
    thread.join(timeout=300)
    assert "error" not in outcome, outcome.get("error")
    keys = Counter((x["task_path"], x["attempt"]) for x in _lines(log))
    assert sorted(keys) == [(str(t), i) for t in tasks for i in (1, 2, 3)] and set(keys.values()) == {1}
    assert [r.reward for r in outcome["records"]] == [1.0] * 12
    assert sorted(p.name for p in (run_dir / "trials").iterdir()) == sorted(
        f"t{i}__{a}" for i in range(4) for a in (1, 2, 3)
    )


@pytest.mark.parametrize("per_task", [None, 2], ids=["a-task-per-trial", "two-trials-per-task"])
def test_a_trial_whose_retries_run_out_is_its_error_and_the_run_goes_on(
    cluster: Cluster, tmp_path: Path, per_task: int | None
) -> None:
    tasks = [write_scored_task(tmp_path / "tasks" / name) for name in ("a", "kills-its-worker", "b")]
    (tasks[1] / "CRASH").write_text("")

    class CrashingOracle(OracleAgent):  # defined here, so Ray pickles it by value
        def run(self, sandbox: Any, task: Any, agent_dir: Path, timeout_sec: float | None) -> Any:
            if (task.paths.root / "CRASH").exists():
                os._exit(1)  # the worker process dies, on every retry too
            return super().run(sandbox, task, agent_dir, timeout_sec)

    run_dir = tmp_path / "solve"
    executor = RayExecutor(ExecutorConfig(kind="ray", max_retries=1, items_per_task=per_task))
    records, summaries = SolveRun(run_dir, ScoredFakeBackend(), CrashingOracle, attempts=2, executor=executor).run(
        tasks
    )
    assert [(Path(r.task_path).name, r.attempt, r.reward) for r in records] == [
        ("a", 1, 1.0), ("a", 2, 1.0), ("kills-its-worker", 1, None), ("kills-its-worker", 2, None),
        ("b", 1, 1.0), ("b", 2, 1.0),
    ]  # fmt: skip
    for r in records[2:4]:
        assert r.error is not None and r.error.startswith("ExecutorError: ") and "retries ran out" in r.error
    keys = Counter((x["task_path"], x["attempt"]) for x in _lines(run_dir / "results.jsonl"))
    assert sorted(keys) == sorted((str(t), i) for t in tasks for i in (1, 2)) and set(keys.values()) == {1}
    assert [(s.task_name, s.errors, s.pass_at_1) for s in summaries] == [
        ("a", 0, 1.0), ("kills-its-worker", 2, None), ("b", 0, 1.0)
    ]  # fmt: skip
    # The killed workers could not remove their scratch dirs; the next task or the executor's close does.
    executor.close()
    scratch = Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*-*/in/kills-its-worker")
    assert [d.parent.parent for d in scratch if not process_alive(int(d.parent.parent.name.split("-")[2]))] == []


@pytest.mark.parametrize("per_task", [None, 2], ids=["a-task-per-trial", "two-trials-per-task"])
def test_an_items_own_exception_comes_back_as_itself_after_the_results_beside_it(
    cluster: Cluster, tmp_path: Path, per_task: int | None
) -> None:
    release = tmp_path / "release"

    def work(i: int) -> int:  # defined here, so Ray pickles it by value
        if i != 2:
            return i * 10
        deadline = time.monotonic() + 120
        while not release.exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # until the driver holds the other tasks' results (the nodes share this disk)
        raise ValueError("item 2 is bad")

    executor = RayExecutor(ExecutorConfig(kind="ray", items_per_task=per_task))
    # Item 1 shares item 2's task when there are two per task: its result comes back with the exception.
    before = {30} if per_task == 2 else {10, 30}
    got: list[int] = []
    with pytest.raises(ValueError, match="item 2 is bad"):
        for batch in executor.map_batches(work, [1, 2, 3], concurrency=1):
            got += batch
            if before <= set(got):
                release.write_text("")  # a file, not a finished task, was the signal before: it raced the return
    assert sorted(got) == [10, 30]


def test_a_blocking_judge_runs_on_the_workers_and_its_flag_comes_back(cluster: Cluster, tmp_path: Path) -> None:
    fail = {"behavior-in-tests": "the tests only check a marker file"}
    items = [{"id": c, "outcome": "fail" if c in fail else "pass", "explanation": fail.get(c, "")} for c in CRITERIA]
    script = tmp_path / "judge.json"  # each worker opens the scripted judge from this file
    script.write_text(json.dumps([json.dumps({"criteria": items})] * 4))
    judge = RemoteModel(parse_model_arg(f"scripted:{script}"))
    probes = ProbeConfig(enabled=False, judge="blocking")  # the rule probes need a real shell
    run = ValidationRun(
        tmp_path / "v", ScoredFakeBackend(), ValidationConfig(repeats=1, probes=probes), backend_name=NAME,
        executor=RayExecutor(ExecutorConfig(kind="ray")), model_probes=model_probes_for(probes, judge),
    )  # fmt: skip
    (report,) = run.run([write_scored_task(tmp_path / "tasks" / "good")])[0]
    assert (report.verdict.value, report.failed_checks) == ("invalid", ["judge:behavior-in-tests"])
    assert report.probes is not None and report.probes.judge is not None
    assert report.probes.judge.model == "scripted:judge.json"
    assert judge.config.model_dump_json() not in remote_solver._opened  # opened on a worker, never here


@pytest.mark.docker
def test_examples_validated_and_solved_through_ray_match_local_on_docker(cluster: Cluster, tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[2] / "examples" / "terminal"
    tasks = [examples / "log-error-summary", examples / "ini-to-json"]
    ray_exec = RayExecutor(ExecutorConfig(kind="ray"))
    seen: dict[str, Any] = {}
    for name, executor in [("local", LocalExecutor()), ("ray", ray_exec)]:
        backend = DockerBackend()
        reports, _ = ValidationRun(
            tmp_path / f"v-{name}", backend, ValidationConfig(repeats=1), executor=executor, backend_name="docker"
        ).run(tasks)
        records, _ = SolveRun(
            tmp_path / f"s-{name}", backend, OracleAgent, executor=executor, backend_name="docker"
        ).run(tasks)
        seen[name] = (
            [(r.task_path, r.verdict.value, r.failed_checks, [(t.agent, t.reward) for t in r.trials]) for r in reports],
            [(r.task_path, r.attempt, r.reward) for r in records],
        )
    assert seen["ray"] == seen["local"]
    assert [v[1] for v in seen["ray"][0]] == ["valid", "valid"] and [r[2] for r in seen["ray"][1]] == [1.0, 1.0]


@pytest.mark.docker
def test_a_candidates_blind_reproduction_runs_on_ray_and_its_trials_come_back(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    idea = {
        "operator": "filter",
        "change": "Count the requests that ended with status 404",
        "output_file": "/app/count404.txt",
        "compare": "exact",
        "new_data": False,
    }
    instruction = "Count the requests with status 404 in /app/data/access.log; write the number to /app/count404.txt."
    solution = "```bash\ngrep -c ' 404$' /app/data/access.log > /app/count404.txt\n```"
    proposer = ScriptedModel([json.dumps(idea), instruction, solution, json.dumps({"decision": "ok", "reason": "ok"})])
    script = tmp_path / "blind.json"  # each worker opens the scripted blind solver from this file
    script.write_text(json.dumps(["```bash\ngrep -c 404 /app/data/access.log > /app/count404.txt\n```", "submit"]))
    solver = RemoteSolverFactory(parse_model_arg(f"scripted:{script}"), AgentConfig(max_turns=4))
    staged = {"order": "instruction_first", "self_check": 0}  # the script answers no self-check reader
    config = ProposeConfig.model_validate(
        {"mode": "staged", "n": 1, "reproduce_attempts": 2, "proposer": {"staged": staged}}
    )
    out = tmp_path / "out"

    def on_the_driver(*_a: Any, **_k: Any) -> None:
        raise AssertionError("the blind attempts ran on the driver")

    monkeypatch.setattr(reproduce_mod, "reproduce", on_the_driver)  # the workers' own module is untouched
    run = ProposeRun(
        out, DockerBackend(), proposer, domain_context("terminal"), config, solver_factory=solver,
        executor=RayExecutor(ExecutorConfig(kind="ray")), backend_name="docker",
    )  # fmt: skip
    (record,) = run.run()
    assert record.verdict == "valid", record
    assert record.validation.recorded and record.validation.reproduce_oneshots == [1.0]  # the worker's one-shot
    result = (out / "reproduce" / "staged-000__oneshot-1" / "result.json").read_text()  # landed by the driver
    assert "autoenv-work-" not in result and str(out / "reproduce" / "staged-000__oneshot-1") in result
    assert len((out / "reproduce" / "results.jsonl").read_text().splitlines()) == 1
