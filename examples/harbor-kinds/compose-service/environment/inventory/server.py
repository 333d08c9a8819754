"""The inventory service: GET /items?page=N returns one page of items and the next page's number (or null)."""

import json
import os
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

ITEMS = [
    {"sku": f"SKU-{n:03d}", "name": name, "qty": qty}
    for n, (name, qty) in enumerate(
        [
            ("bolt", 12),
            ("nut", 3),
            ("washer", 0),
            ("hinge", 7),
            ("bracket", 4),
            ("spring", 25),
            ("gear", 1),
            ("pulley", 9),
            ("clamp", 5),
            ("rivet", 2),
            ("chain", 18),
            ("valve", 4),
            ("gasket", 6),
            ("axle", 0),
        ],
        start=101,
    )
]
PAGE_SIZE = int(os.environ.get("PAGE_SIZE", "4"))


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        url = urlparse(self.path)
        if url.path == "/health":
            self._send(200, {"ok": True})
        elif url.path == "/items":
            page = int(parse_qs(url.query).get("page", ["1"])[0])
            start = (page - 1) * PAGE_SIZE
            more = start + PAGE_SIZE < len(ITEMS)
            self._send(200, {"items": ITEMS[start : start + PAGE_SIZE], "next": page + 1 if more else None})
        else:
            self._send(404, {"error": "not found"})

    def _send(self, status: int, payload: object) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


time.sleep(1)  # a slow start: main waits for the healthcheck, not for the container
ThreadingHTTPServer(("0.0.0.0", 8000), Handler).serve_forever()
