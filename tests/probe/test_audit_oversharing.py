"""The oversharing audit on a copy of acme-zh (small scale) with the documented planted overshares:
it finds every plant and flags nothing else at the default threshold; chains name the grants."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.corpora.builtin import resolve_corpus
from drivebench.corpora.plants import apply_plants, load_spec
from drivebench.drive.permissions import PermissionEngine
from drivebench.drive.state import Drive
from drivebench.evaluator.audit.oversharing import DEFAULT_THRESHOLD, audit_oversharing, findings
from drivebench.formats.corpus import Manifest, load_manifest
from tests.support.decisions import user_may_preview


@pytest.fixture(scope="module")
def base() -> Manifest:
    return load_manifest(resolve_corpus("acme-zh@1", scale="small"))


@pytest.fixture(scope="module")
def planted(base: Manifest) -> tuple[Manifest, list[dict]]:
    return apply_plants(base)


def test_the_unplanted_corpus_has_no_finding(base: Manifest) -> None:
    result = audit_oversharing(base)
    assert result["counts"]["documents"] >= 20 and findings(result) == set()
    # the widest legitimate reach (managers, auditors) stays under the default threshold
    assert 8 <= max(d["previewers_outside_department"] for d in result["documents"]) <= DEFAULT_THRESHOLD


def test_the_audit_finds_exactly_the_plants(planted: tuple[Manifest, list[dict]]) -> None:
    manifest, applied = planted
    spec = load_spec()
    assert [a["plant"] for a in applied] == [p["id"] for p in spec["plants"]]
    assert len({a["doc_id"] for a in applied}) == len(applied)
    result = audit_oversharing(manifest, spec["level"])
    assert findings(result) == {(a["expect"], a["doc_id"]) for a in applied}
    flagged = [d for d in result["documents"] if d["flags"]]
    assert result["documents"][: len(flagged)] != [] and result["documents"][0]["flags"]  # sorted by risk
    for a in applied:  # each finding names the planted grant
        doc = next(d for d in result["documents"] if d["doc_id"] == a["doc_id"])
        assert any(a["grant_id"] in f["grants"] for f in doc["flags"])


def test_plants_are_real_access(planted: tuple[Manifest, list[dict]], base: Manifest) -> None:
    """The plants change Casbin's decisions, not just the manifest: P1 opens a confidential document
    to every confidential-cleared user; P4's grant outlives the raise."""
    manifest, applied = planted
    engine = PermissionEngine(Drive.from_manifest(manifest, None))
    before = PermissionEngine(Drive.from_manifest(base, None))
    now = engine.drive.clock.now()
    p1 = next(a for a in applied if a["plant"] == "P1-everyone")["doc_id"]
    cleared = [u.user_id for u in manifest.users if u.clearance in ("confidential", "secret")]
    assert all(user_may_preview(engine, u, p1, now) for u in cleared)
    assert len(cleared) - sum(user_may_preview(before, u, p1, now) for u in cleared) >= 10  # 12 newly opened
    p4 = next(a for a in applied if a["plant"] == "P4-raised-level")
    assert engine.drive.documents[p4["doc_id"]].secret_level == 2  # raised to confidential
    assert user_may_preview(engine, p4["subject"]["id"], p4["doc_id"], now)


@pytest.mark.parametrize("name", ["acme-zh@1", "acme-en@1"])
def test_plants_in_both_languages(name: str) -> None:
    manifest, applied = apply_plants(load_manifest(resolve_corpus(name, scale="small")))
    assert findings(audit_oversharing(manifest)) == {(a["expect"], a["doc_id"]) for a in applied}
    assert {a["expect"] for a in applied} == {"broad-subject", "stale-membership", "outlived-classification"}


def test_a_threshold_above_the_plants_reach_hides_broad_findings(planted: tuple[Manifest, list[dict]]) -> None:
    manifest, _ = planted
    result = audit_oversharing(manifest, threshold=40)
    assert {f for f, _ in findings(result)} == {"stale-membership", "outlived-classification"}


def test_cli_plant_and_audit(tmp_path: Path, base: Manifest) -> None:
    src = Path(resolve_corpus("acme-zh@1", scale="small"))
    runner = CliRunner()
    res = runner.invoke(app, ["audit", "plant", str(src), "--out", str(tmp_path / "planted")])
    assert res.exit_code == 0, res.output
    applied = json.loads((tmp_path / "planted" / "planted_overshares.json").read_text(encoding="utf-8"))
    res = runner.invoke(app, ["audit", "oversharing", str(tmp_path / "planted"), "--out", str(tmp_path / "a")])
    assert res.exit_code == 1  # something flagged
    result = json.loads((tmp_path / "a" / "oversharing.json").read_text(encoding="utf-8"))
    assert findings(result) == {(a["expect"], a["doc_id"]) for a in applied}
    html = (tmp_path / "a" / "oversharing.html").read_text(encoding="utf-8")
    assert "<script" not in html and "src=" not in html and "4 flagged" in html
    assert html.index(applied[0]["doc_id"]) < html.index("</table>")
    # flags in words, never a Python list or dict (a grant list read ['g0032', ...] once)
    assert "[&#x27;" not in html and "[&#39;" not in html and "=[" not in html and "broad-subject (users " in html
    res = runner.invoke(app, ["audit", "oversharing", str(src), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["counts"]["flagged"] == 0
    res = runner.invoke(app, ["audit", "oversharing", str(src), "--level", "top"])
    assert res.exit_code == 2
