#!/usr/bin/env python3
"""Second implementation of invocache identity recipe v1 (docs/identity.md).

    id = sha256(b"invocache/invocation/v1\\n" + wtf8(jcs(manifest))).hexdigest()

Tool calls (a manifest with "kind": "tool") use b"invocache/tool/v1\\n" instead;
their vectors are in identity-tool-v1.json (pass its path as the argument).
A tool manifest with "version": 2 (recipe tool v2, arguments are data) uses
b"invocache/tool/v2\\n"; its vectors are in identity-tool-v2.json.

Reads the golden vectors (default: identity-v1.json next to this file), recomputes
each id from its manifest, prints one line per vector, and exits 1 on any mismatch.
Standard library only. JCS is RFC 8785; WTF-8 is UTF-8 that also encodes lone
surrogates (Python's "surrogatepass"), so two different strings never share bytes.
"""
import hashlib
import json
import math
import re
import sys
from pathlib import Path

DOMAIN = b"invocache/invocation/v1\n"
# Tool calls (docs/identity.md, "Tool identities"): a manifest with kind "tool"
# is hashed under its own domain tag.
TOOL_DOMAIN = b"invocache/tool/v1\n"
# Recipe tool v2 (arguments are data): a tool manifest with "version": 2.
TOOL_DOMAIN_V2 = b"invocache/tool/v2\n"
SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def es_number(x):
    """ECMAScript Number::toString(x), as RFC 8785 section 3.2.2.3 requires."""
    x = float(x)  # json gives int for "9007199254740992" or "-0": same double
    if not math.isfinite(x):
        raise ValueError(f"{x} is not a JSON number")
    if x == 0:
        return "0"  # +0 and -0
    if x < 0:
        return "-" + es_number(-x)
    # repr() gives the shortest round-tripping digits (nearest when tied),
    # which are ES's k digits s; only the layout below differs from Python.
    mant, _, exp = repr(x).partition("e")
    whole, _, frac = mant.partition(".")
    digits = whole + frac
    n = int(exp or 0) + len(whole)  # x = 0.digits * 10**n
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    s = stripped.rstrip("0")
    k = len(s)
    if k <= n <= 21:
        return s + "0" * (n - k)
    if 0 < n <= 21:
        return s[:n] + "." + s[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + s
    e = n - 1
    sign = "+" if e >= 0 else "-"
    return (s if k == 1 else s[0] + "." + s[1:]) + "e" + sign + str(abs(e))


def jcs_string(s):
    """RFC 8785 section 3.2.2.2: escape only '"', '\\' and U+0000..U+001F."""
    out = []
    for ch in s:
        if ch in SHORT:
            out.append(SHORT[ch])
        elif ord(ch) < 0x20:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def utf16_key(s):
    """Sort key: the string as UTF-16 code units (RFC 8785 section 3.2.3)."""
    return s.encode("utf-16-be", "surrogatepass")


def jcs(v):
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return es_number(v)
    if isinstance(v, str):
        return jcs_string(v)
    if isinstance(v, list):
        return "[" + ",".join(jcs(x) for x in v) + "]"
    if isinstance(v, dict):
        keys = sorted(v, key=utf16_key)
        return "{" + ",".join(jcs_string(k) + ":" + jcs(v[k]) for k in keys) + "}"
    raise TypeError(f"not a JSON value: {type(v).__name__}")


def wtf8(s):
    return s.encode("utf-8", "surrogatepass")


def identity(manifest):
    if manifest.get("kind") == "tool":
        domain = TOOL_DOMAIN_V2 if manifest.get("version") == 2 else TOOL_DOMAIN
    else:
        domain = DOMAIN
    return hashlib.sha256(domain + wtf8(jcs(manifest))).hexdigest()


def main(argv):
    path = Path(argv[1]) if len(argv) > 1 else Path(__file__).with_name("identity-v1.json")
    # json.loads joins escaped surrogate pairs and keeps lone surrogates as they are.
    vectors = json.loads(path.read_text(encoding="utf-8"))
    failed = 0
    for v in vectors:
        got = identity(v["manifest"])
        ok = got == v["id"] and re.fullmatch(r"[0-9a-f]{64}", v["id"]) is not None
        failed += not ok
        status = "ok  " if ok else "FAIL"
        detail = "" if ok else f" expected {v['id']} got {got}"
        print(f"{status} {got[:12]} {v['name']}{detail}")
    print(f"{len(vectors) - failed}/{len(vectors)} vectors reproduced ({path.name})")
    return 1 if failed or not vectors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
