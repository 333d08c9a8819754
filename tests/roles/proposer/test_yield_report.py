"""``benchmarks/generation_yield.py``'s statistics: the Wilson interval's ends, and the cost per valid environment
with its 95% bounds, where a baseline without any valid environment still bounds the cost ratio."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[3] / "benchmarks" / "generation_yield.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generation_yield_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_wilson_interval_is_exact_at_its_ends(bench: ModuleType) -> None:
    assert bench.wilson(0, 11)[0] == 0.0 and bench.wilson(11, 11)[1] == 1.0
    lo, hi = bench.wilson(4, 11)
    assert lo == pytest.approx(0.152, abs=1e-3) and hi == pytest.approx(0.646, abs=1e-3)
    assert bench.wilson(0, 0) == (0.0, 1.0)


def test_cost_per_valid_bounds(bench: ModuleType) -> None:
    # 10 items cost $1: at a valid rate between 0.2 and 0.5, a valid one costs between $0.20 and $0.50
    assert bench.per_valid_interval(1.0, 10, 0.2, 0.5) == pytest.approx([0.2, 0.5])
    assert bench.per_valid_interval(1.0, 10, 0.0, 0.25) == [pytest.approx(0.4), None]  # no valid one: at least
    assert bench.per_valid_interval(0.0, 10, 0.1, 0.5) == [None, None]
