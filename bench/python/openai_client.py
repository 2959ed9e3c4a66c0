"""The Python side of bench/python/run.ts: N distinct chat completions with the real ``openai`` client.

Usage: python openai_client.py BASE_URL CALLS PROMPT_BYTES echo|constant
Prints one JSON line: {"calls": N, "steady_ms": time of calls 2..N, "checked": N}.
Every answer is checked: ``echo`` wants the call's own number back (a replay
that served another call's answer fails), ``constant`` the constant server's text.
"""

from __future__ import annotations

import json
import sys
import time

import openai


def main() -> None:
    base_url, calls, prompt_bytes, expect = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    client = openai.OpenAI(base_url=base_url, api_key="sk-bench-not-a-key", max_retries=0, timeout=30)
    filler = ("lorem ipsum dolor sit amet " * (prompt_bytes // 27 + 1))[:prompt_bytes]
    checked = 0
    start = 0.0
    for i in range(calls):
        if i == 1:
            start = time.perf_counter()
        out = client.chat.completions.create(
            model="gpt-bench",
            temperature=0.2,
            messages=[{"role": "user", "content": f"call #{i}: {filler}"}],
        )
        text = out.choices[0].message.content or ""
        want = f"answer to call #{i}" if expect == "echo" else "constant answer"
        if text != want:
            raise SystemExit(f"call {i}: expected {want!r}, got {text!r}")
        checked += 1
    steady = (time.perf_counter() - start) * 1000 if calls > 1 else 0.0
    print(json.dumps({"calls": calls, "steady_ms": steady, "checked": checked}))


if __name__ == "__main__":
    main()
