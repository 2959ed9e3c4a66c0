"""Talk to the proxy's control endpoints (``/_invocache/…``): health and sessions.

A session holds the context (cassette, mode, run, attempt, role, task) of
every call sent through ``/_session/<sid>/<upstream>/…``; changing it here
changes it for clients created earlier, which cannot add headers
themselves. Standard library only (``urllib``).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Mapping, Optional


class ControlError(RuntimeError):
    """The proxy refused or could not be reached for a control request."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail
        """The proxy's own error message, when it answered one."""


def _headers() -> dict[str, str]:
    headers = {"content-type": "application/json", "accept": "application/json"}
    token = os.environ.get("INVOCACHE_PROXY_TOKEN", "")
    if token:
        headers["x-invocache-token"] = token
    return headers


def request(
    base: str, method: str, path: str, body: Optional[Mapping[str, Any]] = None, timeout: float = 30.0
) -> Any:
    """Send one control request and return its JSON answer (``None`` for an empty body)."""
    data = None if body is None else json.dumps(body).encode("utf-8")
    req = urllib.request.Request(f"{base}{path}", data=data, method=method, headers=_headers())
    try:
        with urllib.request.urlopen(req, timeout=timeout) as res:
            raw = res.read()
    except urllib.error.HTTPError as error:
        detail = error.read().decode("utf-8", "replace")
        raise ControlError(
            f"invocache: {method} {path} on the proxy at {base} answered {error.code}: {detail}",
            _message_of(detail),
        ) from error
    except (urllib.error.URLError, OSError) as error:
        raise ControlError(
            f"invocache: the proxy at {base} did not answer {method} {path} ({error}). "
            "Is it running? Check INVOCACHE_PROXY_URL, or unset it to let the plugin start one."
        ) from error
    return json.loads(raw) if raw.strip() else None


def _message_of(body: str) -> str:
    """The message of a JSON error answer (``{"error": {"message": …}}``), else the body."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return body
    inner = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(inner, dict) and isinstance(inner.get("message"), str):
        return str(inner["message"])
    return body


def health(base: str) -> Any:
    """``GET /_invocache/health``: ``{"ok": true, "version": …, "mode": …}``."""
    return request(base, "GET", "/_invocache/health", timeout=10.0)


def put_session(base: str, sid: str, context: Mapping[str, Any]) -> Any:
    """Replace session ``sid``'s context."""
    return request(base, "PUT", f"/_invocache/sessions/{sid}", context)


def patch_session(base: str, sid: str, changes: Mapping[str, Any]) -> Any:
    """Merge ``changes`` into session ``sid`` (``None`` deletes a field)."""
    return request(base, "PATCH", f"/_invocache/sessions/{sid}", changes)


def session_misses(base: str, sid: str) -> Any:
    """The replay misses session ``sid`` was answered with: ``{"count": n, "misses": [message, …]}``."""
    return request(base, "GET", f"/_invocache/sessions/{sid}/misses")


def delete_session(base: str, sid: str) -> None:
    """Forget session ``sid``."""
    request(base, "DELETE", f"/_invocache/sessions/{sid}")


def end_run(base: str, run_id: str) -> None:
    """End the open run ``run_id`` (``DELETE /_invocache/runs/<run>``); a run with no call is not open."""
    try:
        request(base, "DELETE", f"/_invocache/runs/{urllib.parse.quote(run_id, safe='')}")
    except ControlError as error:
        cause = error.__cause__
        if isinstance(cause, urllib.error.HTTPError) and cause.code == 404:
            return
        raise
