"""The viewer's web app: GET-only Starlette routes rendering Jinja templates over the served root.

Every path in a URL goes through ``Root.resolve`` (404 when it leaves the root or does not exist). Responses carry
a strict Content-Security-Policy (scripts and styles from /static only), and only loopback Host headers are
accepted, so a web page cannot reach the viewer by DNS rebinding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from autoenvscaling.view.files import OutsideRoot, Root, read_page
from autoenvscaling.view.pages import PAGES

HERE = Path(__file__).parent
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]", "::1"]
HEADERS = {
    "content-security-policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


def _fmt(x: object, spec: str = ".2f") -> str:
    if x is None:
        return "-"
    if isinstance(x, bool) or not isinstance(x, int | float):
        return str(x)
    return format(x, spec)


def _markdown(text: str) -> Markup:
    from markdown_it import MarkdownIt

    # raw HTML in the text is escaped, not passed through ("html": False); links are validated by markdown-it
    md = MarkdownIt("commonmark", {"html": False, "linkify": False})
    return Markup(md.render(text))  # markdown-it escapes what it does not render


def make_templates() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["fmt"] = _fmt
    env.filters["markdown"] = _markdown
    return env


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.encode(), v.encode()) for k, v in HEADERS.items()]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


class Viewer:
    def __init__(self, root: Path) -> None:
        self.root = Root(root)
        self.templates = make_templates()

    def render(self, name: str, request: Request, **ctx: Any) -> HTMLResponse:
        page = self.templates.get_template(name).render(request=request, root=self.root, **ctx)
        return HTMLResponse(page)

    def resolve(self, rel: str) -> Path:
        try:
            return self.root.resolve(rel)
        except OutsideRoot:
            raise HTTPException(404, f"not found under the served root: {rel}") from None

    def query_path(self, request: Request, name: str) -> Path:
        value = request.query_params.get(name)
        if value is None:
            raise HTTPException(400, f"missing query parameter {name!r}")
        return self.resolve(value)

    async def home(self, request: Request) -> Response:
        from autoenvscaling.view.runs import detect_kind

        if detect_kind(self.root.path) is not None:
            return RedirectResponse("/run/.", status_code=302)
        return await PAGES["runs"](self, request, self.root.path)

    async def page(self, request: Request) -> Response:
        kind = request.scope["route"].name
        return await PAGES[kind](self, request, self.resolve(request.path_params["rel"]))

    async def env(self, request: Request) -> Response:
        return await PAGES["env"](self, request, self.query_path(request, "pool"))

    async def raw(self, request: Request) -> Response:
        """A file's bytes: images as themselves, everything else as plain text (never rendered as HTML)."""
        path = self.resolve(request.path_params["rel"])
        if not path.is_file():
            raise HTTPException(404, "not a file")
        if path.suffix.lower() == ".png":
            return Response(path.read_bytes(), media_type="image/png")
        page = read_page(path, int(request.query_params.get("offset", "0") or 0))
        return PlainTextResponse(page.text)

    async def error(self, request: Request, exc: Exception) -> Response:
        code = exc.status_code if isinstance(exc, HTTPException) else 500
        detail = exc.detail if isinstance(exc, HTTPException) else f"{type(exc).__name__}: {exc}"
        page = self.templates.get_template("error.html").render(request=request, code=code, detail=detail)
        return HTMLResponse(page, status_code=code)


def create_app(root: Path, *, allowed_hosts: list[str] | None = None) -> Starlette:
    """The viewer over ``root`` (a runs root, a run dir or a pool)."""
    viewer = Viewer(root)
    routes = [
        Route("/", viewer.home),
        Route("/env", viewer.env),
        Route("/raw/{rel:path}", viewer.raw),
        *(
            Route(f"/{kind}/{{rel:path}}", viewer.page, name=kind)
            for kind in ("run", "pool", "trial", "trajectory", "file")
        ),
        Mount("/static", app=StaticFiles(directory=HERE / "static"), name="static"),
    ]
    return Starlette(
        routes=routes,
        middleware=[
            Middleware(SecurityHeaders),
            Middleware(TrustedHostMiddleware, allowed_hosts=[*LOOPBACK_HOSTS, *(allowed_hosts or [])]),
        ],
        exception_handlers={HTTPException: viewer.error, Exception: viewer.error},
    )
