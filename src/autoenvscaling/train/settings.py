"""What a training run does: the ``[train]`` keys of a flywheel config, also usable on their own."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from autoenvscaling.train.environment import RolloutSettings

TrainerKind = Literal["trl-grpo", "sft"]


class TrainSettings(BaseModel):
    """Base model, LoRA, and the GRPO / SFT knobs. Defaults fit the CPU proof (0.5B, two steps)."""

    model_config = ConfigDict(extra="forbid")

    base_model: str = Field(
        default="",
        description="'embedded:0.5b' | 'embedded:1.5b' | a .gguf file | a local HF model dir | 'tiny' (a random "
        "test model); empty: the solver's own model (its base and adapter when it is already a trained one)",
    )
    dtype: Literal["auto", "float32", "bfloat16"] = Field(default="auto", description="auto: bf16 on a GPU, else fp32")
    lora_r: int = Field(default=16, ge=1)
    lora_alpha: int = Field(default=32, ge=1)
    lora_dropout: float = Field(default=0.0, ge=0, lt=1)
    lora_target_modules: list[str] = Field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"],
        description="module names, or ['all-linear']",
    )
    steps: int = Field(default=2, ge=1, description="optimizer steps (GRPO); SFT: at most this many, see sft_epochs")
    learning_rate: float = Field(default=5e-5, gt=0)
    seed: int = 0
    # GRPO
    prompts_per_step: int = Field(default=2, ge=1, description="environments per GRPO step")
    num_generations: int = Field(default=2, ge=2, description="rollouts per environment (the GRPO group)")
    max_tool_calling_iterations: int = Field(default=4, ge=1, description="bash calls per rollout, at most")
    max_completion_length: int = Field(default=256, ge=8, description="tokens of one rollout's turns and outputs")
    temperature: float = Field(default=1.0, gt=0)
    beta: float = Field(default=0.0, ge=0, description="KL weight (0: no reference model, as TRL's default)")
    bare_json_tool_calls: bool = Field(
        default=True,
        description="also read tool calls written as bare or fenced JSON, not only in the chat template's "
        "<tool_call> tags (small Qwen2.5-Coder models write them so; see train/toolcalls.py)",
    )
    use_vllm: bool = Field(default=False, description="generate with vLLM in colocate mode (a GPU)")
    vllm_gpu_memory_utilization: float = Field(default=0.35, gt=0, le=1)
    rollout: RolloutSettings = Field(default_factory=RolloutSettings)
    # SFT
    sft_epochs: float = Field(default=1.0, gt=0)
    sft_max_length: int = Field(default=4096, ge=64)
    batch_size: int = Field(default=1, ge=1, description="SFT examples per device step")
