"""The shared contract suite, run against every backend."""

from __future__ import annotations

import pytest

from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.sandbox import contract
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.sandbox.fake import FakeBackend

CHECKS = [pytest.param(check, id=check.__name__.removeprefix("check_")) for check in contract.ALL_CHECKS]


@pytest.mark.parametrize("check", CHECKS)
def test_fake(check: contract.Check) -> None:
    check(FakeBackend(), BASE_IMAGE)


@pytest.mark.docker
@pytest.mark.parametrize("check", CHECKS)
def test_docker(check: contract.Check, docker_backend: DockerBackend) -> None:
    check(docker_backend, BASE_IMAGE)


def test_contract_fails_on_a_broken_backend() -> None:
    """The checks can fail: a fake whose exit codes are all 0 does not pass."""

    class Liar(FakeBackend):
        pass

    liar = Liar()
    liar.register(r"^false$", lambda sb, call: None)  # `false` now "succeeds"
    with pytest.raises(AssertionError, match="false should exit 1"):
        contract.check_exit_codes(liar, BASE_IMAGE)
