"""The overshares acme@2 plants (``evaluator/audit/planted_overshares.json``) are in the built corpus, the
eval set's access ground truth sees them, and ``audit oversharing`` finds exactly them at the default
threshold, on the default builds of acme-zh@2 and acme-en@2 (shared with the audit test's cache).
The guests of ``scenario/story.toml`` (principals with small visible sets) flag nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.corpora.acme2.build import PLANTED
from drivebench.corpora.builtin import resolve_corpus
from drivebench.corpora.plants import apply_plants, load_spec
from drivebench.drive.permissions import PermissionEngine
from drivebench.drive.state import Drive
from drivebench.evaluator.audit.oversharing import DEFAULT_THRESHOLD, audit_oversharing, findings
from drivebench.formats.corpus import load_manifest
from tests.support.decisions import user_may_preview


@pytest.fixture(scope="module", params=["acme-zh@2", "acme-en@2"])
def corpus(request: pytest.FixtureRequest) -> Path:
    return resolve_corpus(request.param)


def test_the_audit_finds_exactly_the_documented_plants(corpus: Path) -> None:
    planted = json.loads((corpus / PLANTED).read_text(encoding="utf-8"))
    spec = load_spec()
    assert [p["plant"] for p in planted] == [p["id"] for p in spec["plants"]]
    assert len({p["doc_id"] for p in planted}) == len(planted)
    manifest = load_manifest(corpus)
    result = audit_oversharing(manifest, spec["level"], DEFAULT_THRESHOLD)
    assert findings(result) == {(p["expect"], p["doc_id"]) for p in planted}
    assert {p["expect"] for p in planted} == {"broad-subject", "stale-membership", "outlived-classification"}
    for p in planted:  # each finding names the planted grant
        doc = next(d for d in result["documents"] if d["doc_id"] == p["doc_id"])
        assert any(p["grant_id"] in f["grants"] for f in doc["flags"])


def test_the_plants_are_in_the_access_ground_truth(corpus: Path) -> None:
    """Planted before the eval set: ``manifest.access`` (the eval set's ground truth) equals Casbin's
    decisions with the plants, and the 'everyone' plant opens its document to every cleared user."""
    manifest = load_manifest(corpus)
    planted = {p["plant"]: p for p in json.loads((corpus / PLANTED).read_text(encoding="utf-8"))}
    engine = PermissionEngine(Drive.from_manifest(manifest, None))
    now = engine.drive.clock.now()
    access = {u: set(v) for u, v in (manifest.access or {}).items()}
    p1 = planted["P1-everyone"]["doc_id"]
    cleared = [u.user_id for u in manifest.users if u.clearance in ("confidential", "secret")]
    assert cleared and all(p1 in access[u] for u in cleared)
    for u in manifest.users:
        assert user_may_preview(engine, u.user_id, p1, now) == (p1 in access[u.user_id])
    raised = next(d for d in manifest.documents if d.doc_id == planted["P4-raised-level"]["doc_id"])
    assert raised.secret_level == "confidential" and raised.tags["level_was"] == "internal"


def test_guests_see_little_and_ask(corpus: Path) -> None:
    """Principals with small visible sets exist and ask questions (permission difficulty)."""
    manifest = load_manifest(corpus)
    report = json.loads((corpus / "generation.json").read_text(encoding="utf-8"))
    assert report["guests"] >= 10
    assert report["median_visible_documents_of_askers"] <= 40
    guests = [u.user_id for u in manifest.users if u.roles == ["guest"]]
    assert len(guests) == report["guests"]
    assert max(len((manifest.access or {})[g]) for g in guests) <= 40
    assert min(len((manifest.access or {})[g]) for g in guests) >= 4


def test_cli_audit_oversharing_on_acme_v2(corpus: Path) -> None:
    planted = json.loads((corpus / PLANTED).read_text(encoding="utf-8"))
    res = CliRunner().invoke(app, ["audit", "oversharing", str(corpus), "--json"])
    assert res.exit_code == 1, res.output  # something flagged
    result = json.loads(res.stdout)
    assert result["counts"]["flagged"] == len(planted)
    assert findings(result) == {(p["expect"], p["doc_id"]) for p in planted}


def test_planting_twice_is_refused(corpus: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="already carries planted overshares"):
        apply_plants(load_manifest(corpus))
    res = CliRunner().invoke(app, ["audit", "plant", str(corpus), "--out", str(tmp_path / "again")])
    assert res.exit_code == 2 and "already carries planted overshares" in res.output
