"""Writes the scripted flywheel's files from one description: the model replies (``replies.json``, a rules
script: see ``autoenvscaling.llm.scripted_rules``) and the tiny seed and held-out tasks under ``../tasks/``.

    python examples/flywheel/scripted/generate.py          # rewrite the files
    python examples/flywheel/scripted/generate.py --check  # exit 1 if they differ from what is written

The scripted proposer writes small bash-graded tasks; the scripted solver solves each one in some attempts
and not in others, so calibration sees every status: learnable (p = 1/2), too easy (p = 1), and a valid
near-duplicate that the pool rejects. Round 2 is told apart from round 1 by the solver digest it is shown.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TASKS_DIR = HERE.parent / "tasks"
DOCKERFILE = "FROM autoenv/terminal:latest\nWORKDIR /app\nCOPY {name} /app/{name}\n"
TEST_SH = (
    "#!/bin/bash\n"
    "# Writes the reward: 1 when {out} holds the expected answer, else 0.\n"
    "mkdir -p /logs/verifier\n"
    'if [ "$(tr -d \'[:space:]\' < {out} 2>/dev/null)" = "{expected}" ]; then\n'
    "  echo 1 > /logs/verifier/reward.txt\n"
    "else\n"
    "  echo 0 > /logs/verifier/reward.txt\n"
    "fi\n"
)
TASK_TOML = (
    'schema_version = "1.4"\n{artifacts}\n[task]\nname = "autoenv/{slug}"\ndescription = "{description}"\n\n'
    '[metadata]\ndifficulty = "easy"\ncategory = "terminal"\ntags = ["flywheel-demo"]\n{extra}\n'
    "[verifier]\ntimeout_sec = 60\n{verifier}\n[agent]\ntimeout_sec = 120\n\n"
    "[environment]\nbuild_timeout_sec = 300\ncpus = 1\nmemory_mb = 512\n"
)

# slug -> (description, data file, data, instruction, output file, expected, solution, wrong attempt)
TASKS: dict[str, tuple[str, str, str, str, str, str, str, str]] = {
    "count-error-lines": (
        "Count the ERROR lines of a log.", "app.log",
        "INFO start\nERROR disk full\nINFO retry\nERROR timeout\nWARN slow\nERROR crash\n",
        "The log file /app/app.log has one event per line.\n\n"
        "Count the lines that contain the word ERROR and write the count to /app/count.txt as a single number.\n",
        "/app/count.txt", "3", "grep -c ERROR /app/app.log > /app/count.txt", "wc -l < /app/app.log > /app/count.txt",
    ),
    "count-error-lines-v2": (  # same instruction and tests, other data: a near-duplicate of the first
        "Count the ERROR lines of a log.", "app.log",
        "ERROR boot\nINFO up\nERROR net\nINFO ok\nERROR disk\n",
        "The log file /app/app.log has one event per line.\n\n"
        "Count the lines that contain the word ERROR and write the count to /app/count.txt as a single number.\n",
        "/app/count.txt", "3", "grep -c ERROR /app/app.log > /app/count.txt", "wc -l < /app/app.log > /app/count.txt",
    ),
    "sum-numbers": (
        "Sum the integers of a file.", "numbers.txt", "3\n5\n7\n11\n",
        "The file /app/numbers.txt holds one integer per line.\n\n"
        "Write the sum of all the integers to /app/sum.txt, as a single line holding just the number.\n",
        "/app/sum.txt", "26", "awk '{s += $1} END {print s}' /app/numbers.txt > /app/sum.txt",
        "head -n 1 /app/numbers.txt > /app/sum.txt",
    ),
    "longest-word": (
        "Find the longest word of a list.", "words.txt", "pear\nbanana\nfig\napricot\nkiwi\n",
        "The file /app/words.txt holds one word per line.\n\n"
        "Write the longest word to /app/longest.txt (there is exactly one longest word).\n",
        "/app/longest.txt", "apricot",
        "awk 'length($0) > m {m = length($0); w = $0} END {print w}' /app/words.txt > /app/longest.txt",
        "head -n 1 /app/words.txt > /app/longest.txt",
    ),
    "seed-count-words": (
        "Count the words of a text.", "text.txt", "the quick brown fox\njumps over the lazy dog\n",
        "The file /app/text.txt holds a short text.\n\nWrite the number of words in it to /app/words.txt.\n",
        "/app/words.txt", "9", "wc -w < /app/text.txt > /app/words.txt", "wc -l < /app/text.txt > /app/words.txt",
    ),
    "heldout-reverse-lines": (
        "Reverse the order of lines.", "lines.txt", "one\ntwo\nthree\n",
        "The file /app/lines.txt holds three lines.\n\n"
        "Write its lines in reverse order to /app/reversed.txt, one per line.\n",
        "/app/reversed.txt", "threetwoone", "tac /app/lines.txt > /app/reversed.txt",
        "cp /app/lines.txt /app/reversed.txt",
    ),
}  # fmt: skip
SHIPPED_TASKS = ("seed-count-words", "heldout-reverse-lines")  # written as task dirs under ../tasks/
# How the scripted solver does on each task: "S" solves, "W" tries the wrong command; one variant per attempt.
SOLVER_PLAN = {
    "count-error-lines": "SW",
    "sum-numbers": "S",
    "longest-word": "SW",
    "seed-count-words": "W",
    "heldout-reverse-lines": "SW",
}


def bash(cmd: str, thought: str = "Next step.") -> str:
    return f"{thought}\n```bash\n{cmd}\n```"


SHIPPED_META = 'expected_verdict = "valid"\n'  # the shipped copies only: a proposal is not known valid
# The shipped copies grade in a separate verifier (a fresh container holding only the output), so an agent
# cannot reach the tests' process; the scripted proposer's drafts keep the shared default.
SHIPPED_ARTIFACTS = (
    '# The tests read only this file: a separate verifier gets it in a fresh container.\nartifacts = ["{out}"]\n'
)
SHIPPED_VERIFIER = 'environment_mode = "separate"\n'


def files(slug: str, *, shipped: bool = True) -> dict[str, str]:
    desc, data_name, data, instruction, out, expected, solution, _ = TASKS[slug]
    toml = TASK_TOML.format(
        slug=slug,
        description=desc,
        artifacts=SHIPPED_ARTIFACTS.format(out=out) if shipped else "",
        extra=SHIPPED_META if shipped else "",
        verifier=SHIPPED_VERIFIER if shipped else "",
    )
    return {
        "task.toml": toml,
        "instruction.md": instruction,
        "environment/Dockerfile": DOCKERFILE.format(name=data_name),
        f"environment/{data_name}": data,
        "solution/solve.sh": f"#!/bin/bash\nset -euo pipefail\n{solution}\n",
        "tests/test.sh": TEST_SH.format(out=out, expected=expected),
    }


def prompt_reply(slug: str) -> str:
    f = files(slug)
    data_name = TASKS[slug][1]
    return json.dumps(
        {
            "name": slug.removesuffix("-v2"),
            "description": TASKS[slug][0],
            "difficulty": "easy",
            "instruction": f["instruction.md"],
            "dockerfile": f["environment/Dockerfile"],
            "environment_files": [{"path": data_name, "content": f[f"environment/{data_name}"]}],
            "solve_sh": f["solution/solve.sh"],
            "test_sh": f["tests/test.sh"],
            "test_files": [],
        },
        indent=1,
    )


def workshop_write(slug: str) -> str:
    """One workshop command that turns the template draft into the task ``slug``."""
    t = "/workshop/task"
    parts = [f"rm -rf {t}/environment/* {t}/tests/* && mkdir -p {t}/environment {t}/solution {t}/tests"]
    for rel, text in files(slug, shipped=False).items():
        parts.append(f"cat > {t}/{rel} <<'EOF'\n{text}EOF")
    parts.append(f"chmod +x {t}/solution/solve.sh {t}/tests/test.sh")
    return "\n".join(parts)


def agentic_variant(slug: str) -> list[str]:
    return [
        bash(workshop_write(slug), f"I will write the {slug} task."),
        bash("try ls /app", "Look at the built image."),
        bash("check", "Check it."),
        "It passed.\n\nsubmit",
    ]


def solver_variants(slug: str) -> list[list[str]]:
    _, _, _, _, _, _, solution, wrong = TASKS[slug]
    return [[bash(solution if c == "S" else wrong, f"Attempt {i + 1}."), "Done.\n\nsubmit"]
            for i, c in enumerate(SOLVER_PLAN[slug])]  # fmt: skip


def replies() -> dict[str, object]:
    first_line = {slug: TASKS[slug][3].splitlines()[-1] for slug in SOLVER_PLAN}
    return {
        "rules": [
            # Round 2's prompt-only proposer sees the solver on round 1's environments in its digest.
            {"match": "(?s)^You write environments.*grep -c ERROR",
             "variants": [[prompt_reply("longest-word")], [prompt_reply("count-error-lines-v2")]]},
            {"match": "^You write environments",
             "variants": [[prompt_reply("count-error-lines")], [prompt_reply("sum-numbers")]]},
            {"match": "^You build environments",
             "variants": [agentic_variant("count-error-lines"), agentic_variant("sum-numbers")]},
            *({"match": re.escape(first_line[slug]), "variants": solver_variants(slug)} for slug in SOLVER_PLAN),
        ],
        # Anything else (e.g. the domain's example tasks as seeds): look around, then give up.
        "default": [bash("ls /app", "I will look around."), "I cannot solve this one.\n\nsubmit"],
    }  # fmt: skip


def outputs() -> dict[Path, str]:
    out = {HERE / "replies.json": json.dumps(replies(), indent=1) + "\n"}
    for slug in SHIPPED_TASKS:
        for rel, text in files(slug).items():
            out[TASKS_DIR / slug / rel] = text
    return out


def main() -> int:
    stale = [p for p, text in outputs().items() if not p.is_file() or p.read_text(encoding="utf-8") != text]
    if "--check" in sys.argv:
        for p in stale:
            print(f"stale: {p}")
        return 1 if stale else 0
    for p, text in outputs().items():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        if p.suffix == ".sh":
            p.chmod(0o755)
    print(f"wrote {len(outputs())} files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
