"""A tiny OpenAI-compatible HTTP server on 127.0.0.1 that replays scripted replies and records requests."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeReply:
    status: int = 200
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    delay_sec: float = 0.0


@dataclass
class FakeRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def chat_body(content: str = "ok", **extra: Any) -> dict[str, Any]:
    """A minimal chat-completion response; ``extra`` is merged at the top level."""
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "fake-model",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }
    body.update(extra)
    return body


def error_body(message: str, status: int) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": status}}


class FakeOpenAI:
    def __init__(self) -> None:
        self.replies: list[FakeReply] = []
        self.requests: list[FakeRequest] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True  # a reply still sleeping must not hold up teardown
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def reply(self, *replies: FakeReply | dict[str, Any]) -> None:
        self.replies.extend(r if isinstance(r, FakeReply) else FakeReply(body=r) for r in replies)

    def _next(self, request: FakeRequest) -> FakeReply:
        with self._lock:
            self.requests.append(request)
            if not self.replies:
                return FakeReply(500, error_body("fake server: no scripted reply left", 500))
            return self.replies.pop(0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                request = FakeRequest(self.path, dict(self.headers), json.loads(raw or b"{}"))
                reply = fake._next(request)
                time.sleep(reply.delay_sec)
                payload = json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out first
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
