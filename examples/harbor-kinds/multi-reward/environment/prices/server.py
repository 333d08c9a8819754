"""A tiny price service on 127.0.0.1:8080: GET /prices returns today's prices as JSON."""

import json
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

PRICES = {"apple": 3, "fig": 7, "pear": 5}


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path != "/prices":
            self.send_error(404)
            return
        body = json.dumps(PRICES).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


time.sleep(1)  # a slow start: the healthcheck waits for it
HTTPServer(("127.0.0.1", 8080), Handler).serve_forever()
