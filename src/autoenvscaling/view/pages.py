"""One function per page: read what the page shows (``readers``, ``pool_read``, ``flywheel_read``,
``trajectory_view``) and render its template. Paths arrive already confined to the served root."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from autoenvscaling.pool.schema import CATALOG_FILE, is_pool
from autoenvscaling.view import charts, readers
from autoenvscaling.view.files import PAGE_BYTES, Root, read_page
from autoenvscaling.view.runs import KINDS, detect_kind, find_runs


class Site(Protocol):
    """What a page uses of the app's viewer (``app.Viewer``): the served root and the templates."""

    root: Root

    def render(self, name: str, request: Request, **ctx: Any) -> HTMLResponse: ...


Page = Callable[[Site, Request, Path], Awaitable[Response]]


def crumbs(root: Root, path: Path) -> list[tuple[str, str]]:
    """(label, url) for the served root and each run dir above ``path`` (and ``path`` itself)."""
    out = [("runs", "/")]
    chain = [p for p in reversed(path.parents) if root.inside(p) and p != root.path] + [path]
    for p in chain:
        kind = detect_kind(p) if p.is_dir() else None
        if kind is not None:
            out.append((p.name, f"/{'pool' if kind == 'pool' else 'run'}/{root.rel(p)}"))
    return out


def _runs(v: Site, request: Request, path: Path) -> Response:
    kind, status, q = (request.query_params.get(k, "") for k in ("kind", "status", "q"))
    runs = find_runs(v.root)
    shown = [
        r for r in runs
        if (not kind or r.kind == kind) and (not status or r.status == status)
        and all(w in f"{r.name} {r.headline}".lower() for w in q.lower().split())
    ]  # fmt: skip
    return v.render("runs.html", request, runs=shown, total=len(runs), kinds=KINDS, kind=kind, status=status, q=q)


def _run(v: Site, request: Request, path: Path) -> Response:
    kind = detect_kind(path) if path.is_dir() else None
    trail = crumbs(v.root, path)
    if kind == "pool":
        return RedirectResponse(f"/pool/{v.root.rel(path)}", status_code=302)
    if kind == "flywheel":
        from autoenvscaling.view.flywheel_read import flywheel_view

        return v.render("flywheel.html", request, fw=flywheel_view(v.root, path), crumbs=trail)
    if kind == "validate":
        view = readers.validation_run(v.root, path)
        chart = charts.bar_chart("time per phase (s)", list(view.phase_sec), {"seconds": list(view.phase_sec.values())})
        return v.render("validate.html", request, run=path, view=view, chart=chart, crumbs=trail)
    if kind == "solve":
        return v.render("solve.html", request, run=path, tasks=readers.solve_run(v.root, path), crumbs=trail)
    if kind == "propose":
        records = None
        if path.parent.name == "propose" and path.parent.parent.parent.name == "rounds":  # a flywheel stage
            from autoenvscaling.view.flywheel_read import proposals_of

            records = proposals_of(path.parents[3], int(path.parent.parent.name), path.name)
        proposals = readers.propose_run(v.root, path, records)
        return v.render("propose.html", request, run=path, view=proposals, crumbs=trail)
    if path.is_dir() and (path / "result.json").is_file():  # a trial dir
        return _trial(v, request, path)
    return _file(v, request, path)


def _pool(v: Site, request: Request, path: Path) -> Response:
    from autoenvscaling.view.pool_read import PoolFilter, list_entries

    if not is_pool(path):
        raise HTTPException(404, f"not a pool (no {CATALOG_FILE}): {v.root.rel(path)}")
    qp = request.query_params

    def num(name: str, kind: type[int] | type[float]) -> float | None:
        try:
            return kind(qp[name]) if qp.get(name) else None
        except ValueError:
            raise HTTPException(400, f"{name}: not a number: {qp[name]!r}") from None

    rnd = num("round", int)
    f = PoolFilter(
        domain=qp.get("domain", ""),
        status=qp.get("status", ""),
        round=int(rnd) if rnd is not None else None,
        min_pass=num("min_pass", float),
        max_pass=num("max_pass", float),
        flags=qp.getlist("flag")[:50],  # list_entries keeps the flags some entry can carry
        q=qp.get("q", ""),
    )
    listing = list_entries(path, f)
    return v.render("pool.html", request, pool=path, f=f, listing=listing, crumbs=crumbs(v.root, path))


def _env(v: Site, request: Request, path: Path) -> Response:
    from autoenvscaling.view.env_read import env_view

    env_id = request.query_params.get("id", "")
    view = env_view(v.root, path, env_id)
    if view is None:
        raise HTTPException(404, f"environment {env_id!r} is not in the pool {v.root.rel(path)}")
    return v.render("env.html", request, pool=path, view=view, crumbs=crumbs(v.root, path))


def _trial(v: Site, request: Request, path: Path) -> Response:
    if not path.is_dir():
        raise HTTPException(404, "not a trial dir")
    view = readers.trial(v.root, path)
    chart = charts.bar_chart("time per phase (s)", list(view.phases), {"seconds": list(view.phases.values())})
    return v.render("trial.html", request, view=view, chart=chart, crumbs=crumbs(v.root, path))


def _trajectory(v: Site, request: Request, path: Path) -> Response:
    from autoenvscaling.view.trajectory_view import TrajectoryError, trajectory_view

    if path.is_dir():
        path = path / "trajectory.json" if (path / "trajectory.json").is_file() else path / "agent" / "trajectory.json"
    if not path.is_file():
        raise HTTPException(404, "no trajectory.json here")
    try:
        view = trajectory_view(v.root, path)
    except TrajectoryError as e:
        raise HTTPException(422, str(e)) from None
    return v.render("trajectory.html", request, view=view, path=path, crumbs=crumbs(v.root, path))


def _file(v: Site, request: Request, path: Path) -> Response:
    trail = crumbs(v.root, path)
    if path.is_dir():
        entries = sorted(path.iterdir(), key=lambda p: (not p.is_dir(), p.name))
        shown = [(p.name + ("/" if p.is_dir() else ""), v.root.rel(p), p.is_dir()) for p in entries if v.root.inside(p)]
        return v.render("dir.html", request, path=path, entries=shown, crumbs=trail)
    try:
        offset = int(request.query_params.get("offset", "0") or 0)
    except ValueError:
        raise HTTPException(400, "offset: not a number") from None
    page = read_page(path, offset, PAGE_BYTES)
    return v.render("file.html", request, path=path, page=page, crumbs=trail)


def _async(fn: Callable[[Site, Request, Path], Response]) -> Page:
    async def run(v: Site, request: Request, path: Path) -> Response:
        return await run_in_threadpool(fn, v, request, path)

    return run


PAGES: dict[str, Page] = {
    "runs": _async(_runs),
    "run": _async(_run),
    "pool": _async(_pool),
    "env": _async(_env),
    "trial": _async(_trial),
    "trajectory": _async(_trajectory),
    "file": _async(_file),
}
