"""Load a script of ``benchmarks/`` as a module, so tests can call its functions."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_bench(name: str) -> ModuleType:
    """``benchmarks/NAME.py`` as the module ``NAME_bench`` (registered in ``sys.modules``: pydantic resolves a
    module's annotations through it)."""
    spec = importlib.util.spec_from_file_location(f"{name}_bench", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
