"""pytest-invocache: the pytest side of invocache (registered through the ``pytest11`` entry point).

A test marked ``@pytest.mark.invocache`` (or asking for the ``invocache``
fixture) records and replays its model API calls in its own cassette,
``cassettes/<test file>/<test-name-slug>-<hash>.yaml`` (the layout of
``invocache/vitest``), through one ``invocache proxy`` per session. The
identity of each call is computed by the proxy (the TypeScript library),
never here, so recordings are shared with Node tests on one store.
"""

from __future__ import annotations

import os
import shlex
import uuid
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any, Optional

import pytest

from . import control
from .naming import cassette_path_for, named_cassette_path
from .proxy import ProxyProcess, find_cli, normalize_url, start_proxy
from .session import Invocache

MODES = ("auto", "replay", "record", "passthrough", "verify")

# The base-URL variables each SDK reads when it builds a client.
BASE_URL_ENV = {
    "OPENAI_BASE_URL": "openai",
    "ANTHROPIC_BASE_URL": "anthropic",
    "GOOGLE_GEMINI_BASE_URL": "gemini",
}
# In replay nothing goes upstream, so no key is needed; the SDKs still
# refuse to build a client without one. A placeholder is set only then, and
# only where the variable is unset.
REPLAY_KEY_ENV = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY")
REPLAY_KEY_PLACEHOLDER = "invocache-replay-needs-no-key"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("invocache", "record and replay model API calls (invocache)")
    group.addoption(
        "--invocache-mode",
        choices=MODES,
        default=None,
        help="auto, replay, record, passthrough or verify. Default: INVOCACHE_MODE, else replay when CI is set, else auto.",
    )
    group.addoption(
        "--invocache-store",
        default=None,
        help="What the proxy records into: a cassette folder (default: <rootdir>/cassettes, one cassette per test), "
        "a cassette file, or a store URL (sqlite://…, redis://…, postgres://…).",
    )
    group.addoption(
        "--invocache-upstream",
        action="append",
        default=[],
        metavar="NAME=URL",
        help="Add or override an upstream of the proxy (repeatable), e.g. local=http://127.0.0.1:8000.",
    )
    group.addoption(
        "--invocache-replay-speed",
        default=None,
        metavar="X",
        help="Replay streams with their recorded timing scaled: 0 as fast as possible (default), "
        "1 as recorded, 2 twice as fast. Handed to the proxy the plugin starts.",
    )
    parser.addini("invocache_store", "Default for --invocache-store.", default=None)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "invocache(name=None, mode=None): record and replay this test's model API calls through "
        "invocache's proxy, in its own cassette (or the shared cassette `name`).",
    )
    mode = resolve_mode(config.getoption("invocache_mode"))
    for spec in config.getoption("invocache_upstream") or []:
        name, sep, url = str(spec).partition("=")
        if not sep or not name or not url.startswith(("http://", "https://")):
            raise pytest.UsageError(
                f"--invocache-upstream {spec!r}: expected NAME=URL, e.g. local=http://127.0.0.1:8000"
            )
    config.stash[_MODE] = mode


def resolve_mode(option: Optional[str]) -> str:
    """``--invocache-mode``, else ``INVOCACHE_MODE``, else ``replay`` under ``CI``, else ``auto``."""
    value = option or os.environ.get("INVOCACHE_MODE", "").strip()
    if value:
        if value not in MODES:
            raise pytest.UsageError(
                f"INVOCACHE_MODE={value!r} is not a mode; use one of {', '.join(MODES)}"
            )
        return value
    return "replay" if os.environ.get("CI") else "auto"


_MODE = pytest.StashKey[str]()
_PROXY = pytest.StashKey["_Proxy"]()
_CURRENT = pytest.StashKey["_TestState"]()


class _TestState:
    def __init__(self, handle: Invocache, proxy: "_Proxy", log_mark: int) -> None:
        self.handle = handle
        self.proxy = proxy
        self.log_mark = log_mark
        self.failed = False


