"""The run's backend wrapper: every sandbox carries the run id, behaves like the wrapped one, and is timed."""

from __future__ import annotations

import pytest

from autoenvscaling.flywheel import backend as backend_module
from autoenvscaling.flywheel.backend import RunBackend, _Timer
from autoenvscaling.sandbox.base import SandboxSpec
from autoenvscaling.sandbox.fake import FakeBackend


def test_sandboxes_are_labelled_started_by_with_and_timed() -> None:
    inner = FakeBackend()
    backend = RunBackend(inner, "flywheel-abc")
    with backend.create(SandboxSpec(image="autoenv/base:bookworm", run_id="validation")) as sb:
        assert sb.exec("echo hi").stdout == "hi\n"  # started by `with`, like the wrapped backend's sandboxes
    (made,) = inner.sandboxes
    assert made.spec.run_id == "flywheel-abc" and not made.running
    stats = backend.stats
    assert stats.calls == {"create": 1, "start": 1, "exec": 1, "stop": 1}
    assert stats.busy_sec <= stats.total_sec + 1e-9


def test_cleanup_always_means_this_run() -> None:
    inner = FakeBackend()
    backend = RunBackend(inner, "flywheel-abc")
    backend.create(SandboxSpec(image="autoenv/base:bookworm")).start()
    inner.create(SandboxSpec(image="autoenv/base:bookworm", run_id="other")).start()
    assert backend.cleanup("some-stage-dir-name", include_live=True) == 1
    assert [s.spec.run_id for s in inner.sandboxes if s.running] == ["other"]


def test_busy_time_is_the_union_of_overlapping_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([0.0, 1.0, 2.0, 3.0, 10.0, 11.0])
    monkeypatch.setattr(backend_module.time, "perf_counter", lambda: next(clock))
    timer = _Timer()
    a, b = timer.time("exec"), timer.time("start")
    a.__enter__()  # t=0
    b.__enter__()  # t=1, overlapping the first call
    a.__exit__(None, None, None)  # t=2
    b.__exit__(None, None, None)  # t=3
    with timer.time("stop"):  # t=10..11
        pass
    stats = timer.snapshot()
    assert stats.seconds == {"exec": 2.0, "start": 2.0, "stop": 1.0} and stats.total_sec == 5.0
    assert stats.busy_sec == 4.0  # [0, 3] and [10, 11]
