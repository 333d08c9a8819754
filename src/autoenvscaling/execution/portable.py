"""Work that runs where the driver's disk is not: inputs travel as archives, outputs come back for the driver.

The driver wraps its work in ``PortableWork`` and sends ``Shipment``s. On the worker, the input dir is unpacked
in a scratch dir under its own name, the work writes its output into a scratch copy of the output dir, and the
result comes back as JSON with every scratch path turned into the driver's path (in the output's ``*.json`` files
too), plus the output as an archive.
``Delivery.land`` (on the driver) writes the archive into the run dir and validates the record. So the driver
stays the only writer of the run dir whether or not the nodes share a filesystem.
"""

from __future__ import annotations

import io
import json
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel

R = TypeVar("R", bound=BaseModel)


def pack_dir(path: Path) -> bytes:
    """``path``'s contents as an uncompressed tar (paths relative to it; symlinks kept as links)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        if path.is_dir():
            for child in sorted(path.iterdir()):
                tar.add(child, arcname=child.name)
    return buf.getvalue()


def unpack_dir(data: bytes, dest: Path) -> None:
    """Extract an archive of ``pack_dir`` into ``dest`` (merged with what is there; no path leaves ``dest``)."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        tar.extractall(dest, filter="data")


def _json_str(path: Path | str) -> str:
    """``path`` as it appears inside a JSON string (escapes included)."""
    return json.dumps(str(path))[1:-1]


def _moved(text: str, moves: list[tuple[Path, str]]) -> str:
    """``text`` (JSON) with each scratch path replaced by the driver's path it stands for."""
    for scratch, real in moves:
        text = text.replace(_json_str(scratch), _json_str(real))
    return text


@dataclass(frozen=True)
class Shipment:
    """One item on its way to a worker: its input dir (driver path + archive) and the output dir it fills."""

    key: str
    input_dir: str
    input_tar: bytes
    output_dir: str
    extra: str = ""  # a small item-specific argument (an attempt number, ...)


@dataclass(frozen=True)
class Delivery(Generic[R]):
    """A worker's result: the record (driver paths) and the output dir's archive."""

    key: str
    record_json: str
    output_tar: bytes
    output_dir: str

    def land(self, model: type[R]) -> R:
        """Write the output into the run dir (driver side) and return the record."""
        unpack_dir(self.output_tar, Path(self.output_dir))
        return model.model_validate_json(self.record_json)


class PortableWork(Generic[R]):
    """Wraps ``fn(input_dir, output_dir, extra) -> record`` to run on ``Shipment``s in scratch dirs.

    ``fn`` must pickle (a module-level function or an object of importable classes) and must write nothing
    outside ``output_dir``.
    """

    def __init__(self, fn: Callable[[Path, Path, str], R]) -> None:
        self.fn = fn

    def __call__(self, job: Shipment) -> Delivery[R]:
        with tempfile.TemporaryDirectory(prefix="autoenv-work-") as scratch:
            root = Path(scratch)
            input_dir = root / "in" / Path(job.input_dir).name
            output_dir = root / "out" / Path(job.output_dir).name
            unpack_dir(job.input_tar, input_dir)
            output_dir.mkdir(parents=True)
            record = self.fn(input_dir, output_dir, job.extra)
            moves = [(input_dir, job.input_dir), (output_dir, job.output_dir)]
            for path in output_dir.rglob("*.json"):  # result.json records its task's and its own path
                if path.is_file() and not path.is_symlink():
                    path.write_text(_moved(path.read_text(encoding="utf-8"), moves), encoding="utf-8")
            text = _moved(record.model_dump_json(), moves)
            return Delivery(key=job.key, record_json=text, output_tar=pack_dir(output_dir), output_dir=job.output_dir)


def ship(key: str, input_dir: Path, output_dir: Path, extra: str = "") -> Shipment:
    return Shipment(
        key=key, input_dir=str(input_dir), input_tar=pack_dir(input_dir), output_dir=str(output_dir), extra=extra
    )
