#!/usr/bin/env bash
# One-GPU recipe (H200-class): GRPO with LoRA on a round's exported environments, Qwen2.5-Coder 1.5B/7B from a
# local HF model dir, generation by vLLM in colocate mode (one process shares the GPU between vLLM and training).
# Not runnable on the CPU-only project machines; nothing in the test suite depends on it.
#
#   MODEL=/models/Qwen2.5-Coder-7B-Instruct EXPORT=runs/<run>/rounds/1/export scripts/train_gpu.sh
#
# The device check (fits in 8 minutes): STEPS=1 PROMPTS=4 on 4 exported environments; it prints the mean reward,
# the step time and the GPU memory peak. Environment: a venv with this package, vLLM, TRL and PEFT, e.g.
#   python -m venv .venv-gpu && .venv-gpu/bin/pip install -e . vllm "trl==1.16.0" peft datasets
# (vLLM brings the CUDA torch it was built for; do not install the `train` extra there, whose torch pin is the CPU
# build of the project machines.) Docker must run on the same host: rollouts execute in task containers.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv-gpu/bin/python}
MODEL=${MODEL:?set MODEL to a local Qwen2.5-Coder model dir}
EXPORT=${EXPORT:?set EXPORT to a round export dir (or any dir of Harbor task dirs)}
OUT=${OUT:-runs/train-gpu-$(date +%Y%m%d-%H%M%S)}
STEPS=${STEPS:-1}
PROMPTS=${PROMPTS:-4}
GENERATIONS=${GENERATIONS:-4}
mkdir -p "$OUT"
cat > "$OUT/job.json" <<JSON
{"kind": "trl-grpo", "export_dir": "$(realpath "$EXPORT")", "out_dir": "$(realpath "$OUT")",
 "base_model": "$(realpath "$MODEL")", "run_id": "train-gpu",
 "settings": {"steps": $STEPS, "prompts_per_step": $PROMPTS, "num_generations": $GENERATIONS,
              "max_completion_length": 2048, "max_tool_calling_iterations": 10, "learning_rate": 1e-5,
              "lora_r": 32, "lora_alpha": 64, "lora_target_modules": ["all-linear"], "dtype": "bfloat16",
              "use_vllm": true, "vllm_gpu_memory_utilization": 0.35}}
JSON
"$PY" -m autoenvscaling.train "$OUT/job.json"
"$PY" - "$OUT/result.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
for s in r["log"]:
    print(f"step {s['step']}: reward_mean={s['reward_mean']} loss={s['loss']} step_time={s['values'].get('step_time')}s")
print(f"GPU memory peak (torch): {r['gpu_peak_mb']} MB; trainer wall {r['wall_sec']:.0f} s")
PYEOF