class _Proxy:
    """The session's proxy: started on first use, stopped at the end of the session."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.url: Optional[str] = None
        self.process: Optional[ProxyProcess] = None

    def store(self) -> str:
        option = self.config.getoption("invocache_store") or self.config.getini("invocache_store")
        return str(option) if option else "cassettes"

    def cassette_folder(self) -> Optional[Path]:
        """The cassette folder the store is, or ``None`` for a store URL or a single cassette file."""
        store = self.store()
        if "://" in store or store.endswith((".yaml", ".yml")):
            return None
        return (self.config.rootpath / store).resolve()

    def ensure(self) -> str:
        if self.url is not None:
            return self.url
        existing = os.environ.get("INVOCACHE_PROXY_URL", "").strip()
        if existing:
            self.url = normalize_url(existing)
            control.health(self.url)
            return self.url
        root = self.config.rootpath
        folder = self.cassette_folder()
        store = str(folder) if folder is not None else self.store()
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
        args = ["--port", "0", "--mode", self.config.stash[_MODE], "--store", store]
        for spec in self.config.getoption("invocache_upstream") or []:
            args += ["--upstream", str(spec)]
        speed = self.config.getoption("invocache_replay_speed")
        if speed is not None:
            args += ["--replay-speed", str(speed)]
        timeout = float(os.environ.get("INVOCACHE_PROXY_TIMEOUT", "60"))
        self.process = start_proxy(find_cli(root), args, cwd=root, timeout=timeout)
        self.url = normalize_url(self.process.url)
        return self.url

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None


@pytest.fixture(scope="session")
def invocache_proxy(pytestconfig: pytest.Config) -> Iterator[str]:
    """The address of the session's ``invocache proxy`` (started on first use)."""
    proxy = pytestconfig.stash.get(_PROXY, None)
    if proxy is None:
        proxy = _Proxy(pytestconfig)
        pytestconfig.stash[_PROXY] = proxy
    try:
        yield proxy.ensure()
    finally:
        proxy.stop()


def _test_name(item: pytest.Item) -> str:
    """The test's name inside its file: ``TestPlan::test_replans[v2]`` (the node id after the path)."""
    _, sep, rest = item.nodeid.partition("::")
    return rest if sep else item.name


def rerecord_command(item: pytest.Item) -> str:
    """The shell command that re-records exactly this test."""
    return f"INVOCACHE_MODE=record python -m pytest {shlex.quote(item.nodeid)}"


@pytest.fixture
def invocache(
    request: pytest.FixtureRequest, invocache_proxy: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Invocache]:
    """This test's proxy session: ``base_url(name)``, ``attempt(n)``, ``role(name)``, ``task(name)``."""
    config = request.config
    item = request.node
    assert isinstance(item, pytest.Item)
    proxy = config.stash[_PROXY]
    marker = item.get_closest_marker("invocache")
    kwargs: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    mode = kwargs.get("mode") or config.stash[_MODE]
    if mode not in MODES:
        raise pytest.UsageError(f"@pytest.mark.invocache(mode={mode!r}): use one of {', '.join(MODES)}")
    name = kwargs.get("name")

    folder = proxy.cassette_folder()
    cassette: Optional[str] = None
    # The test's run scope: calls repeated in the test are new occurrences,
    # and the proxy keeps the test's trajectory. The id is the per-test
    # cassette's file stem (`<slug>-<hash>`: unique, and never a ":").
    run_id = "pytest-" + Path(
        cassette_path_for(str(item.path), _test_name(item), root=str(config.rootpath))
    ).stem
    context: dict[str, Any] = {"mode": mode, "run": run_id}
    if folder is not None:
        root = str(config.rootpath)
        path = (
            named_cassette_path(str(name), root=root, dir=str(folder))
            if name is not None
            else cassette_path_for(str(item.path), _test_name(item), root=root, dir=str(folder))
        )
        cassette = path
        context["cassette"] = Path(os.path.relpath(path, folder)).as_posix()

    sid = uuid.uuid4().hex
    control.put_session(invocache_proxy, sid, context)
    handle = Invocache(
        proxy_url=invocache_proxy, session_id=sid, mode=mode, cassette=cassette, context=context
    )
    for var, upstream in BASE_URL_ENV.items():
        monkeypatch.setenv(var, handle.base_url(upstream))
    if mode == "replay":
        for var in REPLAY_KEY_ENV:
            if not os.environ.get(var):
                monkeypatch.setenv(var, REPLAY_KEY_PLACEHOLDER)
    mark = proxy.process.log_size() if proxy.process is not None else 0
    item.stash[_CURRENT] = _TestState(handle, proxy, mark)
    misses: Any = None
    try:
        yield handle
    finally:
        try:
            # Asked before the session goes: a miss the test's code caught
            # (an SDK error swallowed by a retry or a fallback) still fails it.
            misses = control.session_misses(invocache_proxy, sid)
            control.delete_session(invocache_proxy, sid)
        except control.ControlError:
            pass  # the proxy is going away; the session goes with it
    state = item.stash[_CURRENT]
    missed = _caught_misses(item, mode, misses) if not state.failed else None
    if missed is not None:
        state.failed = True  # the run's divergence that follows would only repeat it
    # End the run: its record is stored, and in replay a different sequence
    # of calls than the recorded one fails the test here. A test that failed
    # already has said what went wrong: its run's divergence would be noise.
    try:
        control.end_run(invocache_proxy, run_id)
    except control.ControlError as error:
        if not state.failed:
            pytest.fail(
                f"invocache: the run of {item.nodeid} did not end cleanly (mode {mode}):\n"
                f"{error.detail or error}\nRe-record just this test: {rerecord_command(item)}",
                pytrace=False,
            )
    if missed is not None:
        pytest.fail(missed, pytrace=False)


