"""A leak says why the document must not be seen: the grant and deny chain the leak oracle's Casbin engine used
(a deny and the folder it sits on, the clearance veto, a grant that expired, a folder that breaks inheritance), in
failed_queries.jsonl, report.md, report.html and the JUnit message; the explanation always agrees with ``enforce``."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from drivebench.corpora.builtin import resolve_corpus
from drivebench.drive.permissions.compiler import doc_obj
from drivebench.evaluator.catalog import Catalog
from drivebench.evaluator.evaluate import evaluate, write_outputs
from drivebench.evaluator.failed_queries import FAILED_QUERIES_JSONL
from drivebench.evaluator.gates import write_junit
from drivebench.evaluator.oracle import DriveOracle, corpus_oracle
from drivebench.evaluator.report.outputs import write_reports
from drivebench.evaluator.targets.function import FunctionTarget
from drivebench.formats.corpus import load_manifest
from drivebench.formats.evalset import EvalQuery, GoldDoc


@pytest.fixture(scope="module")
def oracle() -> DriveOracle:
    return corpus_oracle(resolve_corpus("seed"))


def _asks(user: str) -> EvalQuery:
    return EvalQuery(query_id=f"q-{user}", query="项目X的预算是多少?", user_id=user, gold=[])


def test_the_explanation_agrees_with_enforce_on_every_user_and_document(oracle: DriveOracle) -> None:
    """Every (user, document) of the seed corpus: reasons are given exactly when Casbin's ``enforce`` refuses."""
    engine = oracle.engine
    refused = 0
    for user in sorted(oracle.drive.users):
        q = _asks(user)
        principal = engine.user_principal(user)
        for doc_id in engine.doc_ids:
            level = oracle.drive.doc(doc_id).secret_level
            allowed = engine.enforce(principal, doc_obj(doc_id), "preview", oracle.at, level)
            reasons = oracle.explain(q, doc_id)
            assert (reasons == []) == allowed, (user, doc_id, reasons)
            assert not any("disagreed" in r for r in reasons), reasons
            refused += not allowed
    assert refused > 50  # the seed corpus has many forbidden pairs: the loop judged real refusals


def test_a_deny_names_its_folder_or_document_subject_and_grant(oracle: DriveOracle) -> None:
    drive = oracle.drive
    deny = next(g for g in drive.grants.values() if g.effect == "deny" and g.subject.startswith("user:"))
    user = deny.subject.removeprefix("user:")
    doc_id = deny.doc_id or next(d.doc_id for d in drive.documents.values() if d.folder_id == deny.folder_id)
    reasons = oracle.explain(_asks(user), doc_id)
    where = drive.doc_path(drive.doc(doc_id)) if deny.doc_id else drive.folder_path(deny.folder_id or "")
    kind = "document" if deny.doc_id else "folder"
    assert f"{kind} {where} denies user:{user}" in reasons[0] and f"grant {deny.grant_id}" in reasons[0], reasons


def test_clearance_expiry_and_a_broken_inheritance_are_named(oracle: DriveOracle) -> None:
    drive = oracle.drive
    texts = {(u, d): " | ".join(oracle.explain(_asks(u), d)) for u in drive.users for d in drive.documents}
    veto = next(
        (u, d)
        for u, user in drive.users.items()
        for d, doc in drive.documents.items()
        if doc.secret_level > user.clearance
    )
    level, clearance = drive.doc(veto[1]).secret_level, drive.user(veto[0]).clearance
    assert f"secret level {level} " in texts[veto] and f"clearance {clearance} " in texts[veto], texts[veto]
    expired = next(g for g in drive.grants.values() if g.valid_until is not None and g.valid_until < oracle.at)
    assert any(
        f"grant {expired.grant_id} " in t and f"expired {expired.valid_until.date()}" in t for t in texts.values()
    )
    broken = next(f for f in drive.folders.values() if f.break_inheritance and f.parent_id is not None)
    assert any(f"folder {drive.folder_path(broken.folder_id)} breaks inheritance" in t for t in texts.values())


def test_a_leak_row_carries_the_chain_into_the_jsonl_reports_and_junit(oracle: DriveOracle, tmp_path: Path) -> None:
    catalog = Catalog.from_manifest(load_manifest(resolve_corpus("seed")))
    drive = oracle.drive
    deny = next(g for g in drive.grants.values() if g.effect == "deny" and g.doc_id and g.subject.startswith("user:"))
    user, secret = deny.subject.removeprefix("user:"), deny.doc_id or ""
    q = EvalQuery(query_id="leak-1", query="加密模块设计", user_id=user, gold=[GoldDoc(doc_id=secret)])
    evaluation = evaluate(FunctionTarget(lambda *_: [secret]), [q], oracle=oracle, catalog=catalog)
    (row,) = evaluation.result["failed_queries"]["rows"]
    (leaked,) = row["leaked"]
    assert leaked["doc_id"] == secret and leaked["why"] == oracle.explain(q, secret)
    assert f"grant {deny.grant_id}" in leaked["why"][0]
    out = write_outputs(evaluation, tmp_path / "run")
    stored = [json.loads(x) for x in (out / FAILED_QUERIES_JSONL).read_text(encoding="utf-8").splitlines()]
    assert stored[0]["leaked"][0]["why"] == leaked["why"]
    md, html = write_reports(evaluation.result, out)
    section = md.read_text(encoding="utf-8").split("## Queries that missed or leaked", 1)[1].split("\n## ", 1)[0]
    assert f"(why: {leaked['why'][0]}" in section
    assert escape(leaked["why"][0]) in html.read_text(encoding="utf-8")
    junit = write_junit(tmp_path / "junit.xml", evaluation.result, [])
    (case,) = ET.parse(junit).getroot().findall(".//testsuite[@name='drivebench.queries']/testcase")
    message = case.find("failure").get("message")  # type: ignore[union-attr]
    assert f"why: {leaked['why'][0]}" in message


def test_the_eval_set_oracle_names_the_forbidden_list() -> None:
    q = EvalQuery(query_id="q1", query="budget", user_id="alice", gold=[GoldDoc(doc_id="g")], forbidden=["secret-1"])
    evaluation = evaluate(FunctionTarget(lambda *_: ["secret-1", "g"]), [q])
    (row,) = evaluation.result["failed_queries"]["rows"]
    assert row["leaked"][0]["why"] == ["the eval set lists secret-1 among query q1's forbidden documents"]
