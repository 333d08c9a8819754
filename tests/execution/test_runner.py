"""The item runner: a key per item, each result appended once, resume skips what is done, progress per result."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from autoenvscaling.errors import UserInputError
from autoenvscaling.execution import executors
from autoenvscaling.execution.executors import ExecutorConfig, ExecutorError, LocalExecutor, Lost, get_executor
from autoenvscaling.execution.portable import Delivery, PortableWork, pack_dir, ship, unpack_dir
from autoenvscaling.execution.rundir import ResultsLog
from autoenvscaling.execution.runner import ItemRunner


class Rec(BaseModel):
    key: str
    value: int
    path: str = ""


def _runner(log_path: Path, executor: Any = None, concurrency: int = 1) -> ItemRunner[int, Rec]:
    return ItemRunner(
        ResultsLog(log_path, Rec),
        item_key=str,
        result_key=lambda r: r.key,
        executor=executor,
        concurrency=concurrency,
    )


def test_results_are_appended_once_in_item_order_and_reported(tmp_path: Path) -> None:
    runner = _runner(tmp_path / "results.jsonl", LocalExecutor(), concurrency=4)
    runner.resume(False)
    seen: list[str] = []
    out = runner.run([3, 1, 2, 1], lambda i: Rec(key=str(i), value=i * 10), on_done=lambda r: seen.append(r.key))
    assert [r.value for r in out] == [30, 10, 20]  # the repeated item ran once and is listed once
    assert sorted(seen) == ["1", "2", "3"]
    lines = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert sorted(x["key"] for x in lines) == ["1", "2", "3"]


def test_resume_skips_done_items_and_a_fresh_run_starts_over(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    first = _runner(path)
    first.resume(False)
    first.run([1, 2], lambda i: Rec(key=str(i), value=i))
    ran: list[int] = []

    def work(i: int) -> Rec:
        ran.append(i)
        return Rec(key=str(i), value=i)

    again = _runner(path)
    again.resume(True)
    assert again.pending([1, 2, 3]) == [3]
    assert [r.value for r in again.run([1, 2, 3], work)] == [1, 2, 3]
    assert ran == [3]
    fresh = _runner(path)
    fresh.resume(False)
    assert not path.exists() and fresh.pending([1, 2]) == [1, 2]


def test_a_result_seen_twice_is_logged_once(tmp_path: Path) -> None:
    class Twice:  # an executor that hands one item's result back twice (a rerun after a lost node)
        name, remote = "twice", False

        def map_batches(self, fn: Callable[[Any], Any], items: Sequence[Any], concurrency: int) -> Iterator[Any]:
            for item in items:
                yield [fn(item), fn(item)]  # twice in one batch
                yield [fn(item)]  # and again in the next

        def close(self) -> None:
            return None

    runner = _runner(tmp_path / "results.jsonl", Twice())
    runner.resume(False)
    done: list[str] = []
    runner.run([1, 2], lambda i: Rec(key=str(i), value=i), on_done=lambda r: done.append(r.key))
    assert done == ["1", "2"]
    assert len((tmp_path / "results.jsonl").read_text().splitlines()) == 2


class LosesEven:
    """An executor whose workers die on every even item, retries and all (``Lost``), like Ray's after max_retries."""

    name, remote = "loses-even", True

    def map_batches(self, fn: Callable[[Any], Any], items: Sequence[Any], concurrency: int) -> Iterator[Any]:
        for i in range(len(items)):
            item = items[i]
            yield [Lost(i, "its worker died 2 time(s); retries ran out") if item % 2 == 0 else fn(item)]

    def close(self) -> None:
        return None


