"""A scenario of one's own is a TOML file in the built-ins' format; a bad one is a clear usage error."""

from __future__ import annotations

from pathlib import Path

import pytest

from drivebench.evaluator.sync.scenario import ScenarioError, load_scenario


def test_a_scenario_file_with_includes(tmp_path: Path) -> None:
    f = tmp_path / "mine.toml"
    f.write_text('include = ["content"]\nchanges = [{ class = "trashed", count = 3 }]\n', encoding="utf-8")
    s = load_scenario(str(f))
    assert s.name == "mine" and s.changes[-1] == ("trashed", 3)
    assert ("new-version", 2) in s.changes


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('changes = [{ class = "teleported" }]', "unknown class 'teleported'"),
        ('changes = [{ class = "trashed", count = 0 }]', "count must be a whole number"),
        ("description = 'x'", "no changes"),
        ("changes = [", "scenario"),
    ],
)
def test_bad_scenarios_say_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "bad.toml"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError, match=message):
        load_scenario(str(f))


def test_unknown_name() -> None:
    with pytest.raises(ScenarioError, match="not a built-in"):
        load_scenario("nonesuch")
