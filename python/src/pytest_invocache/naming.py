"""Where a test's cassette lives: the same layout rules as ``invocache/vitest``.

The TypeScript helper (``src/testing/cassette-paths.ts``: ``cassettePathFor``,
``namedCassettePath``) defines the layout; this module mirrors it line by line
so that a project's Python and TypeScript tests share one ``cassettes/``
folder with one set of rules. ``test/python/pytest-plugin.test.ts`` checks
both sides give the same paths for the same inputs. Only the test-file
suffix differs: ``.py`` is stripped here besides the ``.test.ts``/``.spec.js``
family the TypeScript side strips.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata

MAX_SLUG = 60
MAX_SEGMENT = 100
_SAFE_SEGMENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")


def slug(text: str) -> str:
    """Lower-case words joined by dashes: ``Fix ../../etc (x2)!`` -> ``fix-etc-x2``."""
    s = unicodedata.normalize("NFKD", text)
    # Accents go, letters stay: "café" -> "cafe" (JS: /[\u0300-\u036f]/g).
    s = re.sub("[\u0300-\u036f]", "", s).lower()
    s = re.sub(r"[^a-z0-9]+", "-", s)
    s = re.sub(r"^-|-$", "", s)[:MAX_SLUG]
    s = re.sub(r"-$", "", s)
    return "test" if s == "" else s


def safe_segment(segment: str) -> str:
    """A path segment safe on every filesystem, never ``.``/``..`` nor hidden."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", segment)
    s = re.sub(r"^[.-]+", "", s)
    return "_" if s == "" else s[:MAX_SEGMENT]


def strip_test_ext(path: str) -> str:
    """``tests/test_plan.py`` -> ``tests/test_plan``; ``plan.test.ts`` -> ``plan`` (as ``stripTestExt``)."""
    return re.sub(r"(?:(\.(test|spec))?\.[cm]?[jt]sx?|\.py)$", "", path)


def _inside(base: str, path: str) -> str:
    rel = os.path.relpath(path, base)
    if rel == "." or rel.startswith("..") or os.path.isabs(rel):
        raise ValueError(f"invocache: cassette path {path} would leave {base}")
    return path


def cassette_path_for(
    test_file: str, test_name: str, *, root: str, dir: str = "cassettes"
) -> str:
    """The cassette of one test: ``<root>/<dir>/<test file without .py>/<slug>-<hash>.yaml``.

    The hash (10 hex of sha256 over the file's root-relative path and the
    exact test name) keeps tests whose names slug alike apart. Test files
    outside ``root`` go under ``_external/``.

    >>> cassette_path_for("/repo/tests/test_plan.py", "test_replans", root="/repo")[:35]
    '/repo/cassettes/tests/test_plan/tes'
    """
    root = os.path.abspath(root)
    base = os.path.abspath(os.path.join(root, dir))
    abs_file = os.path.abspath(os.path.join(root, test_file))
    rel = os.path.relpath(abs_file, root)
    outside = rel == "." or rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel)
    file_key = abs_file if outside else "/".join(rel.split(os.sep))
    if outside:
        rel = os.path.join("_external", safe_segment(strip_test_ext(os.path.basename(abs_file))))
    folder = [safe_segment(s) for s in strip_test_ext(rel).split(os.sep) if s != ""]
    digest = hashlib.sha256(f"{file_key}\n{test_name}".encode()).hexdigest()[:10]
    return _inside(base, os.path.join(base, *folder, f"{slug(test_name)}-{digest}.yaml"))


def _escape_segment(segment: str) -> str:
    """One name segment as a file name: itself when safe, else ``~``-escaped UTF-8."""
    if _SAFE_SEGMENT.match(segment):
        out = segment
    else:
        parts: list[str] = []
        for i, ch in enumerate(segment):
            if re.match(r"[A-Za-z0-9_]", ch) or (i > 0 and ch in ".-"):
                parts.append(ch)
            elif 0xD800 <= ord(ch) <= 0xDFFF:
                # A lone surrogate has no UTF-8: its code unit, marked apart (u is not hex).
                parts.append(f"~u{ord(ch):x}")
            else:
                parts.append("".join(f"~{b:02x}" for b in ch.encode("utf-8")))
        out = "".join(parts)
    if len(out) > MAX_SEGMENT:
        digest = hashlib.sha256(segment.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        out = f"{out[:80]}~~{digest}"
    return out


def named_cassette_path(name: str, *, root: str, dir: str = "cassettes") -> str:
    """The cassette called ``name`` (``"shared/planner"``) under ``<root>/<dir>``.

    ``.yaml`` is added when missing; unsafe characters are escaped as ``~``
    and their UTF-8 bytes in hex, so two names never share a file; absolute
    names and ``.``/``..`` segments are refused.
    """
    if not isinstance(name, str) or name.strip() == "":
        raise TypeError('invocache: cassette name must be a non-empty string such as "shared/planner"')
    if re.match(r"^[\\/]|^[A-Za-z]:", name):
        raise TypeError(
            f"invocache: cassette name {name!r} must be relative to the cassette folder, "
            'e.g. "shared/planner"'
        )
    root = os.path.abspath(root)
    base = os.path.abspath(os.path.join(root, dir))
    parts = [s for s in re.split(r"[\\/]+", name) if s != ""]
    if any(s in (".", "..") for s in parts):
        raise TypeError(
            f'invocache: cassette name {name!r} has a "." or ".." segment; '
            "a cassette name stays inside the cassette folder"
        )
    last = parts.pop() if parts else "cassette"
    ext = os.path.splitext(last)[1]
    ext = ext if ext in (".yaml", ".yml") else ""
    stem = last[: -len(ext)] if ext else last
    file = f"{_escape_segment(stem)}{ext or '.yaml'}"
    return _inside(base, os.path.join(base, *[_escape_segment(p) for p in parts], file))
