"""Serving the viewer with uvicorn on a loopback address (127.0.0.1 unless the user names another host)."""

from __future__ import annotations

import socket
from pathlib import Path

from autoenvscaling.errors import UserInputError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def check_root(path: Path) -> Path:
    """The dir to serve, or a one-line ``UserInputError``: it must be a run dir, a pool or a dir holding them."""
    from autoenvscaling.view.files import Root
    from autoenvscaling.view.runs import detect_kind, find_runs

    if not path.exists():
        raise UserInputError(f"{path}: no such directory")
    if not path.is_dir():
        raise UserInputError(f"{path}: not a directory (give a run dir, a pool or a dir of runs)")
    if detect_kind(path) is None and not find_runs(Root(path)):
        raise UserInputError(f"{path}: not a run dir or a pool, and no run dir or pool lies below it")
    return path.resolve()


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise UserInputError(f"cannot listen on {host}:{port}: {e.strerror or e} (try --port)") from None
    sock.listen(64)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def serve(root: Path, sock: socket.socket, *, allowed_hosts: list[str] | None = None) -> None:
    """Serve until interrupted (blocks)."""
    import uvicorn

    from autoenvscaling.view.app import create_app

    app = create_app(root, allowed_hosts=allowed_hosts)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
