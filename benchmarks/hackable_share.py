"""Are the environments the flywheel accepts hackable? Counted across sessions and machines in one committed log.

The flywheel validates every generated environment with the rule probes (docs/quality-probes.md) and a probe
flag fails validation, so an accepted environment carries no flag by construction: the "0 hackable" among the
accepted in ``metrics.jsonl`` and ``autoenv pool status`` measures nothing. Two figures do:

* **the gate**: of the proposals the probes judged (every other check passed), how many they flagged, in the
  proposer's own check or in the validate stage: how often the proposer makes an environment that a solver could
  pass without doing the task, and the probes kept out;
* **the residual**: of the accepted environments, how many a check that did not gate them finds hackable:
  probes newer than the ones that accepted them (``--reprobe``: only checks the acceptance lacked count), or a
  person who reads the environment (``--audit`` shows it, ``--verdict`` records the judgement). Issue 12's target
  is a residual share under 2 %, which with none found takes about 190 audited environments.

A reader also says whether an environment is **misaligned** (``--verdict ID="misaligned: how"``): not hackable,
but its instruction asks for one thing and its tests check another ("filter out X" of a script that keeps X). The
rule probes cannot see that, and the alignment judge on the embedded model fails every criterion, so reading is
the count; the report gives the share among the environments read and how many of them calibration kept.

    python benchmarks/hackable_share.py --hours 2           # runs or resumes this code's flywheel; tallies each round
    python benchmarks/hackable_share.py --tally RUN_DIR --code REV  # another flywheel run, made by code REV
    python benchmarks/hackable_share.py --reprobe           # logged environments still on disk, current probes
    python benchmarks/hackable_share.py --audit             # the environments nobody has read yet
    python benchmarks/hackable_share.py --verdict ID=ok --verdict ID="hackable: how" --by NAME
    python benchmarks/hackable_share.py --report [--codes A,B]  # the figures (of these codes); runs nothing

``--report`` of the whole log (every command but ``--audit`` ends in one) rewrites ``LOG.summary.json``, the
committed figures; ``--codes`` only prints.

The run is ``autoenv flywheel run --config examples/flywheel/demo.toml rounds=20 counts.proposals=6`` in
``OUT/<code>/run-<i>`` (the flywheel resumes a run dir that holds a run; ``runs/`` is not kept between machines, so
elsewhere the same command starts anew). Each finished round adds a ``round`` line (the gate's counts) and an
``env`` line per accepted environment not logged yet (by content hash), with what a reader needs to judge it after
the run dir is gone: the instruction, ``solve.sh``, the heads of the expected outputs and the inputs.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from demo_series import append, flywheel_command, load_log
from generation_yield import code_version, wilson

from autoenvscaling.errors import AutoEnvError
from autoenvscaling.flywheel.accepted import accepted_environments
from autoenvscaling.flywheel.layout import RunPaths, read_output
from autoenvscaling.flywheel.records import ValidateOutput
from autoenvscaling.flywheel.rounds import Flywheel
from autoenvscaling.pool import Pool
from autoenvscaling.validate.report import HACKABLE_PREFIX, LEAK_ANSWER, ValidationReport, is_probe_check

REPO = Path(__file__).resolve().parents[1]
LOG = REPO / "benchmarks" / "logs" / "hackable-share.jsonl"
ROUNDS = 20  # a run's rounds; the next run starts in run-<i+1>
OVERRIDES = [f"rounds={ROUNDS}", "counts.proposals=6"]
TARGET = 0.02
_CAPS = {"instruction": 1500, "solve_sh": 800, "file": 400}


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# -- the gate ------------------------------------------------------------------------------------------------


def gate(out: ValidateOutput) -> dict[str, Any]:
    """A round's gate: the proposals the probes judged (the validate stage's probed ones, and those the proposer's
    own check failed on a probe before validation) and the flags they raised."""
    judged = flagged = 0
    flags: Counter[str] = Counter()
    for r in out.records:
        probe_flags = [c for c in r.failed_checks if is_probe_check(c)]
        brief = out.probes.get(f"{r.domain}/{r.id}")
        if brief is not None and brief.probed:
            probe_flags = sorted(set(probe_flags) | {f for f in brief.flags if is_probe_check(f)})
        elif not probe_flags:
            continue  # the probes never judged it: an earlier check failed, or no candidate
        judged += 1
        flagged += any(f.startswith(HACKABLE_PREFIX) for f in probe_flags)
        flags.update(probe_flags)
    return {"judged": judged, "hackable": flagged, "flags": dict(sorted(flags.items()))}


# -- accepted environments -------------------------------------------------------------------------------------


def _read(path: Path, cap: int) -> str:
    try:
        text = path.read_bytes()[: cap * 4].decode("utf-8", errors="replace")
    except OSError:
        return ""
    return text if len(text) <= cap else text[:cap] + "\n[...]"


def material(task_dir: Path) -> dict[str, Any]:
    """What a reader needs to judge an environment: instruction, solve.sh, expected outputs, inputs (heads)."""
    tests, env = task_dir / "tests", task_dir / "environment"
    expected = sorted(p for p in (tests / "expected").rglob("*") if p.is_file())[:3] if tests.is_dir() else []
    expected += [p for p in (tests / "expectations.json",) if p.is_file()]
    inputs = sorted(p for p in env.rglob("*") if p.is_file() and p.name != "Dockerfile")[:3] if env.is_dir() else []
    return {
        "instruction": _read(task_dir / "instruction.md", _CAPS["instruction"]),
        "solve_sh": _read(task_dir / "solution" / "solve.sh", _CAPS["solve_sh"]),
        "expected": {p.relative_to(task_dir).as_posix(): _read(p, _CAPS["file"]) for p in expected},
        "inputs": {p.relative_to(task_dir).as_posix(): _read(p, _CAPS["file"]) for p in inputs},
        "dockerfile": _read(env / "Dockerfile", _CAPS["file"]),
    }


def probe_set(report: ValidationReport | None) -> list[str]:
    """The probe checks a validation ran: its probe check ids and its exploits (``exploit:<name>``)."""
    if report is None or report.probes is None:
        return []
    checks = {c.id for c in report.checks if is_probe_check(c.id)}
    checks |= {f"exploit:{e.name}" for e in report.probes.exploits}
    return sorted(checks)


def run_key(paths: RunPaths) -> str | None:
    """The run's name and the time its first round's validation ended: one run, wherever its dir lies."""
    first = read_output(paths.stage_dir(1, "validate"), ValidateOutput)
    return None if first is None else f"{paths.root.name}@{first.finished_at:%Y-%m-%dT%H:%M:%S.%f}"


def tally(rdir: Path, code: str, log: Path) -> tuple[int, int]:
    """Adds the finished rounds and accepted environments of the run at ``rdir`` not logged yet; returns how many
    of each."""
    fw = Flywheel.open(rdir)
    key = run_key(fw.paths)
    if key is None:
        return 0, 0
    lines = load_log(log)
    rounds_done = {x["round"] for x in lines if x["kind"] == "round" and x["run"] == key}
    hashes = {x["content_hash"] for x in lines if x["kind"] == "env"}
    finished = metrics_lines(rdir)
    new_rounds = new_envs = 0
    for n in range(1, finished + 1):
        if n in rounds_done:
            continue
        out = read_output(fw.paths.stage_dir(n, "validate"), ValidateOutput)
        if out is None:
            continue
        append(log, {"kind": "round", "run": key, "round": n, "code": code, "date": now(),
                     "proposals": len(out.records), **gate(out)})  # fmt: skip
        new_rounds += 1
    accepted = [a for a in accepted_environments(fw.paths, fw.config) if a.round <= finished]
    with Pool.open(fw.config.pool or fw.paths.default_pool) as pool:
        for a in accepted:
            entry = pool.get(a.env_id)
            if entry.content_hash in hashes:
                continue
            report = entry.validation
            line = {
                "kind": "env", "env_id": entry.id, "content_hash": entry.content_hash, "run": key, "round": a.round,
                "code": code, "date": now(), "status": a.status, "pass_rate": a.pass_rate, "headline": a.headline,
                "path": str(entry.path), "probed": report is not None and report.probes is not None,
                "flags": list(report.probes.flags) if report and report.probes else [],
                "probe_set": probe_set(report), **material(entry.path),
            }  # fmt: skip
            append(log, line)
            hashes.add(entry.content_hash)
            new_envs += 1
    return new_rounds, new_envs


# -- audits ------------------------------------------------------------------------------------------------------


def audits(lines: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    by: dict[str, list[dict[str, Any]]] = {}
    for x in lines:
        if x["kind"] == "audit":
            by.setdefault(x["content_hash"], []).append(x)
    return by


VERDICTS = ("ok", "misaligned", "hackable")  # misaligned: not hackable, but its words and its tests disagree


def parse_verdict(text: str) -> tuple[str, str, str]:
    """``ID=ok``, ``ID=ok: a note``, ``ID=misaligned: how the words and the tests differ`` or
    ``ID=hackable: how`` -> (id, verdict, how or note)."""
    env, sep, said = text.partition("=")
    verdict, _, how = said.partition(":")
    verdict, how = verdict.strip(), how.strip()
    if not sep or not env.strip() or verdict not in VERDICTS or (verdict != "ok" and not how):
        raise ValueError(
            f"--verdict {text!r}: expected ID=ok, ID='ok: a note', ID='misaligned: how the instruction and the tests "
            "differ' or ID='hackable: how one passes without the task'"
        )
    return env.strip(), verdict, how


def record_verdicts(log: Path, verdicts: list[str], by: str) -> None:
    envs = [x for x in load_log(log) if x["kind"] == "env"]
    for text in verdicts:
        env_id, verdict, how = parse_verdict(text)
        match = [x for x in envs if x["env_id"].startswith(env_id)]
        if len(match) != 1:
            raise ValueError(f"--verdict {text!r}: {len(match)} logged environments have an id starting {env_id!r}")
        append(log, {"kind": "audit", "content_hash": match[0]["content_hash"], "env_id": match[0]["env_id"],
                     "method": "read", "by": by, "verdict": verdict, "how": how, "date": now()})  # fmt: skip
        print(f"{match[0]['env_id']}: {verdict}" + (f" ({how})" if how else ""))


def show_unaudited(lines: list[dict[str, Any]]) -> int:
    done = {h for h, xs in audits(lines).items() if any(a["method"] == "read" for a in xs)}
    todo = [x for x in lines if x["kind"] == "env" and x["content_hash"] not in done]
    for x in todo:
        print(
            f"\n{'=' * 100}\n{x['env_id']}  ({x['status']}, pass rate {x['pass_rate']}, code {x['code']}, {x['run']})"
        )
        print(f"--- instruction.md\n{x['instruction'].rstrip()}\n--- solution/solve.sh\n{x['solve_sh'].rstrip()}")
        for name, text in {**x["expected"], **x["inputs"]}.items():
            print(f"--- {name}\n{text.rstrip()}")
    print(
        f"\n{len(todo)} environment(s) not read yet; record each: --verdict ID=ok | ID='misaligned: how' "
        "| ID='hackable: how' (an environment can take both of the last two)"
    )
    return len(todo)


def reprobe(log: Path, code: str) -> None:
    """Validates each logged environment whose dir is still here with the current probes; an audit line where the
    probes ran a check that the acceptance lacked (the same checks again would only repeat the gate)."""
    from autoenvscaling.sandbox.registry import get_backend
    from autoenvscaling.validate.probes import GENERATED_PROBES
    from autoenvscaling.validate.run import ValidationRun
    from autoenvscaling.validate.validator import ValidationConfig

    lines = load_log(log)
    done = {(a["content_hash"], a.get("code")) for xs in audits(lines).values() for a in xs if a["method"] == "probes"}
    envs = [x for x in lines if x["kind"] == "env" and (x["content_hash"], code) not in done]
    here = [x for x in envs if Path(x["path"]).is_dir()]
    print(f"{len(here)} of {len(envs)} logged environment(s) not re-probed on {code} are on this machine")
    config = ValidationConfig(repeats=1, probes=GENERATED_PROBES)
    with tempfile.TemporaryDirectory() as tmp:
        for i, x in enumerate(here):
            (report,), _ = ValidationRun(Path(tmp) / str(i), get_backend("docker"), config).run([Path(x["path"])])
            new = sorted(set(probe_set(report)) - set(x["probe_set"]))
            flags = [c for c in report.failed_checks if is_probe_check(c)]
            if report.verdict.value == "error":
                print(f"{x['env_id']}: error ({report.error}); nothing recorded")
                continue
            if not new:
                print(f"{x['env_id']}: the probes that accepted it, nothing new; no audit")
                continue
            hackable = [f for f in flags if f.startswith(HACKABLE_PREFIX) or f == LEAK_ANSWER]
            append(log, {"kind": "audit", "content_hash": x["content_hash"], "env_id": x["env_id"],
                         "method": "probes", "code": code, "new_checks": new, "flags": flags,
                         "verdict": "hackable" if hackable else "ok", "how": ", ".join(hackable),
                         "date": now()})  # fmt: skip
            print(f"{x['env_id']}: {'HACKABLE ' + ', '.join(hackable) if hackable else 'ok'} (new: {', '.join(new)})")


# -- the report --------------------------------------------------------------------------------------------------


def needed(hackable: int, n: int, target: float = TARGET) -> int | None:
    """How many more audited environments, none of them hackable, bring the 95 % Wilson upper limit under
    ``target`` (None: more than 100 000)."""
    for extra in range(0, 100_000):
        if wilson(hackable, n + extra)[1] < target:
            return extra
    return None


def report(lines: list[dict[str, Any]]) -> dict[str, Any]:
    rounds = [x for x in lines if x["kind"] == "round"]
    envs = [x for x in lines if x["kind"] == "env"]
    judged, caught = sum(x["judged"] for x in rounds), sum(x["hackable"] for x in rounds)
    flags: Counter[str] = Counter()
    for x in rounds:
        flags.update(x["flags"])
    glo, ghi = wilson(caught, judged)
    by_audit = audits(lines)
    audited = [x for x in envs if x["content_hash"] in by_audit]
    bad = [x for x in audited if any(a["verdict"] == "hackable" for a in by_audit[x["content_hash"]])]
    rlo, rhi = wilson(len(bad), len(audited))

    def audited_by(method: str) -> list[dict[str, Any]]:
        return [x for x in audited if any(a["method"] == method for a in by_audit[x["content_hash"]])]

    read, reprobed = audited_by("read"), audited_by("probes")
    misaligned = [x for x in read if any(a["verdict"] == "misaligned" for a in by_audit[x["content_hash"]])]
    mlo, mhi = wilson(len(misaligned), len(read))
    trained = sum(1 for x in misaligned if x["status"] == "learnable")
    more = needed(len(bad), len(audited))
    flagged_at_acceptance = [x for x in envs if x["flags"]]
    codes = ", ".join(sorted({x["code"] for x in rounds}))
    print(f"runs: {len({x['run'] for x in rounds})}, rounds: {len(rounds)}, "
          f"proposals: {sum(x['proposals'] for x in rounds)}; codes: {codes}")  # fmt: skip
    print(
        f"the gate: the probes flagged {caught} of the {judged} proposals they judged as hackable"
        + (f" ({caught / judged:.1%}, 95% CI {glo:.1%}-{ghi:.1%})" if judged else "")
        + f"; flags: {dict(sorted(flags.items())) or 'none'}"
    )
    print(
        f"accepted environments logged: {len(envs)} ({sum(1 for x in envs if x['probed'])} probed when accepted, "
        f"{len(flagged_at_acceptance)} flagged then); audited: {len(audited)} "
        f"(read: {len(read)}, newer probes: {len(reprobed)})"
    )
    verdict = (
        "met" if audited and rhi < TARGET else f"open: about {more} more audited with none hackable"
    ) if more is not None else "open"  # fmt: skip
    print(
        f"the residual: {len(bad)} of {len(audited)} audited accepted environments hackable"
        + (f" ({len(bad) / len(audited):.1%}, 95% upper limit {rhi:.1%})" if audited else "")
        + f"; target < {TARGET:.0%}: {verdict}"
    )
    print(
        f"misaligned (read): {len(misaligned)} of {len(read)} read say one thing and test another"
        + (f" ({len(misaligned) / len(read):.1%}, 95% CI {mlo:.1%}-{mhi:.1%})" if read else "")
        + f"; {trained} of them calibrated learnable, the ones a training round takes"
    )
    print("\n| code | rounds | proposals judged | flagged hackable | accepted | audited | hackable | misaligned |")
    print("|---|---|---|---|---|---|---|---|")
    for code in sorted({x["code"] for x in rounds + envs}):
        rs, es = [x for x in rounds if x["code"] == code], [x for x in envs if x["code"] == code]
        aud = [x for x in audited if x["code"] == code]
        print(f"| {code} | {len(rs)} | {sum(x['judged'] for x in rs)} | {sum(x['hackable'] for x in rs)} | {len(es)} "
              f"| {len(aud)} | {sum(1 for x in bad if x['code'] == code)} "
              f"| {sum(1 for x in misaligned if x['code'] == code)} |")  # fmt: skip
    for x in bad:
        hows = "; ".join(
            f"{a['method']}: {a['how']}" for a in by_audit[x["content_hash"]] if a["verdict"] == "hackable"
        )
        print(f"  {x['env_id']} ({x['code']}): {x['headline'][:80]} -- {hows}")
    return {
        "rounds": len(rounds),
        "gate": {"judged": judged, "hackable": caught, "wilson95": [glo, ghi], "flags": dict(flags)},
        "accepted": len(envs),
        "audited": len(audited),
        "residual": {"hackable": len(bad), "wilson95": [rlo, rhi], "target": TARGET, "verdict": verdict},
        "misaligned": {"read": len(read), "misaligned": len(misaligned), "wilson95": [mlo, mhi], "learnable": trained},
    }


# -- the run -----------------------------------------------------------------------------------------------------


def tallied(counts: tuple[int, int]) -> None:
    print(f"tallied: {counts[0]} round(s), {counts[1]} environment(s)", flush=True)


def metrics_lines(rdir: Path) -> int:
    path = rdir / "metrics.jsonl"
    return len([ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]) if path.is_file() else 0


def next_run_dir(out: Path, code: str) -> Path:
    """This code's first run dir whose run has rounds left."""
    i = 0
    while metrics_lines(out / code / f"run-{i}") >= ROUNDS:
        i += 1
    return out / code / f"run-{i}"


