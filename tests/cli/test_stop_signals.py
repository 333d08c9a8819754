"""The ``autoenv`` command's Ctrl-C and SIGTERM: the first stops the run in order and says how to stop it at once;
after the second, or with a model server that requests still use, the process ends at once (os._exit), since
waiting for the threads under way (or destroying that server) would not end."""

from __future__ import annotations

import signal

import pytest

from autoenvscaling.cli import app as cli_app


@pytest.fixture
def exits(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    seen: list[tuple[str, int]] = []

    def hard(code: int) -> None:
        seen.append(("os._exit", code))
        raise SystemExit(code)

    monkeypatch.setattr(cli_app.os, "_exit", hard)
    monkeypatch.setattr(cli_app, "_signals", [])
    return seen


def test_the_first_signal_says_how_to_stop_at_once_and_exits_normally(
    exits: list[tuple[str, int]], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(KeyboardInterrupt):
        cli_app._stop(signal.SIGTERM, None)
    assert "press Ctrl-C again to stop at once" in " ".join(capsys.readouterr().err.split())
    with pytest.raises(SystemExit) as done:
        cli_app._interrupted()
    assert done.value.code == 128 + signal.SIGTERM and exits == []  # sys.exit: threads and cleanup run as usual


def test_a_second_signal_ends_the_process_at_once(
    exits: list[tuple[str, int]], capsys: pytest.CaptureFixture[str]
) -> None:
    for signum in (signal.SIGINT, signal.SIGINT):
        with pytest.raises(KeyboardInterrupt):
            cli_app._stop(signum, None)
    with pytest.raises(SystemExit):
        cli_app._interrupted()
    assert exits == [("os._exit", 130)]
    assert "`autoenv sandbox gc` removes them" in " ".join(capsys.readouterr().err.split())


def test_a_model_server_still_in_use_ends_the_process_at_once(
    exits: list[tuple[str, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from autoenvscaling.llm import embedded_server

    monkeypatch.setattr(embedded_server, "abandoned", lambda: 1)
    with pytest.raises(KeyboardInterrupt):
        cli_app._stop(signal.SIGINT, None)
    with pytest.raises(SystemExit):
        cli_app._interrupted()
    assert exits == [("os._exit", 130)]
