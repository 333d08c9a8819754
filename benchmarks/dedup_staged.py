"""How alike do the pool's near-duplicate texts make two staged environments? Replayed on the committed log.

Every staged environment holds the staged proposer's output grader verbatim (``tests/test_outputs.py``); the pool
leaves it out of the text it compares (``DedupConfig.leave_out``). This rebuilds each accepted environment of
``benchmarks/logs/hackable-share.jsonl`` as the staged proposer writes one (its instruction, ``tests/test.sh``,
the grader, ``expectations.json`` and the heads of its recorded outputs, as the log holds them), takes the
pool's text of each (``pool.dedup.task_text``) with the grader left out and, as the baseline in the same run,
with it in, and prints the exact Jaccard similarity of every pair's word shingles: how many pairs reach the
threshold, which the pool would call near-duplicates, and the pairs that still do without the grader.

    python benchmarks/dedup_staged.py [--log PATH]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

from autoenvscaling.pool.dedup import DedupConfig, shingles, task_text
from autoenvscaling.roles.proposer.novelty import harness_test_code
from autoenvscaling.roles.proposer.staged.render import TEST_SH

LOG = Path(__file__).resolve().parent / "logs" / "hackable-share.jsonl"


def write_env(root: Path, env: dict[str, Any]) -> Path:
    """The accepted environment as a task dir holding what the pool compares."""
    tests = root / "tests"
    (tests / "expected").mkdir(parents=True)
    (root / "instruction.md").write_text(env["instruction"], encoding="utf-8")
    (tests / "test.sh").write_text(TEST_SH, encoding="utf-8")
    (tests / "test_outputs.py").write_text(harness_test_code(), encoding="utf-8")
    rows = []
    for i, (path, head) in enumerate(env["expected"].items(), 1):
        name = f"{i}-{path.rsplit('/', 1)[-1]}"
        rows.append({"path": path, "expected": name, "compare": "exact"})  # the log keeps no compare mode
        (tests / "expected" / name).write_text(head, encoding="utf-8")
    (tests / "expectations.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return root


def pairs(texts: list[str], k: int) -> list[float]:
    sets = [shingles(t, k) for t in texts]
    return [len(a & b) / len(a | b) for a, b in itertools.combinations(sets, 2)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", type=Path, default=LOG)
    args = parser.parse_args()
    envs = [e for e in map(json.loads, args.log.read_text().splitlines()) if e["kind"] == "env" and e["expected"]]
    config = DedupConfig()
    with tempfile.TemporaryDirectory() as tmp:
        dirs = [write_env(Path(tmp) / e["content_hash"], e) for e in envs]
        kept = [task_text(d, leave_out=[]) for d in dirs]
        left = [task_text(d, leave_out=config.leave_out) for d in dirs]
    print(f"{len(envs)} accepted environments, {len(envs) * (len(envs) - 1) // 2} pairs, threshold {config.threshold}")
    for name, texts in (("grader compared (baseline)", kept), ("grader left out (the pool)", left)):
        sims = pairs(texts, config.shingle_k)
        near = sum(s >= config.threshold for s in sims)
        median, p90 = statistics.median(sims), statistics.quantiles(sims, n=10, method="inclusive")[-1]
        print(f"{name:28} near-duplicate pairs {near:5} ({near / len(sims):.1%}); median {median:.2f}, p90 {p90:.2f}")
    sets = [shingles(t, config.shingle_k) for t in left]
    for (i, a), (j, b) in itertools.combinations(enumerate(sets), 2):
        sim = len(a & b) / len(a | b)
        if sim >= config.threshold:
            same = "same outputs" if envs[i]["expected"] == envs[j]["expected"] else "other outputs"
            print(f"  {sim:.2f} {envs[i]['content_hash'][:8]} {envs[j]['content_hash'][:8]} ({same}): "
                  f"{envs[i]['instruction'][:60]!r} / {envs[j]['instruction'][:60]!r}")  # fmt: skip


if __name__ == "__main__":
    main()
