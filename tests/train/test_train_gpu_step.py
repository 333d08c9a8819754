"""``benchmarks/train_gpu_step.py`` on the CPU: random weights of a given architecture, one GRPO step in the fake
sandbox, and the figures it prints (here with the tiny model's architecture)."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from bench_module import load_bench

pytest.importorskip("trl")
pytestmark = [
    pytest.mark.filterwarnings("ignore::FutureWarning:(transformers|peft|trl)"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:(transformers|peft|trl|torch)"),
]

REPO = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    return load_bench("train_gpu_step")


def test_one_step_with_random_weights_of_an_architecture(tmp_path: Path) -> None:
    from autoenvscaling.train.tiny import tiny_model

    model, tokenizer = tiny_model()
    arch = tmp_path / "arch"
    model.save_pretrained(arch)  # weights beside the config must not become the base's weights
    tokenizer.save_pretrained(arch)
    figures_path = tmp_path / "step.json"
    argv = ["--arch", str(arch), "--export", str(REPO / "benchmarks" / "train_tasks"), "--out", str(tmp_path / "out"),
            "--prompts", "4", "--generations", "2", "--max-completion", "8", "--iterations", "1",
            "--json", str(figures_path)]  # fmt: skip
    assert _bench().main(argv) == 0
    figures = json.loads(figures_path.read_text())
    assert figures["rollouts"] == 4  # 2 environments there, 2 generations each
    assert figures["params"] == sum(p.numel() for p in model.parameters())
    assert figures["step_time_sec"] > 0 and figures["reward_mean"] == 0.0
    assert figures["gpu"] is None and figures["gpu_peak_mb"] is None
    base = tmp_path / "out" / "base"
    assert (base / "tokenizer.json").is_file()
    from safetensors.torch import load_file

    drawn = load_file(str(base / "model.safetensors"))
    saved = load_file(str(arch / "model.safetensors"))
    assert any(not drawn[k].float().equal(saved[k].float()) for k in saved if k in drawn)
    assert (tmp_path / "out" / "job" / "adapter" / "adapter_model.safetensors").is_file()
