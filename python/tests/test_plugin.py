"""The plugin end to end: real ``openai``/``anthropic`` clients, the real ``invocache proxy``,
a fake upstream on 127.0.0.1. Each test writes a test file, runs pytest on it in a
subprocess (pytester), stops the upstream, and runs it again in replay."""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from fake_upstream import FakeUpstream
from pytest_invocache.naming import cassette_path_for
from pytest_invocache.plugin import resolve_mode

OPENAI_TEST = """
import openai, pytest

@pytest.mark.invocache
def test_chat(invocache):
    client = openai.OpenAI(api_key="sk-test-not-a-secret", max_retries=0)
    out = client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "plan it"}]
    )
    assert out.choices[0].message.content == "reply #1 to plan it"
    stream = client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "stream it"}], stream=True
    )
    chunks = [c.choices[0].delta.content for c in stream if c.choices and c.choices[0].delta.content]
    # Chunk by chunk, as the upstream sent them: one word per event.
    assert chunks == ["reply", " #2", " to", " stream it"]
"""

ANTHROPIC_TEST = """
import anthropic, pytest

@pytest.mark.invocache
def test_messages(invocache):
    client = anthropic.Anthropic(api_key="sk-ant-test-not-a-secret", max_retries=0)
    out = client.messages.create(
        model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "plan it"}]
    )
    assert out.content[0].text == "reply #1 to plan it"
    texts = []
    with client.messages.stream(
        model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "stream it"}]
    ) as stream:
        for text in stream.text_stream:
            texts.append(text)
    assert texts == ["reply", " #2", " to", " stream it"]
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA", *args, timeout=180)


def upstream_args(upstream: FakeUpstream) -> list[str]:
    return [
        f"--invocache-upstream=openai={upstream.url}",
        f"--invocache-upstream=anthropic={upstream.url}",
    ]


def test_openai_records_in_auto_then_replays_every_call_without_the_upstream(
    pytester: pytest.Pytester, cli: str, upstream: FakeUpstream
) -> None:
    pytester.makepyfile(test_openai_calls=OPENAI_TEST)
    recorded = run(pytester, "--invocache-mode=auto", *upstream_args(upstream))
    recorded.assert_outcomes(passed=1)
    assert upstream.calls == 2
    # Its own cassette, where invocache/vitest would put it.
    cassette = Path(
        cassette_path_for(
            str(pytester.path / "test_openai_calls.py"), "test_chat", root=str(pytester.path)
        )
    )
    assert cassette.is_file(), sorted(str(p) for p in pytester.path.rglob("*.yaml"))
    text = cassette.read_text()
    assert "sk-test-not-a-secret" not in text  # the key went upstream, never to disk

    upstream.stop()
    replayed = run(pytester, "--invocache-mode=replay", *upstream_args(upstream))
    replayed.assert_outcomes(passed=1)
    assert upstream.calls == 2


def test_anthropic_records_in_auto_then_replays_every_call_without_the_upstream(
    pytester: pytest.Pytester, cli: str, upstream: FakeUpstream
) -> None:
    pytester.makepyfile(test_anthropic_calls=ANTHROPIC_TEST)
    run(pytester, "--invocache-mode=auto", *upstream_args(upstream)).assert_outcomes(passed=1)
    assert upstream.calls == 2
    upstream.stop()
    run(pytester, "--invocache-mode=replay", *upstream_args(upstream)).assert_outcomes(passed=1)
    assert upstream.calls == 2


RELOOP_TEST = """
import openai, pytest

@pytest.mark.invocache
def test_retry_after_rejection(invocache):
    client = openai.OpenAI(api_key="sk-test", max_retries=0)  # created before the block
    def ask():
        return client.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "draft"}]
        ).choices[0].message.content
    first = ask()
    assert first == "reply #1 to draft"  # the gate rejects this answer
    with invocache.attempt(ATTEMPT):
        second = ask()
    assert second != first  # a fresh call, never the rejected answer again
    assert second == "reply #2 to draft"
