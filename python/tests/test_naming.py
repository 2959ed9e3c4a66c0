"""Cassette names follow invocache/vitest's rules (cross-checked against the TypeScript code in
test/python/pytest-plugin.test.ts; these pin the Python-only ``.py`` case)."""

from __future__ import annotations

import os

import pytest

from pytest_invocache.naming import cassette_path_for, named_cassette_path, slug


def test_a_python_test_file_is_a_folder_and_the_test_a_slug_with_a_hash() -> None:
    path = cassette_path_for("/repo/tests/test_plan.py", "TestPlanner::test_replans[v2]", root="/repo")
    assert os.path.dirname(path) == "/repo/cassettes/tests/test_plan"
    name = os.path.basename(path)
    assert name.startswith("testplanner-test-replans-v2-") and name.endswith(".yaml")
    assert len(name) == len("testplanner-test-replans-v2-") + 10 + len(".yaml")


def test_names_that_slug_alike_get_different_files() -> None:
    a = cassette_path_for("/repo/tests/test_plan.py", "test a", root="/repo")
    b = cassette_path_for("/repo/tests/test_plan.py", "test-a", root="/repo")
    assert a != b


@pytest.mark.parametrize("name", ["../../etc/passwd", "..", "/abs", "", "\u0000", "a" * 500])
def test_any_test_name_stays_under_the_cassette_folder(name: str) -> None:
    path = cassette_path_for("/repo/tests/test_plan.py", name, root="/repo")
    assert path.startswith("/repo/cassettes/tests/test_plan/")
    assert "/../" not in path


def test_a_test_file_outside_the_root_goes_under_external() -> None:
    path = cassette_path_for("/elsewhere/test_out.py", "test_x", root="/repo")
    assert os.path.dirname(path) == "/repo/cassettes/_external/test_out"


def test_slug_drops_accents_and_punctuation() -> None:
    assert slug("Fix ../../etc (x2)!") == "fix-etc-x2"
    assert slug("café") == "cafe"
    assert slug("!!!") == "test"


def test_named_cassettes_escape_unsafe_characters_and_refuse_escapes() -> None:
    assert named_cassette_path("shared/my planner", root="/repo") == "/repo/cassettes/shared/my~20planner.yaml"
    assert named_cassette_path("shared/planner.yml", root="/repo") == "/repo/cassettes/shared/planner.yml"
    for bad in ("../x", "/etc/x", "a/./b", " "):
        with pytest.raises(TypeError):
            named_cassette_path(bad, root="/repo")
