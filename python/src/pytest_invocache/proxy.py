"""Start ``invocache proxy`` once per pytest session, or use one already running.

The plugin never computes an identity itself: every call goes through the
proxy, which hands it to the TypeScript library's ``createFetch``. This
module only finds the CLI, starts it on a free port, reads the port from
its one ready line, keeps its stderr for failure reports, and stops it
(SIGTERM, then SIGKILL) at the end of the session so no process outlives
the run.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

_READY = re.compile(r"https?://[^\s/]+:\d+")


class ProxyStartError(RuntimeError):
    """``invocache proxy`` could not be started; the message says why and how to fix it."""


def find_cli(root: Path) -> list[str]:
    """The command that runs ``invocache``: ``INVOCACHE_CLI``, else the project's installed binary.

    Looks for ``node_modules/.bin/invocache`` in ``root`` and its parents,
    then on ``PATH``.
    """
    override = os.environ.get("INVOCACHE_CLI", "").strip()
    if override:
        return shlex.split(override)
    for folder in [root, *root.parents]:
        candidate = folder / "node_modules" / ".bin" / "invocache"
        if candidate.exists():
            return [str(candidate)]
    found = shutil.which("invocache")
    if found is not None:
        return [found]
    raise ProxyStartError(
        f"invocache: no `invocache` command found (looked for node_modules/.bin/invocache from "
        f"{root} up, and on PATH). Install it (npm install --save-dev invocache), set "
        "INVOCACHE_CLI to a command line such as 'node path/to/dist/cli/main.js', or point "
        "INVOCACHE_PROXY_URL at a running `invocache proxy`."
    )


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    # Linux: the proxy gets SIGTERM if pytest itself is killed, so even a
    # `kill -9` of pytest leaves no orphan proxy holding the store.
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except OSError:
            pass


class ProxyProcess:
    """A running ``invocache proxy`` child process (see :func:`start_proxy`)."""

    def __init__(self, process: "subprocess.Popen[bytes]", url: str, log_path: Path) -> None:
        self.process = process
        self.url = url
        self._log_path = log_path

    def log_size(self) -> int:
        """How many bytes of output the proxy has written so far (a mark for :meth:`log_since`)."""
        try:
            return self._log_path.stat().st_size
        except OSError:
            return 0

    def log_since(self, mark: int = 0) -> str:
        """The proxy's stderr and stdout after ``mark``, for a failing test's report."""
        try:
            with self._log_path.open("rb") as f:
                f.seek(mark)
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (the proxy drains in-flight calls and exits), then SIGKILL after ``timeout``."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        try:
            self._log_path.unlink()
        except OSError:
            pass


def start_proxy(
    command: Sequence[str],
    args: Sequence[str],
    *,
    cwd: Path,
    timeout: float = 60.0,
) -> ProxyProcess:
    """Run ``command proxy args…`` and wait for the line that names its address."""
    fd, name = tempfile.mkstemp(prefix="invocache-proxy-", suffix=".log")
    os.close(fd)
    log_path = Path(name)
    log: IO[bytes] = log_path.open("ab")
    argv = [*command, "proxy", *args]
    try:
        process = subprocess.Popen(
            argv,
            cwd=str(cwd),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            preexec_fn=_die_with_parent if os.name == "posix" else None,
        )
    except OSError as error:
        log.close()
        raise ProxyStartError(
            f"invocache: could not run {shlex.join(argv)}: {error}. Set INVOCACHE_CLI to a "
            "command line that runs invocache, e.g. 'node node_modules/invocache/dist/cli/main.js'."
        ) from error
    log.close()
    assert process.stdout is not None
    stdout = process.stdout
    found: list[str] = []
    ready = threading.Event()

    def pump() -> None:
        # Keep reading stdout for the whole session: a full pipe would block the proxy.
        with log_path.open("ab") as out:
            for raw in iter(stdout.readline, b""):
                if not ready.is_set():
                    match = _READY.search(raw.decode("utf-8", "replace"))
                    if match:
                        found.append(match.group(0))
                        ready.set()
                        continue
                out.write(raw)
                out.flush()
        ready.set()

    threading.Thread(target=pump, name="invocache-proxy-stdout", daemon=True).start()
    deadline = time.monotonic() + timeout
    while not ready.wait(0.05):
        if time.monotonic() > deadline:
            break
    proxy = ProxyProcess(process, found[0] if found else "", log_path)
    if found:
        return proxy
    code = process.poll()
    if code is None and not found and ready.is_set():
        # Its stdout closed: it is exiting. Under load the exit can lag the
        # close by a moment; wait for it, so the message says how it ended.
        try:
            code = process.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            code = None
    output = proxy.log_since()
    proxy.stop(timeout=2.0)
    why = (
        f"exited with code {code}"
        if code is not None
        else f"printed no ready line with its address within {timeout:g}s"
    )
    raise ProxyStartError(
        f"invocache: `{shlex.join(argv)}` {why}.\n--- proxy output ---\n{output.strip() or '(none)'}"
    )


def normalize_url(url: str) -> str:
    """``http://127.0.0.1:8080/`` -> ``http://127.0.0.1:8080``."""
    return url.rstrip("/")


__all__ = [
    "ProxyProcess",
    "ProxyStartError",
    "find_cli",
    "normalize_url",
    "start_proxy",
]