"""


def test_attempt_makes_a_retry_a_fresh_call_also_for_a_client_created_before_the_block(
    pytester: pytest.Pytester, cli: str, upstream: FakeUpstream
) -> None:
    pytester.makepyfile(test_reloop=RELOOP_TEST.replace("ATTEMPT", "2"))
    run(pytester, "--invocache-mode=auto", *upstream_args(upstream)).assert_outcomes(passed=1)
    assert upstream.calls == 2
    upstream.stop()
    run(pytester, "--invocache-mode=replay", *upstream_args(upstream)).assert_outcomes(passed=1)
    # The attempt is part of the identity: the same call as attempt 1 was never recorded.
    pytester.makepyfile(test_reloop=RELOOP_TEST.replace("ATTEMPT", "1"))
    missed = run(pytester, "--invocache-mode=replay", *upstream_args(upstream))
    missed.assert_outcomes(failed=1)
    missed.stdout.fnmatch_lines(["*invocache replay miss*"])


ROLE_TEST = """
import openai, pytest

@pytest.mark.invocache
def test_roles(invocache):
    client = openai.OpenAI(api_key="sk-test", max_retries=0)
    with invocache.role("ROLE"):
        out = client.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "review"}]
        )
    assert out.choices[0].message.content == "reply #1 to review"
"""


def test_role_is_part_of_the_identity(
    pytester: pytest.Pytester, cli: str, upstream: FakeUpstream
) -> None:
    pytester.makepyfile(test_roles=ROLE_TEST.replace("ROLE", "planner"))
    run(pytester, "--invocache-mode=auto", *upstream_args(upstream)).assert_outcomes(passed=1)
    upstream.stop()
    run(pytester, "--invocache-mode=replay", *upstream_args(upstream)).assert_outcomes(passed=1)
    pytester.makepyfile(test_roles=ROLE_TEST.replace("ROLE", "critic"))
    run(pytester, "--invocache-mode=replay", *upstream_args(upstream)).assert_outcomes(failed=1)


def test_a_replay_miss_fails_the_test_saying_so_and_what_differs(
    pytester: pytest.Pytester, cli: str, upstream: FakeUpstream
) -> None:
    pytester.makepyfile(test_openai_calls=OPENAI_TEST)
    run(pytester, "--invocache-mode=auto", *upstream_args(upstream)).assert_outcomes(passed=1)
    upstream.stop()
    pytester.makepyfile(test_openai_calls=OPENAI_TEST.replace('"plan it"', '"plan that instead"'))
    missed = run(pytester, "--invocache-mode=replay", *upstream_args(upstream))
    missed.assert_outcomes(failed=1)
    out = missed.stdout.str()
    assert "REPLAY MISS in test_openai_calls.py::test_chat" in out
    assert "never recorded" in out
    # The proxy's report (nearest entry, what differs) is in the failure, with the fix.
    assert "plan that instead" in out or "plan it" in out
    assert "Re-record just this test: INVOCACHE_MODE=record python -m pytest test_openai_calls.py::test_chat" in out
    # Not retried: a miss is a 404 the SDK does not retry.
    assert out.count("REPLAY MISS in") == 1


GEMINI_TEST = """
import pytest
from google import genai

@pytest.mark.invocache
def test_gemini(invocache):
    # No base URL given: the client reads GOOGLE_GEMINI_BASE_URL, which the plugin set.
    client = genai.Client(api_key="gemini-test-not-a-secret")
    out = client.models.generate_content(model="gemini-test", contents="plan it")
    assert out.text == "reply #1 to plan it"
    words = [c.text for c in client.models.generate_content_stream(model="gemini-test", contents="stream it")]
    assert words == ["reply", " #2", " to", " stream it"]
"""


def test_gemini_records_in_auto_then_replays_every_call_without_the_upstream(
    pytester: pytest.Pytester, cli: str, upstream: FakeUpstream
) -> None:
    pytest.importorskip("google.genai", reason="google-genai is installed by .ci/run")
    pytester.makepyfile(test_gemini_calls=GEMINI_TEST)
    args = [f"--invocache-upstream=gemini={upstream.url}"]
    run(pytester, "--invocache-mode=auto", *args).assert_outcomes(passed=1)
    assert upstream.calls == 2
    assert all(":" in r["path"] and "gemini-test" in r["path"] for r in upstream.requests)
    # The key went upstream, never into the cassette.
    assert upstream.requests[0]["headers"].get("x-goog-api-key") == "gemini-test-not-a-secret"
    cassettes = list((pytester.path / "cassettes").rglob("*.yaml"))
    assert len(cassettes) == 1
    assert "gemini-test-not-a-secret" not in cassettes[0].read_text()
    upstream.stop()
    run(pytester, "--invocache-mode=replay", *args).assert_outcomes(passed=1)
    assert upstream.calls == 2


CAUGHT_MISS_TEST = """
import openai, pytest