def run(args: argparse.Namespace, code: str) -> int:
    rdir = next_run_dir(args.out, code)
    cmd = flywheel_command(args.config, rdir, [*OVERRIDES, *args.set])
    deadline = time.monotonic() + args.hours * 3600 if args.hours else None
    print(f"{'resuming' if cmd[4] == 'resume' else 'starting'} {rdir}" + (f" for {args.hours} h" if deadline else ""))
    proc = subprocess.Popen(cmd)
    seen, stopping = metrics_lines(rdir), False
    try:
        while proc.poll() is None:
            time.sleep(10)
            if metrics_lines(rdir) != seen:
                seen = metrics_lines(rdir)
                tallied(tally(rdir, code, args.log))
            if deadline and not stopping and time.monotonic() > deadline:
                print("time is up: the flywheel stops at its next step (the same command resumes it)", flush=True)
                proc.send_signal(signal.SIGINT)
                stopping = True
    except KeyboardInterrupt:  # the flywheel got the same Ctrl-C and stops in order: wait for it
        proc.wait()
    tallied(tally(rdir, code, args.log))
    return 0 if proc.returncode in (0, 130) or stopping else proc.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=float, default=None, help="stop the run after this long (default: all rounds)")
    ap.add_argument("--config", type=Path, default=REPO / "examples" / "flywheel" / "demo.toml")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a config override (repeatable)")
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "hackable-share", help="the runs' dirs")
    ap.add_argument("--log", type=Path, default=LOG)
    ap.add_argument("--tally", type=Path, metavar="RUN_DIR", help="log another flywheel run; runs nothing")
    ap.add_argument("--code", help="with --tally: the commit whose code made that run")
    ap.add_argument("--reprobe", action="store_true", help="re-probe the logged environments still on disk")
    ap.add_argument("--audit", action="store_true", help="print the environments nobody has read yet")
    ap.add_argument("--verdict", action="append", default=[], metavar="ID=ok|ID='misaligned: how'|ID='hackable: how'")
    ap.add_argument("--by", default="", help="with --verdict: who read them")
    ap.add_argument("--report", action="store_true", help="print the figures; run nothing")
    ap.add_argument("--codes", help="count only the lines of these codes (comma-separated; default: all)")
    args = ap.parse_args(argv)
    code = code_version()
    try:
        if args.tally:
            if not args.code:
                ap.error("--tally needs --code: the commit whose code made that run")
            if not (args.tally / "config.resolved.toml").is_file():
                ap.error(f"--tally {args.tally}: no flywheel run there")
            tallied(tally(args.tally.resolve(), args.code, args.log))
        elif args.verdict:
            if not args.by:
                ap.error("--verdict needs --by: who read the environments")
            record_verdicts(args.log, args.verdict, args.by)
        elif args.audit:
            show_unaudited(load_log(args.log))
            return 0
        elif args.reprobe:
            reprobe(args.log, code)
        elif not args.report:
            if code.endswith("-dirty") or code == "unknown":
                ap.error(f"the code is {code}: commit first, so every line names the code it ran")
            rc = run(args, code)
            if rc:
                return rc
    except (ValueError, AutoEnvError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    lines = load_log(args.log)
    if args.codes:
        keep = set(args.codes.split(","))
        lines = [x for x in lines if x["kind"] == "audit" or x["code"] in keep]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        figures = report(lines)
    if not args.codes:  # the committed summary is the whole log's; a report of some codes only prints
        summary = {"codes": "all", **figures}
        args.log.with_suffix(".summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    try:
        sys.stdout.write(printed.getvalue())
        sys.stdout.flush()
    except BrokenPipeError:  # `--report | head`: the reader left early; the summary is written already
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
