"""Shared fixtures: a fake upstream on 127.0.0.1 and the command that runs the real ``invocache`` CLI."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fake_upstream import FakeUpstream  # noqa: E402

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[2]


def invocache_cli() -> str | None:
    """``INVOCACHE_CLI``, else the repository's built CLI (``npm run build``), else ``None``."""
    given = os.environ.get("INVOCACHE_CLI", "").strip()
    if given:
        return given
    main = REPO / "dist" / "cli" / "main.js"
    node = shutil.which("node")
    if main.exists() and node is not None:
        return f"{shlex.quote(node)} {shlex.quote(str(main))}"
    return None


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> str:
    """The CLI command line, exported as ``INVOCACHE_CLI`` for the inner pytest runs."""
    command = invocache_cli()
    if command is None:
        pytest.skip("no invocache CLI: run `npm run build` at the repository root or set INVOCACHE_CLI")
    monkeypatch.setenv("INVOCACHE_CLI", command)
    monkeypatch.delenv("INVOCACHE_PROXY_URL", raising=False)
    monkeypatch.delenv("INVOCACHE_MODE", raising=False)
    return command


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    fake = FakeUpstream().start()
    try:
        yield fake
    finally:
        fake.stop()
