"""Every lint rule on a tiny task dir that breaks exactly that rule; a clean task has no findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoenvscaling.tasks.lint import lint_task
from autoenvscaling.tasks.lint_rules import RULES, Finding
from task_factory import DOCKERFILE, TASK_TOML, TEST_PY, TEST_SH, MakeTask

CATALOG = ["autoenv/base:bookworm", "autoenv/terminal:latest", "autoenv/python:latest"]


def rules(findings: list[Finding]) -> list[str]:
    return [f.rule for f in findings]


def only(findings: list[Finding], rule: str) -> list[Finding]:
    return [f for f in findings if f.rule == rule]


def test_clean_task_has_no_findings(make_task: MakeTask) -> None:
    assert lint_task(make_task(), known_images=CATALOG) == []


def test_findings_carry_the_rule_severity(make_task: MakeTask) -> None:
    root = make_task(files={"instruction.md": None, "tests/test.sh": "echo hi > /logs/verifier/reward.txt\n"})
    for f in lint_task(root):
        assert f.severity == RULES[f.rule]


@pytest.mark.parametrize(
    "toml",
    ["[task\n", '[verifier]\ntimeout_sec = "soon"\n', "schema_version = 1\n[[steps]]\nmin_reward = 1\n"],
)
def test_task_toml_invalid_is_the_only_finding(make_task: MakeTask, toml: str) -> None:
    root = make_task(files={"task.toml": toml, "instruction.md": None, "tests/test.sh": None})
    findings = lint_task(root)
    assert rules(findings) == ["task-toml-invalid"]
    assert findings[0].file == "task.toml"
    assert findings[0].severity == "error"


def test_task_toml_invalid_points_at_the_line(make_task: MakeTask) -> None:
    syntax = lint_task(make_task(name="a", files={"task.toml": 'schema_version = "1.4"\n[task\n'}))
    assert syntax[0].line == 2
    field = lint_task(make_task(name="b", files={"task.toml": '[agent]\nuser = "x"\ntimeout_sec = "no"\n'}))
    assert field[0].line == 3
    assert "agent.timeout_sec" in field[0].message


def test_missing_task_toml_or_dir(make_task: MakeTask, tmp_path: Path) -> None:
    assert rules(lint_task(make_task(files={"task.toml": None}))) == ["task-toml-invalid"]
    assert rules(lint_task(tmp_path / "nowhere")) == ["task-toml-invalid"]


def test_missing_and_empty_instruction(make_task: MakeTask) -> None:
    assert rules(lint_task(make_task(name="a", files={"instruction.md": None}))) == ["missing-instruction"]
    assert rules(lint_task(make_task(name="b", files={"instruction.md": " \n\n"}))) == ["empty-instruction"]


def test_missing_dockerfile(make_task: MakeTask) -> None:
    findings = lint_task(make_task(name="a", files={"environment/Dockerfile": None}))
    assert rules(findings) == ["missing-dockerfile"]
    assert findings[0].file == "environment/Dockerfile"
    # A prebuilt image replaces the Dockerfile.
    toml = TASK_TOML.replace("[environment]\n", '[environment]\ndocker_image = "autoenv/terminal:latest"\n')
    prebuilt = make_task(name="b", files={"environment/Dockerfile": None, "task.toml": toml})
    assert lint_task(prebuilt, known_images=CATALOG) == []


def test_missing_test_script_and_solution(make_task: MakeTask) -> None:
    assert rules(lint_task(make_task(name="a", files={"tests/test.sh": None}))) == ["missing-test-script"]
    assert rules(lint_task(make_task(name="b", files={"solution/solve.sh": None}))) == ["missing-solution"]


def test_missing_workdir(make_task: MakeTask) -> None:
    no_workdir = DOCKERFILE.replace("WORKDIR /app\n", "")
    findings = lint_task(make_task(name="a", files={"environment/Dockerfile": no_workdir}))
    assert rules(findings) == ["missing-workdir"]
    # [environment].workdir makes up for it.
    toml = TASK_TOML.replace("[environment]\n", '[environment]\nworkdir = "/app"\n')
    assert lint_task(make_task(name="b", files={"environment/Dockerfile": no_workdir, "task.toml": toml})) == []


def test_workdir_must_be_in_the_final_stage(make_task: MakeTask) -> None:
    builder_only = "FROM autoenv/python:latest AS build\nWORKDIR /src\nFROM autoenv/terminal:latest\n"
    inherited = "FROM autoenv/python:latest AS build\nWORKDIR /src\nFROM build\nRUN true\n"
    assert rules(lint_task(make_task(name="a", files={"environment/Dockerfile": builder_only}))) == ["missing-workdir"]
    assert lint_task(make_task(name="b", files={"environment/Dockerfile": inherited}), CATALOG) == []


@pytest.mark.parametrize(
    "line",
    [
        "COPY tests/ /tests/",
        "ADD ./tests /opt/t",
        "COPY test_outputs.py /app/",
        'COPY ["test_x.py", "/app/"]',
    ],
)
def test_dockerfile_copies_tests(make_task: MakeTask, line: str) -> None:
    findings = lint_task(make_task(files={"environment/Dockerfile": DOCKERFILE + line + "\n"}))
    assert rules(findings) == ["dockerfile-copies-tests"]
    assert findings[0].line == 4
    assert findings[0].file == "environment/Dockerfile"


def test_dockerfile_copies_tests_by_identical_file(make_task: MakeTask) -> None:
    root = make_task(files={"environment/checks.py": TEST_PY})
    findings = lint_task(root)
    assert rules(findings) == ["dockerfile-copies-tests"]
    assert findings[0].file == "environment/checks.py"
    assert "tests/test_outputs.py" in findings[0].message


@pytest.mark.parametrize(
    "files",
    [
        {"environment/Dockerfile": DOCKERFILE + "COPY solve.sh /opt/solve.sh\n"},
        {"environment/Dockerfile": DOCKERFILE + "COPY --chown=root solution /opt/s\n"},
        {"environment/helper.sh": "#!/bin/bash\ntr a-z A-Z < /app/input.txt > /app/output.txt\n"},
    ],
)
def test_dockerfile_copies_solution(make_task: MakeTask, files: dict[str, str | None]) -> None:
    assert rules(lint_task(make_task(files=files))) == ["dockerfile-copies-solution"]


def test_copy_from_another_stage_is_not_a_leak(make_task: MakeTask) -> None:
    dockerfile = "FROM autoenv/python:latest AS b\nRUN true\n" + DOCKERFILE + "COPY --from=b /tests /opt/x\n"
    assert lint_task(make_task(files={"environment/Dockerfile": dockerfile}), CATALOG) == []


def test_unknown_key_one_finding_per_key(make_task: MakeTask) -> None:
    toml = "colour = 1\n" + TASK_TOML.replace("[agent]\n", "[agent]\nspeed = 3\n")
    findings = lint_task(make_task(files={"task.toml": toml}))
    assert rules(findings) == ["unknown-key", "unknown-key"]
    assert {(f.message.split()[2], f.line) for f in findings} == {("colour", 1), ("agent.speed", 16)}


def test_relative_path_in_instruction(make_task: MakeTask) -> None:
    text = "Read `data.csv` and write ./out/x.csv.\nKeep /app/ok.txt, see https://x.org/a.txt and ~/b.txt.\n"
    findings = lint_task(make_task(files={"instruction.md": text}))
    assert rules(findings) == ["relative-path-in-instruction"] * 2
    assert [(f.line, f.message.split("'")[1]) for f in findings] == [(1, "data.csv"), (1, "./out/x.csv")]


def test_no_reward_write(make_task: MakeTask) -> None:
    script = "#!/bin/bash\npython3 -m pytest -q /tests/test_outputs.py > /logs/verifier/result.txt\n"
    findings = lint_task(make_task(files={"tests/test.sh": script}))
    assert rules(findings) == ["no-reward-write"]
    assert findings[0].file == "tests/test.sh"


def test_reward_written_by_a_helper_counts(make_task: MakeTask) -> None:
    files: dict[str, str | None] = {
        "tests/test.sh": "#!/bin/bash\npython3 /tests/grade.py\n",
        "tests/grade.py": "open('/logs/verifier/reward.json', 'w').write('{\"r\": 1}')\n",
    }
    assert lint_task(make_task(files=files)) == []


@pytest.mark.parametrize(
    "command",
    [
        "curl -LsSf https://astral.sh/uv/install.sh | sh",
        "wget -q http://x/y",
        "pip install pytest",
        "python3 -m pip install pytest",
        "apt-get install -y curl",
        "apt-get -qq install curl",
        "uvx pytest /tests",
        "uv run pytest",
        "npm install left-pad",
    ],
)
def test_grading_download(make_task: MakeTask, command: str) -> None:
    script = TEST_SH.replace("mkdir -p /logs/verifier\n", f"mkdir -p /logs/verifier\n{command}\n")
    findings = lint_task(make_task(files={"tests/test.sh": script}))
    assert rules(findings) == ["grading-download"]
    assert findings[0].line == 3


def test_commented_download_is_ignored(make_task: MakeTask) -> None:
    script = TEST_SH + "# curl https://example.com would be bad\n"
    assert lint_task(make_task(files={"tests/test.sh": script})) == []


def test_test_script_no_shebang(make_task: MakeTask) -> None:
    findings = lint_task(make_task(files={"tests/test.sh": TEST_SH.removeprefix("#!/bin/bash\n")}))
    assert rules(findings) == ["test-script-no-shebang"]


def test_uncataloged_base_image(make_task: MakeTask) -> None:
    dockerfile = "ARG BASE=python:3.12-slim\nFROM ${BASE} AS base\nFROM base\nWORKDIR /app\n"
    root = make_task(files={"environment/Dockerfile": dockerfile})
    findings = lint_task(root, known_images=CATALOG)
    assert rules(findings) == ["uncataloged-base-image"]
    assert findings[0].line == 2
    assert "python:3.12-slim" in findings[0].message
    assert lint_task(root) == []  # no catalog given: rule off


def test_untagged_catalog_image_counts_as_latest(make_task: MakeTask) -> None:
    dockerfile = DOCKERFILE.replace("autoenv/terminal:latest", "autoenv/terminal")
    assert lint_task(make_task(files={"environment/Dockerfile": dockerfile}), known_images=CATALOG) == []


def test_uncataloged_prebuilt_image(make_task: MakeTask) -> None:
    toml = TASK_TOML.replace("[environment]\n", '[environment]\ndocker_image = "alexgshaw/x:1"\n')
    root = make_task(files={"environment/Dockerfile": None, "task.toml": toml})
    findings = lint_task(root, known_images=CATALOG)
    assert rules(findings) == ["uncataloged-base-image"]
    assert findings[0].file == "task.toml"


MULTI = TASK_TOML + '\n[[steps]]\nname = "one"\n\n[[steps]]\nname = "two"\n'


def test_multi_step_task_is_clean(make_task: MakeTask) -> None:
    files: dict[str, str | None] = {
        "task.toml": MULTI,
        "instruction.md": None,
        "solution/solve.sh": None,
        "steps/one/instruction.md": "Write /app/a.txt.\n",
        "steps/one/solution/solve.sh": "#!/bin/bash\ntouch /app/a.txt\n",
        "steps/two/instruction.md": "Write /app/b.txt.\n",
        "steps/two/solution/solve.sh": "#!/bin/bash\ntouch /app/b.txt\n",
    }
    assert lint_task(make_task(files=files)) == []  # multi-step tasks run (verify/steps.py)


def test_multi_step_checks_each_step(make_task: MakeTask) -> None:
    files: dict[str, str | None] = {
        "task.toml": MULTI,
        "instruction.md": None,
        "tests/test.sh": None,
        "steps/one/instruction.md": "Write /app/a.txt.\n",
        "steps/one/tests/test.sh": TEST_SH,
    }
    findings = lint_task(make_task(files=files))
    got = sorted((f.rule, f.file) for f in findings)
    assert got == [
        ("missing-instruction", "steps/two/instruction.md"),
        ("missing-test-script", "steps/two/tests/test.sh"),
    ]


def test_unsupported_feature_warns(make_task: MakeTask) -> None:
    # More cases in test_support.py: each feature we refuse to run is a warning here, an error at run time.
    findings = only(
        lint_task(make_task(files={"environment/docker-compose.yaml": "services:\n  main: {privileged: true}\n"})),
        "unsupported-feature",
    )
    assert [(f.severity, f.file) for f in findings] == [("warning", "environment/docker-compose.yaml")]


def test_every_rule_is_covered_here() -> None:
    # Guard: a new rule id needs a test in this file.
    source = Path(__file__).read_text()
    assert [r for r in RULES if f'"{r}"' not in source] == []


def test_unreadable_files_do_not_raise(make_task: MakeTask) -> None:
    root = make_task(files={"tests/test.sh": None})
    (root / "tests" / "test.sh").write_bytes(b"\xff\xfe\x00binary")
    (root / "environment" / "blob.bin").write_bytes(b"\x00\x01")
    assert "no-reward-write" in rules(lint_task(root))


def test_unsafe_artifact_path_is_refused(make_task: MakeTask) -> None:
    toml = 'artifacts = ["/../../root/.ssh/authorized_keys"]\n' + TASK_TOML
    findings = lint_task(make_task(files={"task.toml": toml}))
    assert rules(findings) == ["unsafe-artifact-path", "task-toml-invalid"]
    assert "'..'" in findings[0].message


def test_host_env_reference_warns(make_task: MakeTask) -> None:
    toml = TASK_TOML + '\n[verifier.env]\nKEY = "${OPENAI_API_KEY}"\n'
    findings = only(lint_task(make_task(files={"task.toml": toml})), "host-env-reference")
    assert len(findings) == 1 and "--pass-env OPENAI_API_KEY" in findings[0].message


def test_shared_verifier_warns(make_task: MakeTask) -> None:
    # More cases in test_lint_shared_verifier.py; the factory's task opts out the way harbor lint allows.
    toml = TASK_TOML.split("\n[metadata.harbor.lint]")[0]
    findings = lint_task(make_task(files={"task.toml": toml}))
    assert [(f.rule, f.severity) for f in findings] == [("shared-verifier", "warning")]