def _caught_misses(item: pytest.Item, mode: str, misses: Any) -> Optional[str]:
    """The failure for replay misses the test's own code caught, or ``None`` when there were none."""
    count = misses.get("count", 0) if isinstance(misses, dict) else 0
    if not isinstance(count, int) or count <= 0:
        return None
    reports = [str(m) for m in misses.get("misses", [])]
    more = f"\n\n(and {count - len(reports)} more)" if count > len(reports) else ""
    one = count == 1
    return (
        f"invocache: REPLAY MISS in {item.nodeid} (mode {mode}): {count} "
        f"request{' was' if one else 's were'} never recorded, so the proxy did not answer "
        f"{'it' if one else 'them'}; the test's code caught the error and went on.\n\n"
        + "\n\n".join(reports)
        + f"{more}\n\nRe-record just this test: {rerecord_command(item)}"
    )


@pytest.fixture(autouse=True)
def _invocache_marked(request: pytest.FixtureRequest) -> None:
    """A test marked ``@pytest.mark.invocache`` gets the ``invocache`` fixture without asking."""
    if request.node.get_closest_marker("invocache") is not None:
        request.getfixturevalue("invocache")


def replay_miss(error: Optional[BaseException]) -> Optional[str]:
    """The proxy's miss report when ``error`` (or its cause) is an HTTP error answering a replay miss."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        response = getattr(error, "response", None)
        headers = getattr(response, "headers", None) or getattr(error, "headers", None)
        if headers is not None and str(headers.get("x-invocache-miss", "")) == "1":
            return _miss_message(response, error)
        error = error.__cause__ or error.__context__
    return None


def _miss_message(response: Any, error: BaseException) -> str:
    try:
        body = response.json()
    except Exception:  # noqa: BLE001 - any body: fall back to the exception's text
        return str(error)
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(body.get("message"), str):
            return str(body["message"])
    return str(error)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    state = item.stash.get(_CURRENT, None)
    if state is None or not report.failed:
        return
    state.failed = True
    if call.excinfo is not None:
        miss = replay_miss(call.excinfo.value)
        if miss is not None:
            text = (
                f"invocache: REPLAY MISS in {item.nodeid} (mode {state.handle.mode}): this request was "
                f"never recorded, so the proxy did not answer it.\n\n{miss}\n\n"
                f"Re-record just this test: {rerecord_command(item)}"
            )
            report.sections.insert(0, ("invocache replay miss", text))
            crash = getattr(report.longrepr, "reprcrash", None)
            if crash is not None and hasattr(crash, "message"):
                crash.message = f"invocache replay miss: {crash.message}"
    process = state.proxy.process
    if process is not None:
        log = process.log_since(state.log_mark).strip()
        if log:
            report.sections.append(("invocache proxy log", log))
