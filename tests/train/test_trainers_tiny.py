"""One optimizer step of each trainer with the tiny random model (built here, nothing downloaded): GRPO through
the Docker environment on a real exported task, SFT on exported chat examples. Finite loss; SFT changes weights."""

from __future__ import annotations

import math
import uuid
from pathlib import Path

import pytest

from autoenvscaling.sandbox.base import SandboxBackend
from autoenvscaling.train.environment import RolloutSettings, TaskEnvFactory
from autoenvscaling.train.models import load_base, with_lora
from autoenvscaling.train.rows import load_rows
from autoenvscaling.train.settings import TrainSettings

pytest.importorskip("trl")
# Deprecation notices inside transformers/peft/trl are theirs to fix; ours still fail the test.
pytestmark = [
    pytest.mark.filterwarnings("ignore::FutureWarning:(transformers|peft|trl)"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:(transformers|peft|trl|torch)"),
]


def _settings(**kw: object) -> TrainSettings:
    return TrainSettings(base_model="tiny", steps=1, prompts_per_step=1, num_generations=2, max_completion_length=24,
                         max_tool_calling_iterations=2, lora_r=4, lora_alpha=8,
                         rollout=RolloutSettings(command_timeout_sec=10), **kw)  # type: ignore[arg-type]  # fmt: skip


@pytest.mark.docker
def test_one_grpo_step_in_docker(export_dir: Path, docker_backend: SandboxBackend, tmp_path: Path) -> None:
    from autoenvscaling.train.grpo import run_grpo

    settings = _settings()
    rows = load_rows(export_dir).rows
    model, tokenizer = load_base("tiny")
    policy = with_lora(model, settings)
    run_id = f"train-test-{uuid.uuid4().hex[:8]}"
    factory = TaskEnvFactory(docker_backend, tmp_path / "out" / "rollouts", run_id=run_id, settings=settings.rollout)
    result = run_grpo(settings, rows, tmp_path / "out", factory, model=policy, tokenizer=tokenizer, base_model="tiny")
    assert result.steps == 1 and len(result.log) == 1
    step = result.log[0]
    assert step.loss is not None and math.isfinite(step.loss)
    assert step.reward_mean is not None  # the environment's reward reached the trainer
    assert (Path(result.adapter_dir) / "adapter_config.json").is_file()
    trials = sorted((tmp_path / "out" / "rollouts").glob("*/result.json"))
    assert len(trials) >= 2  # the probe instance TRL makes at init never starts a rollout


def _oracle_example(path: Path) -> None:
    """An exported SFT line: the solver's successful tool-calling conversation on seed-count-words."""
    from autoenvscaling.export.chat import ChatFunction, ChatMessage, ChatToolCall, SftExample
    from autoenvscaling.llm.base import ToolSpec

    call = ChatToolCall(
        id="c1", function=ChatFunction(name="bash", arguments='{"command": "wc -w < text.txt > words.txt"}')
    )
    schema = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
    bash = ToolSpec(name="bash", description="Run a shell command.", parameters=schema)
    example = SftExample(
        messages=[
            ChatMessage(role="system", content="You work in a container."),
            ChatMessage(role="user", content="Count the words in /app/text.txt into /app/words.txt."),
            ChatMessage(role="assistant", content="", tool_calls=[call]),
            ChatMessage(role="tool", tool_call_id="c1", content="[exit code 0]"),
            ChatMessage(role="assistant", content="Done."),
        ],
        tools=[{"type": "function", "function": bash.model_dump()}],
    )
    path.write_text(example.to_json_line() * 2, encoding="utf-8")


def test_one_sft_step_changes_the_adapter(tmp_path: Path) -> None:
    import torch

    from autoenvscaling.train.sft import read_sft, run_sft, tokenize_examples

    settings = _settings()
    _oracle_example(tmp_path / "sft.jsonl")
    model, tokenizer = load_base("tiny")
    rows = tokenize_examples(read_sft(tmp_path / "sft.jsonl"), tokenizer, 4096)
    masked = [t for t, m in zip(rows[0]["input_ids"], rows[0]["assistant_masks"], strict=True) if m]
    assert "wc -w < text.txt" in tokenizer.decode(masked) and "Count the words" not in tokenizer.decode(masked)
    policy = with_lora(model, settings)
    before = {k: v.detach().clone() for k, v in policy.named_parameters() if "lora_" in k}
    result = run_sft(settings, tmp_path / "sft.jsonl", tmp_path / "out", model=policy, tokenizer=tokenizer,
                     base_model="tiny")  # fmt: skip
    assert result.steps == 1 and result.log[0].loss is not None and math.isfinite(result.log[0].loss)
    after = dict(policy.named_parameters())
    assert any(not torch.equal(before[k], after[k].detach()) for k in before)
    assert (Path(result.adapter_dir) / "adapter_model.safetensors").is_file()
