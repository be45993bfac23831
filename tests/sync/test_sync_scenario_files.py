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


def test_list_is_the_only_grant_that_does_not_read_so_the_conformance_case_uses_it() -> None:
    """docs/sync.md explains why the case is ``list-only-grant`` and not "upload-only": in this drive every
    action but ``list`` implies ``preview`` (upload included), so a grant of ``list`` is the only one that shows a
    document without its content. Should the drive gain a write-only action, the case (and the page) must change."""
    from drivebench.drive.permissions.actions import ACTIONS, allowed_by
    from drivebench.evaluator.sync.conformance import case_specs
    from tests.support.docs import section

    assert "preview" in allowed_by("upload")
    assert [a for a in ACTIONS if "preview" not in allowed_by(a)] == ["list"]
    assert "list-only-grant" in case_specs() and "upload-only-grant" not in case_specs()
    text = section("sync.md", "ACL-semantics conformance")
    assert "`upload` implies `preview`" in text and "`list-only-grant`" in text
