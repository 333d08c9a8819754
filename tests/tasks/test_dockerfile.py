"""The small Dockerfile parser lint relies on."""

from __future__ import annotations

from autoenvscaling.tasks.dockerfile import (
    copy_sources,
    external_bases,
    final_stage_sets_workdir,
    parse_instructions,
    parse_stages,
)


def test_continuations_and_comments() -> None:
    text = "# c\nFROM a\n\nRUN apt-get update && \\\n    # inner comment\n    apt-get install -y x\ncopy a b\n"
    got = [(i.keyword, i.args, i.line) for i in parse_instructions(text)]
    assert got == [
        ("FROM", "a", 2),
        ("RUN", "apt-get update &&  apt-get install -y x", 4),
        ("COPY", "a b", 7),
    ]


def test_stages_args_and_external_bases() -> None:
    text = "ARG V=3.12\nFROM --platform=linux/amd64 py:${V} AS build\nFROM build\nFROM other:1\n"
    stages = parse_stages(text)
    assert [(s.base, s.name, s.line) for s in stages] == [
        ("py:3.12", "build", 2),
        ("build", None, 3),
        ("other:1", None, 4),
    ]
    assert [s.base for s in external_bases(stages)] == ["py:3.12", "other:1"]


def test_final_stage_workdir() -> None:
    assert final_stage_sets_workdir(parse_stages("FROM a\nWORKDIR /app\n"))
    assert not final_stage_sets_workdir(parse_stages("FROM a AS x\nWORKDIR /app\nFROM a\n"))
    assert final_stage_sets_workdir(parse_stages("FROM a AS x\nWORKDIR /app\nFROM x\n"))
    assert not final_stage_sets_workdir([])


def test_copy_sources() -> None:
    def sources(line: str) -> list[str]:
        return copy_sources(parse_instructions(line)[0])

    assert sources("COPY a b /dst/") == ["a", "b"]
    assert sources("ADD --chown=1:1 'my file' /dst") == ["my file"]
    assert sources('COPY ["a b", "c", "/dst"]') == ["a b", "c"]
    assert sources('COPY --chmod=755 ["x", "/d"]') == ["x"]
    assert sources("COPY --from=build /tests /opt") == []
    assert sources("COPY <<EOF /app/x\n") == []
    assert sources("RUN cp tests /x") == []