def test_an_item_lost_for_good_is_logged_as_its_error_and_the_others_go_on(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    runner = _runner(path, LosesEven())
    runner.resume(True)
    runner.run([1], lambda i: Rec(key=str(i), value=i))  # done before: not sent again
    done: list[str] = []
    out = runner.run(
        [1, 2, 3, 4, 5],
        lambda i: Rec(key=str(i), value=i),
        lost=lambda i, why: Rec(key=str(i), value=-1, path=why),
        on_done=lambda r: done.append(r.key),
    )
    assert [(r.key, r.value) for r in out] == [("1", 1), ("2", -1), ("3", 3), ("4", -1), ("5", 5)]
    assert done == ["2", "3", "4", "5"]
    assert "retries ran out" in out[1].path
    assert sorted(json.loads(x)["key"] for x in path.read_text().splitlines()) == ["1", "2", "3", "4", "5"]


def test_an_item_lost_without_a_lost_handler_stops_the_run(tmp_path: Path) -> None:
    runner = _runner(tmp_path / "results.jsonl", LosesEven())
    runner.resume(False)
    with pytest.raises(ExecutorError, match=r"^2: its worker died .* resume the run"):
        runner.run([1, 2, 3], lambda i: Rec(key=str(i), value=i))
    assert runner.pending([1, 2, 3]) == [2, 3]


def test_a_crash_mid_run_keeps_what_finished(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    runner = _runner(path)
    runner.resume(False)

    def work(i: int) -> Rec:
        if i == 3:
            raise RuntimeError("driver lost")
        return Rec(key=str(i), value=i)

    with pytest.raises(RuntimeError):
        runner.run([1, 2, 3], work)
    resumed = _runner(path)
    resumed.resume(True)
    assert resumed.pending([1, 2, 3]) == [3]


def test_local_executor_runs_items_concurrently() -> None:
    barrier = threading.Barrier(3, timeout=5)  # only passes when three items run at once

    def work(i: int) -> int:
        barrier.wait()
        return i

    assert sorted(LocalExecutor().map_unordered(work, [1, 2, 3], concurrency=3)) == [1, 2, 3]


def test_after_an_error_items_not_started_are_not_run() -> None:
    ran: list[int] = []
    never = threading.Event()

    def work(i: int) -> int:
        ran.append(i)
        if i == 2:
            raise RuntimeError("boom")
        if i == 3:  # still running when the error reaches the caller (the one worker thread took it next)
            never.wait(2.0)
        return i

    with pytest.raises(RuntimeError, match="boom"):
        list(LocalExecutor().map_unordered(work, [1, 2, 3, 4, 5], concurrency=1))
    assert ran == [1, 2, 3]


def test_local_executor_hands_back_together_what_finished_together() -> None:
    go = threading.Event()

    def work(i: int) -> int:
        go.wait(5)  # all three finish while the caller is not taking results yet
        return i

    batches = LocalExecutor().map_batches(work, [1, 2, 3], concurrency=3)
    go.set()
    time.sleep(1.0)  # their done-callbacks run as they return
    assert sorted(next(batches)) == [1, 2, 3]
    assert list(batches) == []


def test_an_error_comes_after_the_results_that_finished_with_it() -> None:
    go = threading.Event()

    def work(i: int) -> int:
        go.wait(5)
        if i == 2:
            raise RuntimeError("boom")
        return i

    batches = LocalExecutor().map_batches(work, [1, 2, 3], concurrency=3)
    go.set()
    time.sleep(1.0)  # their done-callbacks run as they return
    assert sorted(next(batches)) == [1, 3]
    with pytest.raises(RuntimeError, match="boom"):
        next(batches)


class InBatches:
    """An executor that hands results back in fixed batches (as Ray does with what finished since the last wait)."""

    name, remote = "in-batches", False

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes

    def map_batches(self, fn: Callable[[Any], Any], items: Sequence[Any], concurrency: int) -> Iterator[Any]:
        done = 0
        for size in self.sizes:
            yield [fn(item) for item in items[done : done + size]]
            done += size

    def close(self) -> None:
        return None


def test_a_batch_of_results_costs_one_fsync_and_each_is_reported_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "results.jsonl"
    runner = _runner(path, InBatches([3, 1]))
    runner.resume(False)
    synced: list[int] = []  # lines on disk at each fsync of the log
    fsync = os.fsync

    def counting(fd: int) -> None:
        fsync(fd)
        if path.exists():
            synced.append(len(path.read_text().splitlines()))

    monkeypatch.setattr(os, "fsync", counting)
    reported: list[tuple[str, int]] = []
    runner.run(
        [1, 2, 3, 4],
        lambda i: Rec(key=str(i), value=i),
        on_done=lambda r: reported.append((r.key, len(path.read_text().splitlines()))),
    )
    assert synced == [3, 3, 4]  # the batch of 3, the new file's dir, then the batch of 1
    assert reported == [("1", 3), ("2", 3), ("3", 3), ("4", 4)]  # each on disk before it is reported


def test_a_result_that_cannot_land_keeps_those_before_it_in_its_batch(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    runner = _runner(path, InBatches([3]))
    runner.resume(False)

    def land(r: Rec) -> Rec:
        if r.key == "2":
            raise OSError("disk full")
        return r

    done: list[str] = []
    with pytest.raises(OSError, match="disk full"):
        runner.run([1, 2, 3], lambda i: Rec(key=str(i), value=i), land=land, on_done=lambda r: done.append(r.key))
    assert done == ["1"]
    resumed = _runner(path)
    resumed.resume(True)
    assert resumed.pending([1, 2, 3]) == [2, 3]


def _write_output(input_dir: Path, output_dir: Path, extra: str) -> Rec:
    text = (input_dir / "in.txt").read_text()
    (output_dir / "nested").mkdir()
    (output_dir / "nested" / "out.txt").write_text(text.upper() + extra)
    return Rec(key=input_dir.name, value=len(text), path=str(output_dir / "nested" / "out.txt"))


def test_portable_work_runs_in_scratch_and_the_driver_lands_the_output(tmp_path: Path) -> None:
    task = tmp_path / "task-a"
    task.mkdir()
    (task / "in.txt").write_text("hello")
    out_dir = tmp_path / "run" / "trials" / "task-a__1"
    job = ship("task-a#1", task, out_dir, "!")
    delivery = PortableWork(_write_output)(job)
    assert isinstance(delivery, Delivery)
    assert not out_dir.exists()  # the worker wrote nothing into the run dir
    rec = delivery.land(Rec)
    assert rec.path == str(out_dir / "nested" / "out.txt")  # scratch paths turned into the driver's
    assert (out_dir / "nested" / "out.txt").read_text() == "HELLO!"


def test_scratch_dirs_of_workers_that_died_are_swept(tmp_path: Path) -> None:
    import subprocess
    import sys

    from autoenvscaling.execution.portable import SCRATCH_PREFIX, sweep_scratch

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f"{SCRATCH_PREFIX}{int(dead.stdout)}-abc"  # its worker was killed mid-task
    mine = tmp_path / f"{SCRATCH_PREFIX}{os.getpid()}-def"  # a task of this process, under way
    unnamed = tmp_path / f"{SCRATCH_PREFIX}xyz"  # an older scratch dir without a pid: not ours to judge
    for d in (stale, mine, unnamed):
        (d / "in").mkdir(parents=True)
    assert sweep_scratch(str(tmp_path)) == [stale]
    assert not stale.exists() and mine.is_dir() and unnamed.is_dir()
    assert sweep_scratch(str(tmp_path)) == []


def test_ray_executor_without_ray_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    real = importlib.import_module

    def no_ray(name: str, package: str | None = None) -> Any:
        if name == "ray":
            raise ImportError("No module named 'ray'")
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", no_ray)
    with pytest.raises(UserInputError, match=r"autoenvscaling\[ray\]"):
        get_executor(ExecutorConfig(kind="ray"))
    assert isinstance(executors.get_executor(ExecutorConfig()), LocalExecutor)


def test_unpacking_stays_inside_its_directory(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "f.txt").write_text("x")
    (src / "inside").symlink_to("sub/f.txt")
    (src / "outside").symlink_to("/etc/passwd")
    dest = tmp_path / "dest"
    unpack_dir(pack_dir(src), dest)
    assert (dest / "sub" / "f.txt").read_text() == "x" and (dest / "inside").read_text() == "x"
    assert not (dest / "outside").exists() and not (dest / "outside").is_symlink()  # a link out is left out
    with pytest.raises(ValueError, match="leaves its directory"):
        unpack_dir((("../evil", "f", 0o644, b"x"),), dest)
    (dest / "link").symlink_to(tmp_path)
    with pytest.raises(ValueError, match="goes through a link"):
        unpack_dir((("link/evil", "f", 0o644, b"x"),), dest)
    assert not (tmp_path / "evil").exists()
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    (dest / "f.txt").symlink_to(outside)
    unpack_dir((("f.txt", "f", 0o644, b"new"),), dest)
    assert outside.read_text() == "keep" and not (dest / "f.txt").is_symlink()
    assert (dest / "f.txt").read_text() == "new"


def test_a_ray_task_runs_one_item_until_every_slot_has_64_ahead_then_up_to_8() -> None:
    from autoenvscaling.execution.ray_executor import items_per_task

    assert items_per_task(None, 10, 8.0) == 1
    assert items_per_task(None, 63 * 8, 8.0) == 1
    assert items_per_task(None, 64 * 8, 8.0) == 2
    assert items_per_task(None, 10_000, 8.0) == 8
    assert items_per_task(None, 10_000, 0.0) == 8  # no slot known yet: counted as one
    assert items_per_task(3, 10, 8.0) == 3  # a configured size wins
