#!/usr/bin/env bash
# The CPU proof: the embedded Qwen2.5-Coder-0.5B (its GGUF, dequantized by transformers, offline), a LoRA adapter,
# 2 GRPO steps (2 environments x 4 rollouts per step) in Docker, on the CPU.
# The default tasks (benchmarks/train_tasks/: write a fixed line, copy a file) are trivial on purpose: GRPO learns
# only from a group whose rewards differ, and the 0.5B model solves the flywheel's example tasks (count words,
# reverse lines; EXPORT=examples/flywheel/tasks) in none of its rollouts. The quality probes flag both as
# hackable (the instruction is the answer); they exercise the trainer, not a skill.
# Heavy for a 2-core machine (minutes, ~4 GB RAM): do not run it beside a benchmark.
# Prints the per-step log (loss, reward mean); result.json holds wall time and peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=${OUT:-runs/train-cpu-proof}
STEPS=${STEPS:-2}
EXPORT=${EXPORT:-benchmarks/train_tasks}
GENERATIONS=${GENERATIONS:-4}
mkdir -p "$OUT"
BASE=$("$PY" -c 'from autoenvscaling.train.models import resolve_base; print(resolve_base("embedded:0.5b"))')
cat > "$OUT/job.json" <<JSON
{"kind": "trl-grpo", "export_dir": "$(cd "$EXPORT" && pwd)", "out_dir": "$PWD/$OUT", "base_model": "$BASE",
 "run_id": "train-cpu-proof",
 "settings": {"steps": $STEPS, "prompts_per_step": 2, "num_generations": $GENERATIONS, "max_completion_length": 256,
              "max_tool_calling_iterations": 3, "learning_rate": 5e-5}}
JSON
started=$(date +%s)
"$PY" -m autoenvscaling.train "$OUT/job.json"
echo "wall: $(( $(date +%s) - started )) s (model load included)"
"$PY" - "$OUT/result.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
for s in r["log"]:
    print(f"step {s['step']}: loss={s['loss']} reward_mean={s['reward_mean']} reward_std={s['reward_std']} "
          f"tool_calls/rollout={s['values'].get('tools/call_frequency')} step_time={s['values'].get('step_time'):.0f}s")
print(f"trainer wall {r['wall_sec']:.0f} s, peak RSS {r['peak_rss_mb']:.0f} MB, adapter {r['adapter_dir']}")
from safetensors.torch import load_file  # LoRA B starts at zero: any non-zero B means the step moved the adapter
b = [t.abs().max().item() for k, t in load_file(r["adapter_dir"] + "/adapter_model.safetensors").items() if "lora_B" in k]
print(f"adapter changed: {max(b) > 0} (max |lora_B| = {max(b):.3g})")
PYEOF
