"""Domain packs: each loads from package data, names a catalog image, and has >= 2 clean example tasks."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from autoenvscaling.errors import UserInputError
from autoenvscaling.images.catalog import catalog_names
from autoenvscaling.roles.proposer.domain import DomainContext, domain_context
from autoenvscaling.roles.proposer.packs import DomainPack, list_packs, load_pack, pack_names
from autoenvscaling.tasks import lint_task, load_task
from autoenvscaling.validate.validator import ValidationConfig

REPO_ROOT = Path(__file__).resolve().parents[2]
DOMAINS = ["computer-use", "gpu-kernel", "professional", "swe", "terminal"]


def test_packaged_domains() -> None:
    assert pack_names() == DOMAINS
    assert [p.name for p in list_packs()] == DOMAINS
    assert resources.files("autoenvscaling.roles.proposer").joinpath("domains").is_dir()


@pytest.mark.parametrize("name", DOMAINS)
def test_pack_loads_with_catalog_image_and_guide(name: str) -> None:
    pack = load_pack(name)
    assert pack.name == name and pack.description
    assert pack.image in catalog_names()
    # The guide is written for a small model: it must spell out the FROM line and the reward file.
    assert f"FROM {pack.image}" in pack.guide
    assert "/logs/verifier/reward.txt" in pack.guide
    assert 40 <= len(pack.guide.splitlines()) <= 140


@pytest.mark.parametrize("name", DOMAINS)
def test_pack_examples_are_clean_valid_tasks(name: str) -> None:
    pack = load_pack(name)
    examples = pack.examples(REPO_ROOT)
    assert pack.examples_path(REPO_ROOT).is_dir()
    assert len(examples) >= 2, f"{name}: {examples}"
    for task_dir in examples:
        task = load_task(task_dir)
        assert task.config.metadata.get("expected_verdict") == "valid", task_dir
        findings = lint_task(task_dir, known_images=catalog_names())
        errors = [f for f in findings if f.severity == "error" or f.rule == "uncataloged-base-image"]
        assert errors == [], f"{task_dir.name}: {errors}"


@pytest.mark.parametrize("name", DOMAINS)
def test_pack_validator_extras_apply(name: str) -> None:
    base = ValidationConfig()
    assert domain_context(name).validation(base) == base.model_copy(update=load_pack(name).validator_extras)


def test_an_unknown_validator_extra_is_an_error() -> None:
    ctx = DomainContext(name="x", validator_extras={"reference-guard": True, "repeats": 5})
    with pytest.raises(UserInputError, match="unknown validator extras reference-guard"):
        ctx.validation(ValidationConfig())
    assert DomainContext(name="x", validator_extras={"repeats": 5}).validation(ValidationConfig()).repeats == 5


def test_unknown_pack_lists_the_known_ones() -> None:
    with pytest.raises(UserInputError) as err:
        load_pack("spreadsheets")
    assert "'spreadsheets'" in str(err.value)
    for name in DOMAINS:
        assert name in str(err.value)


def test_examples_dir_absolute_or_missing(tmp_path: Path) -> None:
    def pack(examples_dir: str, **extra: object) -> DomainPack:
        data = {"name": "x", "description": "d", "image": "autoenv/terminal:latest", "examples_dir": examples_dir}
        return DomainPack.model_validate({**data, **extra})

    absolute = pack(str(REPO_ROOT / "examples" / "terminal"))
    assert absolute.examples(tmp_path) == load_pack("terminal").examples(REPO_ROOT)
    assert pack("no/such/dir").examples(tmp_path) == []
    assert pack(".", validator_extras={"repeats": 5}).validator_extras == {"repeats": 5}


def test_unknown_pack_field_is_rejected() -> None:
    with pytest.raises(ValueError):
        DomainPack.model_validate({"name": "x", "description": "d", "image": "i", "examples_dir": ".", "imgae": "typo"})


@pytest.mark.parametrize("name", DOMAINS)
def test_domain_context_reads_the_pack(name: str) -> None:
    ctx = domain_context(name)
    pack = load_pack(name)
    assert ctx.image == pack.image
    assert ctx.guide == pack.guide
    assert ctx.examples == pack.examples(REPO_ROOT)
    assert ctx.validator_extras == pack.validator_extras