@pytest.mark.invocache
def test_chat(invocache):
    client = openai.OpenAI(api_key="sk-test-not-a-secret", max_retries=0)
    try:
        client.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "PROMPT"}]
        )
    except openai.APIError:
        pass  # code that survives a failed call hides the miss from pytest
"""


def test_a_replay_miss_the_test_caught_still_fails_it_at_teardown(
    pytester: pytest.Pytester, cli: str, upstream: FakeUpstream
) -> None:
    pytester.makepyfile(test_caught=CAUGHT_MISS_TEST.replace("PROMPT", "plan it"))
    run(pytester, "--invocache-mode=auto", *upstream_args(upstream)).assert_outcomes(passed=1)
    upstream.stop()
    run(pytester, "--invocache-mode=replay", *upstream_args(upstream)).assert_outcomes(passed=1)
    pytester.makepyfile(test_caught=CAUGHT_MISS_TEST.replace("PROMPT", "plan that instead"))
    missed = run(pytester, "--invocache-mode=replay", *upstream_args(upstream))
    missed.assert_outcomes(passed=1, errors=1)
    out = missed.stdout.str()
    assert "REPLAY MISS in test_caught.py::test_chat" in out
    assert "1 request was never recorded" in out
    assert "the test's code caught the error" in out
    # The proxy's miss report, word diff included.
    assert "plan [-it-]{+that instead+}" in out
    assert "Re-record just this test: INVOCACHE_MODE=record python -m pytest test_caught.py::test_chat" in out


PROXY_URL_TEST = """
import pathlib, pytest

@pytest.mark.invocache
def test_where(invocache):
    pathlib.Path("proxy-url.txt").write_text(invocache.proxy_url)
    import os
    assert os.environ["OPENAI_BASE_URL"] == invocache.base_url("openai")
    assert os.environ["OPENAI_BASE_URL"].endswith("/_session/" + invocache.session_id + "/openai/v1")
    assert os.environ["ANTHROPIC_BASE_URL"].endswith("/anthropic")
    assert os.environ["GOOGLE_GEMINI_BASE_URL"].endswith("/gemini")
    assert invocache.mode == "replay"
    assert os.environ["OPENAI_API_KEY"]  # a placeholder in replay, so SDK clients can be built

def test_unmarked():
    import os
    assert "_session/" not in os.environ.get("OPENAI_BASE_URL", "")
"""


def test_the_proxy_is_stopped_at_the_end_of_the_session(
    pytester: pytest.Pytester, cli: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")  # replay by default under CI
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    pytester.makepyfile(test_where=PROXY_URL_TEST)
    run(pytester).assert_outcomes(passed=2)
    url = (pytester.path / "proxy-url.txt").read_text()
    assert url.startswith("http://127.0.0.1:")
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"{url}/_invocache/health", timeout=5)


def test_an_existing_proxy_at_invocache_proxy_url_is_used_and_left_running(
    pytester: pytest.Pytester, cli: str, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shlex

    from pytest_invocache.proxy import start_proxy

    folder = pytester.path / "cassettes"
    folder.mkdir()
    proxy = start_proxy(
        shlex.split(cli),
        ["--port", "0", "--mode", "auto", "--store", str(folder), "--upstream", f"openai={upstream.url}"],
        cwd=pytester.path,
    )
    try:
        monkeypatch.setenv("INVOCACHE_PROXY_URL", proxy.url)
        monkeypatch.setenv("INVOCACHE_CLI", "/nonexistent/invocache-must-not-start")
        pytester.makepyfile(test_openai_calls=OPENAI_TEST)
        run(pytester, "--invocache-mode=auto").assert_outcomes(passed=1)
        assert upstream.calls == 2
        with urllib.request.urlopen(f"{proxy.url}/_invocache/health", timeout=5) as res:
            assert json.loads(res.read())["ok"] is True
    finally:
        proxy.stop()


def test_a_proxy_that_cannot_start_fails_the_test_with_its_output(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = "import sys; sys.stderr.write('store is broken: fix it\\n'); sys.exit(3)"
    monkeypatch.setenv("INVOCACHE_CLI", f"{sys.executable} -c \"{script}\"")
    monkeypatch.delenv("INVOCACHE_PROXY_URL", raising=False)
    pytester.makepyfile(
        test_x="""
        import pytest
        @pytest.mark.invocache
        def test_x():
            pass
        """
    )
    result = run(pytester, "--invocache-mode=auto")
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "exited with code 3" in out
    assert "store is broken: fix it" in out


def test_no_proxy_starts_for_a_session_without_marked_tests(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INVOCACHE_CLI", "/nonexistent/invocache-must-not-start")
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    run(pytester).assert_outcomes(passed=1)


def test_a_bad_upstream_option_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = run(pytester, "--invocache-upstream=nourl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--invocache-upstream 'nourl': expected NAME=URL*"])


@pytest.mark.parametrize(
    ("option", "env", "expected"),
    [
        (None, {}, "auto"),
        (None, {"CI": "true"}, "replay"),
        (None, {"CI": "true", "INVOCACHE_MODE": "record"}, "record"),
        ("verify", {"CI": "true", "INVOCACHE_MODE": "record"}, "verify"),
    ],
)
def test_mode_defaults_like_the_vitest_helper(
    monkeypatch: pytest.MonkeyPatch, option: str | None, env: dict[str, str], expected: str
) -> None:
    for var in ("CI", "INVOCACHE_MODE"):
        monkeypatch.delenv(var, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert resolve_mode(option) == expected


def test_an_unknown_invocache_mode_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INVOCACHE_MODE", "replay-ish")
    with pytest.raises(pytest.UsageError, match="INVOCACHE_MODE='replay-ish' is not a mode"):
        resolve_mode(None)



TIMING_TEST = """
import json, time, openai, pytest

