"""The ``invocache`` fixture: one proxy session per test, and its context managers.

Each test gets a session id ``sid``; SDK clients are pointed at
``<proxy>/_session/<sid>/<upstream>``, so the proxy takes every call's
context (cassette, mode, run, attempt, role, task) from the session. A
``with invocache.attempt(2):`` block changes the session, so calls from a
client created before the block are attempt 2 as well (RELOOP: a retry
after a rejected answer is a fresh call, never the rejected one replayed).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Optional

from . import control

# Where each built-in upstream's SDK expects its base URL to end. The
# OpenAI SDK appends `/chat/completions` to a base that already has `/v1`;
# Anthropic's appends `/v1/messages`; Google's appends `/v1beta/…`.
_SDK_SUFFIX = {"openai": "/v1", "anthropic": "", "gemini": ""}

_FIELDS = ("attempt", "role", "task", "run", "cassette", "mode")


class Invocache:
    """What a test marked ``@pytest.mark.invocache`` (or asking for ``invocache``) gets.

    Example::

        @pytest.mark.invocache
        def test_plan(invocache):
            client = openai.OpenAI()            # OPENAI_BASE_URL points at the proxy
            first = client.chat.completions.create(...)
            with invocache.attempt(1):          # the retry is a fresh call
                second = client.chat.completions.create(...)
    """

    def __init__(
        self,
        *,
        proxy_url: str,
        session_id: str,
        mode: str,
        cassette: Optional[str],
        context: dict[str, Any],
    ) -> None:
        self.proxy_url = proxy_url
        """The proxy's base address, ``http://127.0.0.1:PORT``."""
        self.session_id = session_id
        """This test's proxy session."""
        self.mode = mode
        """auto, replay, record, passthrough or verify."""
        self.cassette = cassette
        """Absolute path of this test's cassette, or ``None`` when the store is not a cassette folder."""
        self._context = dict(context)

    @property
    def context(self) -> dict[str, Any]:
        """A copy of the session's current context (what the proxy applies to each call)."""
        return dict(self._context)

    def base_url(self, name: str, path: Optional[str] = None) -> str:
        """The base URL an SDK client for upstream ``name`` should use in this test.

        ``openai`` ends in ``/v1`` (the OpenAI SDK's convention); ``anthropic``,
        ``gemini`` and ``--invocache-upstream`` names end at the upstream
        root. ``path`` replaces that suffix (``base_url("vllm", "/v1")``).
        """
        if not isinstance(name, str) or name == "" or "/" in name:
            raise TypeError(f'invocache.base_url: name must be an upstream name like "openai", got {name!r}')
        suffix = _SDK_SUFFIX.get(name, "") if path is None else path
        if suffix and not suffix.startswith("/"):
            suffix = "/" + suffix
        return f"{self.proxy_url}/_session/{self.session_id}/{name}{suffix}"

    def update(self, **fields: Any) -> None:
        """Change the session's context for the rest of the test (``None`` removes a field)."""
        unknown = [k for k in fields if k not in _FIELDS]
        if unknown:
            raise TypeError(
                f"invocache.update: unknown field(s) {', '.join(unknown)}; use {', '.join(_FIELDS)}"
            )
        control.patch_session(self.proxy_url, self.session_id, fields)
        for key, value in fields.items():
            if value is None:
                self._context.pop(key, None)
            else:
                self._context[key] = value

    @contextlib.contextmanager
    def _with(self, field: str, value: Any) -> Iterator[None]:
        previous = self._context.get(field)
        self.update(**{field: value})
        try:
            yield
        finally:
            self.update(**{field: previous})

    def attempt(self, n: int) -> contextlib.AbstractContextManager[None]:
        """Every call inside the block is attempt ``n`` (0 is the first try, n the n-th retry)."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise TypeError(
                f"invocache.attempt: n must be an integer >= 0 (0 for the first try, n for the n-th retry), got {n!r}"
            )
        return self._with("attempt", n)

    def role(self, name: str) -> contextlib.AbstractContextManager[None]:
        """Every call inside the block has role ``name`` (e.g. ``"planner"``)."""
        if not isinstance(name, str) or name == "":
            raise TypeError(f'invocache.role: name must be a non-empty string like "planner", got {name!r}')
        return self._with("role", name)

    def task(self, name: str) -> contextlib.AbstractContextManager[None]:
        """Every call inside the block belongs to task ``name``."""
        if not isinstance(name, str) or name == "":
            raise TypeError(f'invocache.task: name must be a non-empty string like "fix-login", got {name!r}')
        return self._with("task", name)
