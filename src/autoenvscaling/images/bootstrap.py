"""Offline base images: debootstrap -> ``docker import``, then the catalog images on top.

Idempotent: every image carries a label with the hash of its inputs (suite, mirror, packages, the host CA
bundle, the Dockerfile text). ``bootstrap()`` skips an image whose label matches and rebuilds it otherwise.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import docker
import docker.errors
from pydantic import BaseModel

from autoenvscaling.errors import AutoEnvError
from autoenvscaling.images.catalog import BASE_IMAGE, CATALOG, DEBIAN_MIRROR, DEBIAN_SUITE, CatalogImage

INPUTS_LABEL = "autoenvscaling.inputs"
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
HOST_CA_DIR = Path("/usr/local/share/ca-certificates")
# Where the base image keeps the CA bundle; every TLS client we know of is pointed at it.
CA_ENV = {
    "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
    "REQUESTS_CA_BUNDLE": "/etc/ssl/certs/ca-certificates.crt",
    "PIP_CERT": "/etc/ssl/certs/ca-certificates.crt",
    "CURL_CA_BUNDLE": "/etc/ssl/certs/ca-certificates.crt",
}
BASE_ENV = {"LANG": "C.UTF-8", "DEBIAN_FRONTEND": "noninteractive", **CA_ENV}
_BASE_RECIPE_VERSION = "1"


class ImageBuildError(AutoEnvError):
    """A catalog image could not be built."""


class ImageStatus(BaseModel):
    name: str
    action: str  # "cached" | "built"
    seconds: float


Progress = Callable[[str], None]


def _client() -> docker.DockerClient:
    try:
        client = docker.from_env()
        client.ping()
    except docker.errors.DockerException as e:
        raise ImageBuildError(f"cannot reach the Docker engine ({e}); is dockerd running? try `docker info`") from None
    return client


def _ca_files() -> list[Path]:
    files = [HOST_CA_BUNDLE] if HOST_CA_BUNDLE.is_file() else []
    if HOST_CA_DIR.is_dir():
        files += sorted(p for p in HOST_CA_DIR.rglob("*.crt") if p.is_file())
    return files


def base_inputs_hash() -> str:
    h = hashlib.sha256(f"{_BASE_RECIPE_VERSION}|{DEBIAN_SUITE}|{DEBIAN_MIRROR}|{sorted(BASE_ENV.items())}".encode())
    for f in _ca_files():
        h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()[:16]


def catalog_dockerfile(img: CatalogImage) -> str:
    pkgs = " \\\n      ".join(img.apt_packages)
    lines = [
        f"FROM {img.parent}",
        "RUN apt-get update \\",
        f"  && apt-get install -y --no-install-recommends \\\n      {pkgs} \\",
        "  && update-ca-certificates \\",
        "  && rm -rf /var/lib/apt/lists/*",
        *img.extra_lines,
        f"WORKDIR {img.workdir}",
    ]
    return "\n".join(lines) + "\n"


def catalog_inputs_hash(img: CatalogImage, parent_hash: str) -> str:
    return hashlib.sha256(f"{parent_hash}|{catalog_dockerfile(img)}".encode()).hexdigest()[:16]


def _label_of(client: docker.DockerClient, name: str) -> str | None:
    try:
        image = client.images.get(name)
    except docker.errors.ImageNotFound:
        return None
    labels = image.labels or {}
    return labels.get(INPUTS_LABEL)


def _debootstrap(rootfs: Path, progress: Progress) -> None:
    if shutil.which("debootstrap") is None:
        raise ImageBuildError("debootstrap is not installed (apt-get install -y debootstrap)")
    progress(f"debootstrap {DEBIAN_SUITE} (minbase) from {DEBIAN_MIRROR}")
    cmd = ["debootstrap", "--variant=minbase", DEBIAN_SUITE, str(rootfs), DEBIAN_MIRROR]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-15:])
        raise ImageBuildError(f"debootstrap failed (exit {proc.returncode}):\n{tail}")


def _prepare_rootfs(rootfs: Path) -> None:
    (rootfs / "etc/apt/sources.list").write_text(
        f"deb {DEBIAN_MIRROR} {DEBIAN_SUITE} main\ndeb {DEBIAN_MIRROR} {DEBIAN_SUITE}-updates main\n"
    )
    (rootfs / "etc/apt/apt.conf.d/90autoenv").write_text(
        'APT::Install-Recommends "0";\nAPT::Install-Suggests "0";\nAcquire::Retries "3";\n'
    )
    # Keep the egress proxy's CA inside the image: the bundle now, and the source certs so that a later
    # `update-ca-certificates` (run by the ca-certificates package) keeps them.
    if HOST_CA_BUNDLE.is_file():
        dest = rootfs / "etc/ssl/certs"
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy2(HOST_CA_BUNDLE, dest / "ca-certificates.crt")
    if HOST_CA_DIR.is_dir():
        dest = rootfs / "usr/local/share/ca-certificates"
        dest.mkdir(parents=True, exist_ok=True)
        for f in HOST_CA_DIR.rglob("*.crt"):
            shutil.copy2(f, dest / f.name)
    for sub in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for p in (rootfs / sub).glob("*"):
            if p.is_file():
                p.unlink()


def build_base(client: docker.DockerClient, inputs: str, progress: Progress) -> None:
    with tempfile.TemporaryDirectory(prefix="autoenv-rootfs-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        _debootstrap(rootfs, progress)
        _prepare_rootfs(rootfs)
        progress(f"docker import -> {BASE_IMAGE}")
        changes = [f"ENV {k}={v}" for k, v in BASE_ENV.items()]
        changes += [f"LABEL {INPUTS_LABEL}={inputs}", "LABEL autoenvscaling=1", 'CMD ["bash"]', "WORKDIR /"]
        cmd = ["docker", "import"]
        for c in changes:
            cmd += ["--change", c]
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "--numeric-owner", "-c", "."], stdout=subprocess.PIPE)
        proc = subprocess.run([*cmd, "-", BASE_IMAGE], stdin=tar.stdout, capture_output=True, text=True, check=False)
        tar.wait()
        if proc.returncode != 0 or tar.returncode != 0:
            raise ImageBuildError(f"docker import failed: {proc.stderr.strip()}")


def build_catalog_image(client: docker.DockerClient, img: CatalogImage, inputs: str, progress: Progress) -> None:
    progress(f"docker build -> {img.name}")
    dockerfile = catalog_dockerfile(img) + f'LABEL autoenvscaling="1" {INPUTS_LABEL}="{inputs}"\n'
    try:
        client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=img.name, rm=True, forcerm=True, pull=False)
    except docker.errors.BuildError as e:
        lines = [str(x.get("stream") or x.get("error") or "").rstrip() for x in e.build_log]
        tail = "\n".join(line for line in lines if line)[-2000:]
        raise ImageBuildError(f"building {img.name} failed: {e.msg}\n{tail}") from None
    except docker.errors.APIError as e:
        raise ImageBuildError(f"building {img.name} failed: {e}") from None


def bootstrap(force: bool = False, only: list[str] | None = None, progress: Progress = print) -> list[ImageStatus]:
    """Build whatever is missing or stale. Returns one status per catalog image (base first)."""
    client = _client()
    statuses: list[ImageStatus] = []
    hashes: dict[str, str] = {}

    started = time.perf_counter()
    base_hash = base_inputs_hash()
    hashes[BASE_IMAGE] = base_hash
    if force or _label_of(client, BASE_IMAGE) != base_hash:
        build_base(client, base_hash, progress)
        statuses.append(ImageStatus(name=BASE_IMAGE, action="built", seconds=time.perf_counter() - started))
    else:
        statuses.append(ImageStatus(name=BASE_IMAGE, action="cached", seconds=time.perf_counter() - started))

    for img in CATALOG:
        if only and img.name not in only and img.name.split(":")[0] not in only:
            continue
        started = time.perf_counter()
        parent_hash = hashes.get(img.parent) or _label_of(client, img.parent) or "missing"
        inputs = catalog_inputs_hash(img, parent_hash)
        hashes[img.name] = inputs
        if force or _label_of(client, img.name) != inputs:
            build_catalog_image(client, img, inputs, progress)
            action = "built"
        else:
            action = "cached"
        statuses.append(ImageStatus(name=img.name, action=action, seconds=time.perf_counter() - started))
    return statuses


def missing_images(names: list[str] | None = None) -> list[str]:
    """Catalog images not present in the engine (no staleness check: cheap, for preflight)."""
    client = _client()
    wanted = names or [BASE_IMAGE, *(i.name for i in CATALOG)]
    return [n for n in wanted if _label_of(client, n) is None]
