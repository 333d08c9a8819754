"""Generation yield: agentic proposer vs prompt-only baseline, same model, same seed trajectories, N per arm.

    .venv/bin/python benchmarks/generation_yield.py --model embedded --n 6 --domain terminal \\
        --from runs/solve-XXXX --out runs/yield-XXXX

    # a large model on a vLLM (or any OpenAI-compatible) endpoint:
    .venv/bin/python benchmarks/generation_yield.py --model Qwen/Qwen3-32B --base-url http://HOST:8000/v1 \\
        --n 50 --concurrency 8 --from runs/solve-XXXX --out runs/yield-qwen3-32b

Each arm is a full ``autoenv propose`` run (candidates validated by the pipeline, K=3 + nop + leakage,
independently of the proposer's own checks). Per arm: valid rate with a 95% Wilson interval, tokens (and cost,
when nonzero) per valid environment, wall time per valid environment (generation + validation), and a
histogram of rejection reasons. Writes OUT/yield.json and OUT/yield.png, and prints the agentic/prompt ratios.
The paper's claim to test: agentic valid rate >= 5x prompt-only, cost per valid environment <= 50%.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

from autoenvscaling.llm.config import open_model, parse_model_arg
from autoenvscaling.roles.proposer.config import ProposerConfig
from autoenvscaling.roles.proposer.domain import domain_context
from autoenvscaling.roles.proposer.records import Mode, ProposalRecord
from autoenvscaling.roles.proposer.run import ProposeConfig, ProposeRun
from autoenvscaling.sandbox.registry import get_backend
from autoenvscaling.validate.validator import ValidationConfig

ARMS: tuple[Mode, ...] = ("prompt", "agentic")
COLORS = {"prompt": "#999999", "agentic": "#3b7dd8"}


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a binomial proportion (sound at 0 and n, unlike the normal one)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, center - half), min(1.0, center + half)


def _per_valid(total: float, valid: int) -> float | None:
    return total / valid if valid else None


def arm_stats(records: list[ProposalRecord]) -> dict[str, Any]:
    n, valid = len(records), sum(r.is_valid for r in records)
    tokens = sum(r.generation.tokens for r in records)
    cost = sum(r.generation.cost_usd for r in records)
    wall = sum(r.generation.wall_sec + r.validation.wall_sec for r in records)
    lo, hi = wilson(valid, n)
    return {
        "n": n,
        "valid": valid,
        "valid_rate": valid / n if n else 0.0,
        "valid_rate_ci95": [lo, hi],
        "tokens": tokens,
        "tokens_per_valid": _per_valid(tokens, valid),
        "cost_usd": cost,
        "cost_per_valid_usd": _per_valid(cost, valid) if cost > 0 else None,
        "wall_sec": wall,
        "generation_wall_sec": sum(r.generation.wall_sec for r in records),
        "wall_per_valid_sec": _per_valid(wall, valid),
        "verdicts": dict(Counter(r.verdict for r in records)),
        "rejection_reasons": dict(Counter(c for r in records if not r.is_valid for c in r.failed_checks)),
        "mean_turns": sum(r.generation.turns for r in records) / n if n else 0.0,
        "mean_checks": sum(r.generation.checks_used for r in records) / n if n else 0.0,
    }


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def ratios(agentic: dict[str, Any], prompt: dict[str, Any]) -> dict[str, float | None]:
    keys = ("valid_rate", "tokens_per_valid", "cost_per_valid_usd", "wall_per_valid_sec")
    return {k: _ratio(agentic[k], prompt[k]) for k in keys}


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    arms = result["arms"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    names = list(arms)
    rates = [arms[a]["valid_rate"] for a in names]
    errs = [
        [r - arms[a]["valid_rate_ci95"][0] for a, r in zip(names, rates, strict=True)],
        [arms[a]["valid_rate_ci95"][1] - r for a, r in zip(names, rates, strict=True)],
    ]
    left.bar(names, rates, yerr=errs, capsize=6, color=[COLORS.get(a, "#555555") for a in names])
    left.set_ylim(0, 1)
    left.set_ylabel("valid rate (95% Wilson CI)")
    left.set_title(f"valid environments, n={arms[names[0]]['n']} per arm")
    reasons = sorted({r for a in names for r in arms[a]["rejection_reasons"]})
    width = 0.8 / max(1, len(names))
    for i, a in enumerate(names):
        xs = [j + i * width for j in range(len(reasons))]
        counts = [arms[a]["rejection_reasons"].get(r, 0) for r in reasons]
        right.bar(xs, counts, width=width, label=a, color=COLORS.get(a, "#555555"))
    if not reasons:
        right.text(0.5, 0.5, "no rejections", ha="center", va="center", transform=right.transAxes)
    right.set_xticks([j + width * (len(names) - 1) / 2 for j in range(len(reasons))])
    right.set_xticklabels(reasons, rotation=45, ha="right", fontsize=8)
    right.set_title("rejection reasons")
    right.legend()
    fig.suptitle(f"generation yield: {result['model']} / {result['domain']}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="embedded")
    ap.add_argument("--base-url", default=None)
    ap.add_argument("--n", type=int, default=6, help="generations per arm")
    ap.add_argument("--domain", default="terminal")
    ap.add_argument("--from", dest="from_path", type=Path, default=None, help="solve run dir or trials dir")
    ap.add_argument("--out", type=Path, default=Path("runs/generation-yield"))
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--max-turns", type=int, default=25)
    ap.add_argument("--max-checks", type=int, default=4)
    ap.add_argument("--max-tokens", type=int, default=4096, help="completion tokens per call, both arms")
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--repeats", type=int, default=3, help="validation: reference-solution runs")
    ap.add_argument("--backend", default="docker")
    args = ap.parse_args()

    domain = domain_context(args.domain)
    base = parse_model_arg(args.model, base_url=args.base_url)
    mcfg = base.model_copy(
        update={
            "max_tokens": args.max_tokens,
            "temperature": args.temperature,
            "embedded_parallel": args.concurrency,
            "embedded_ctx": 32768,  # agentic episodes outgrow the default context of a slot
            # A long prompt on a busy CPU can take more than the default 600 s; a retry would start over.
            "timeout_sec": max(base.timeout_sec, 3600.0) if base.provider == "embedded" else base.timeout_sec,
        }
    )
    proposer = ProposerConfig(max_turns=args.max_turns, max_checks=args.max_checks)
    backend = get_backend(args.backend)
    arms: dict[str, dict[str, Any]] = {}
    with open_model(mcfg) as model:
        for mode in ARMS:
            config = ProposeConfig(
                mode=mode,
                n=args.n,
                concurrency=args.concurrency,
                from_path=args.from_path,
                proposer=proposer,
                validation=ValidationConfig(repeats=args.repeats),
            )
            print(f"[{mode}] {args.n} generations -> {args.out / mode}", flush=True)
            records = ProposeRun(args.out / mode, backend, model, domain, config).run(
                on_generated=lambda g: print(f"  {g.id}: {g.exit_reason}, {g.turns} turns", flush=True)
            )
            arms[mode] = arm_stats(records)
            print(f"  valid {arms[mode]['valid']}/{args.n}", flush=True)
    result = {
        "model": args.model,
        "domain": args.domain,
        "from": str(args.from_path) if args.from_path else None,
        "n_per_arm": args.n,
        "proposer": proposer.model_dump(mode="json"),
        "arms": arms,
        "ratios_agentic_over_prompt": ratios(arms["agentic"], arms["prompt"]),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "yield.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    try:
        plot(result, args.out / "yield.png")
    except ImportError:
        print("matplotlib is missing (pip install 'autoenvscaling[report]'): no plot")
    for arm, s in arms.items():
        lo, hi = s["valid_rate_ci95"]
        print(
            f"{arm:8s} valid {s['valid']}/{s['n']} = {s['valid_rate']:.2f} [{lo:.2f}, {hi:.2f}]  "
            f"tokens/valid {s['tokens_per_valid']}  wall/valid {s['wall_per_valid_sec']}  "
            f"rejections {s['rejection_reasons']}"
        )
    print("agentic / prompt:", json.dumps(result["ratios_agentic_over_prompt"]))
    print(f"wrote {args.out / 'yield.json'} and {args.out / 'yield.png'}")


if __name__ == "__main__":
    main()
