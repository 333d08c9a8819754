"""One GRPO step of the training stage on a GPU, with a model's architecture but random weights.

For a GPU machine that can receive neither the weights nor Docker images (a lent device with no network and a
small upload): the architecture (``config.json``) and the real tokenizer travel, the weights are drawn at random
on the GPU, and rollouts run in the fake sandbox. What it measures is the stage's mechanics on CUDA (bf16, LoRA,
gradient checkpointing, TRL's tool loop through our environment), the step time and the GPU memory peak of a
step of this shape. What it cannot measure is a reward: random weights make no tool call, so every rollout scores
0 and the loss is 0 (GRPO's advantages are all zero). The real recipe is ``scripts/train_gpu.sh``.

    python benchmarks/train_gpu_step.py --arch DIR --export benchmarks/train_tasks --out /tmp/step

``DIR`` holds ``config.json`` and the tokenizer files; make one from an installed GGUF with ``--write-arch``::

    python benchmarks/train_gpu_step.py --write-arch embedded:1.5b --arch /tmp/qwen-1.5b-arch
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

WEIGHTS = {".safetensors", ".bin", ".pt", ".gguf"}
FAKE = "autoenvscaling.sandbox.fake_scored:ScoredFakeBackend"


def write_arch(spec: str, dest: Path) -> None:
    """``config.json`` and the tokenizer of an embedded GGUF model (or a .gguf path), without its weights."""
    from transformers import AutoConfig, AutoTokenizer

    from autoenvscaling.train.models import resolve_base

    gguf = Path(resolve_base(spec))
    AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name).save_pretrained(dest)
    AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name).save_pretrained(dest)


def random_base(arch: Path, dest: Path) -> int:
    """A model dir with ``arch``'s config and tokenizer and random bf16 weights; returns the parameter count."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(arch)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model.save_pretrained(dest)
    for f in arch.iterdir():  # the tokenizer's files; never weights that happen to lie there
        if f.is_file() and f.name != "config.json" and f.suffix not in WEIGHTS:
            shutil.copy(f, dest / f.name)
    n = sum(p.numel() for p in model.parameters())
    del model
    if device == "cuda":
        torch.cuda.empty_cache()
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", type=Path, required=True, help="dir with config.json and tokenizer files")
    ap.add_argument("--write-arch", metavar="SPEC", help="write --arch from embedded:SIZE or a .gguf, and exit")
    ap.add_argument("--export", type=Path, default=Path("benchmarks/train_tasks"), help="dir of task dirs")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--backend", default=FAKE)
    ap.add_argument("--prompts", type=int, default=4)
    ap.add_argument("--generations", type=int, default=4)
    ap.add_argument("--max-completion", type=int, default=2048)
    ap.add_argument("--iterations", type=int, default=10, help="max tool-calling iterations per rollout")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    if args.write_arch:
        write_arch(args.write_arch, args.arch)
        print(f"wrote {args.arch}")
        return 0

    import torch

    from autoenvscaling.train.job import TrainJob, run_job
    from autoenvscaling.train.rows import load_rows

    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    params = random_base(args.arch, args.out / "base")
    made = time.perf_counter() - started
    job = TrainJob(
        kind="trl-grpo", export_dir=str(args.export.resolve()), out_dir=str(args.out / "job"),
        base_model=str(args.out / "base"), backend=args.backend, run_id="train-gpu-step",
        settings={"steps": 1, "prompts_per_step": args.prompts, "num_generations": args.generations,
                  "max_completion_length": args.max_completion, "max_tool_calling_iterations": args.iterations,
                  "learning_rate": 1e-5, "lora_r": 32, "lora_alpha": 64, "lora_target_modules": ["all-linear"]},
    )  # fmt: skip
    result = run_job(job)
    step = result.log[-1] if result.log else None
    figures = {
        "arch": args.arch.name,
        "params": params,
        "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
        "rollouts": min(args.prompts, len(load_rows(args.export).rows)) * args.generations,
        "max_completion_length": args.max_completion,
        "random_weights_sec": round(made, 1),
        "trainer_wall_sec": round(result.wall_sec, 1),
        "step_time_sec": step.values.get("step_time") if step else None,
        "reward_mean": step.reward_mean if step else None,
        "loss": step.loss if step else None,
        "completion_tokens_mean": step.values.get("completions/mean_length") if step else None,
        "tool_calls_per_rollout": step.values.get("tools/call_frequency") if step else None,
        "gpu_peak_mb": result.gpu_peak_mb,
        "peak_rss_mb": result.peak_rss_mb,
    }
    print(json.dumps(figures, indent=1))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