@pytest.mark.invocache
def test_stream_timing(invocache):
    client = openai.OpenAI(api_key="sk-test", max_retries=0)
    start = time.monotonic()
    stream = client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "slowly"}], stream=True
    )
    seen = []
    for c in stream:
        if c.choices and c.choices[0].delta.content:
            seen.append((time.monotonic() - start, c.choices[0].delta.content))
    open("timing.json", "w").write(json.dumps(seen))
"""


def test_a_stream_replays_chunk_by_chunk_with_its_recorded_gaps_at_replay_speed_1(
    pytester: pytest.Pytester, cli: str, upstream: FakeUpstream
) -> None:
    upstream.gap = 0.25  # recorded gaps between events of about 250 ms
    pytester.makepyfile(test_timing=TIMING_TEST)
    run(pytester, "--invocache-mode=auto", *upstream_args(upstream)).assert_outcomes(passed=1)
    recorded = json.loads((pytester.path / "timing.json").read_text())
    upstream.stop()
    run(
        pytester, "--invocache-mode=replay", "--invocache-replay-speed=1", *upstream_args(upstream)
    ).assert_outcomes(passed=1)
    replayed = json.loads((pytester.path / "timing.json").read_text())
    assert [t for _, t in replayed] == [t for _, t in recorded]
    assert len(replayed) == 4
    # Tolerance: the chunks come over at least half the recorded span from the
    # first to the last (the proxy's sleeps never end early; the half absorbs
    # clock and scheduling differences), not at once. Not each gap: the proxy
    # keeps each chunk's time from the start of the answer, so on a busy
    # machine one chunk read late shortens the gap after it. Not the time from
    # the request either: the recording's first call pays the proxy's start.
    span, recorded_span = replayed[-1][0] - replayed[0][0], recorded[-1][0] - recorded[0][0]
    assert recorded_span >= 0.6, recorded  # three gaps of about 250 ms
    assert span >= recorded_span / 2, (replayed, recorded)


ORDER_TEST = """
import openai, pytest

@pytest.mark.invocache
def test_order(invocache):
    client = openai.OpenAI(api_key="sk-test", max_retries=0)
    for prompt in PROMPTS:
        client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": prompt}])
"""


def test_a_replay_that_makes_the_recorded_calls_in_another_order_fails_at_teardown(
    pytester: pytest.Pytester, cli: str, upstream: FakeUpstream
) -> None:
    pytester.makepyfile(test_order=ORDER_TEST.replace("PROMPTS", '["plan", "build"]'))
    run(pytester, "--invocache-mode=auto", *upstream_args(upstream)).assert_outcomes(passed=1)
    upstream.stop()
    run(pytester, "--invocache-mode=replay", *upstream_args(upstream)).assert_outcomes(passed=1)
    # Every call is recorded, but the test's trajectory (its run) is not the recorded one.
    pytester.makepyfile(test_order=ORDER_TEST.replace("PROMPTS", '["build", "plan"]'))
    diverged = run(pytester, "--invocache-mode=replay", *upstream_args(upstream))
    diverged.assert_outcomes(passed=1, errors=1)
    diverged.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_order*",
            "*the run of test_order.py::test_order did not end cleanly (mode replay)*",
            "*took a different trajectory than when it was recorded*",
        ]
    )
