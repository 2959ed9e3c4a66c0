"""A fake model vendor on 127.0.0.1 for the plugin's tests: OpenAI chat completions, Anthropic messages, Gemini generateContent.

Real HTTP (``http.server`` in a thread), JSON and SSE, deterministic. Every
answer carries a counter (``reply #n``), so a replayed answer is told apart
from a live one, and streams are sent one word per event with a flush
between events, so a replay that merged chunks would show.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from collections.abc import Sequence
from typing import Any


class FakeUpstream:
    """Start with :meth:`start`; ``calls`` counts the requests it answered; :meth:`stop` closes it."""

    def __init__(self) -> None:
        self.calls = 0
        self.gap = 0.002
        """Seconds between streamed events."""
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.url = ""

    def start(self) -> "FakeUpstream":
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    fake.calls += 1
                    n = fake.calls
                    fake.requests.append(
                        {"path": self.path, "body": body, "headers": dict(self.headers.items())}
                    )
                words = ["reply", f" #{n}", " to", f" {_last_text(body)}"]
                if self.path.endswith("/chat/completions"):
                    fake._openai(self, body, words, fake.gap)
                elif self.path.endswith("/messages"):
                    fake._anthropic(self, body, words)
                elif ":streamGenerateContent" in self.path:
                    fake._gemini(self, words, stream=True)
                elif ":generateContent" in self.path:
                    fake._gemini(self, words, stream=False)
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def _send(self, status: int, payload: Any) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{port}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # --- OpenAI chat completions -------------------------------------------
    def _openai(
        self, h: BaseHTTPRequestHandler, body: dict[str, Any], words: list[str], gap: float = 0.002
    ) -> None:
        model = body.get("model", "gpt-test")
        usage = {"prompt_tokens": 10, "completion_tokens": len(words), "total_tokens": 10 + len(words)}
        if not body.get("stream"):
            _json(
                h,
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": 1700000000,
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": "".join(words)},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": usage,
                },
            )
            return
        events: list[Any] = []
        for i, word in enumerate(words):
            delta: dict[str, Any] = {"content": word}
            if i == 0:
                delta["role"] = "assistant"
            events.append(_chunk(model, delta, None))
        events.append(_chunk(model, {}, "stop"))
        events.append({**_chunk(model, {}, None), "choices": [], "usage": usage})
        _sse(h, [(None, e) for e in events] + [(None, "[DONE]")], gap)

    # --- Anthropic messages ------------------------------------------------
    def _anthropic(self, h: BaseHTTPRequestHandler, body: dict[str, Any], words: list[str]) -> None:
        model = body.get("model", "claude-test")
        usage = {"input_tokens": 10, "output_tokens": len(words)}
        message = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": "".join(words)}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            _json(h, message)
            return
        start = {**message, "content": [], "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 0}}
        events: list[tuple[str | None, Any]] = [
            ("message_start", {"type": "message_start", "message": start}),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            ),
        ]
        for word in words:
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": word}},
                )
            )
        events += [
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": len(words)},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        _sse(h, events)


    # --- Gemini generateContent / streamGenerateContent (alt=sse) -----------
    def _gemini(self, h: BaseHTTPRequestHandler, words: list[str], stream: bool) -> None:
        usage = {"promptTokenCount": 10, "candidatesTokenCount": len(words), "totalTokenCount": 10 + len(words)}

        def answer(text: str, finish: str | None) -> dict[str, Any]:
            candidate: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
            if finish is not None:
                candidate["finishReason"] = finish
            return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "gemini-test"}

        if not stream:
            _json(h, answer("".join(words), "STOP"))
            return
        last = len(words) - 1
        _sse(h, [(None, answer(word, "STOP" if i == last else None)) for i, word in enumerate(words)])


def _last_text(body: dict[str, Any]) -> str:
    contents = body.get("contents")
    if isinstance(contents, list) and contents:
        parts = contents[-1].get("parts", []) if isinstance(contents[-1], dict) else []
        return " ".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
    messages = body.get("messages") or []
    if not messages:
        return "nothing"
    content = messages[-1].get("content", "")
    if isinstance(content, list):
        content = " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content)


def _chunk(model: str, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _json(h: BaseHTTPRequestHandler, payload: Any) -> None:
    raw = json.dumps(payload).encode()
    h.send_response(200)
    h.send_header("content-type", "application/json")
    h.send_header("content-length", str(len(raw)))
    h.end_headers()
    h.wfile.write(raw)


def _sse(h: BaseHTTPRequestHandler, events: Sequence[tuple[str | None, Any]], gap: float = 0.002) -> None:
    h.send_response(200)
    h.send_header("content-type", "text/event-stream")
    h.send_header("cache-control", "no-cache")
    h.send_header("connection", "close")
    h.end_headers()
    for i, (event, data) in enumerate(events):
        if i > 0:
            time.sleep(gap)  # separate writes, so each event is its own chunk on the wire
        text = data if isinstance(data, str) else json.dumps(data)
        head = f"event: {event}\n" if event else ""
        h.wfile.write(f"{head}data: {text}\n\n".encode())
        h.wfile.flush()
    # The response ends right after the last event, as the providers' do (a
    # client may close its connection as soon as it reads `[DONE]`).
    h.close_connection = True
