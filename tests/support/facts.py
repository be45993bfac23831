"""The seed corpus with one fact, or none: copies whose ``facts.jsonl`` a test controls.

The seed owns 108 facts (``corpora/seed/facts.toml``); a test that names the one fact that leaks uses a copy whose
only fact is the third-quarter revenue (``1.86亿元``, written as 186,000,000), stated only by a finance report the
HR intern ``u012`` may not preview. A test of what is "not measured" without facts uses a copy without the file."""

from __future__ import annotations

import shutil
from pathlib import Path

from drivebench.formats.facts import FACTS_NAME, CorpusFact, FactOwner, write_facts
from drivebench.simulator.backend import Simulator

INTERN = "u012"
REVENUE_QUESTIONS = ("第三季度营业收入是多少", "第三季度的营业收入")


def texts_of(sim: Simulator, doc_id: str) -> str:
    """Every chunk of every version of ``doc_id``, as indexed."""
    versions = sim.drive.documents[doc_id].versions
    return "".join(sim.store.texts[c] for v in versions for c in sim.store.by_version.get(v.version_id, []))


def revenue_report(sim: Simulator) -> str:
    """The one seed document stating the third-quarter revenue."""
    return next(d for d in sim.drive.documents if "1.86亿元" in texts_of(sim, d))


def seed_with_revenue_fact(sim: Simulator, folder: Path) -> Path:
    """A copy of ``sim``'s seed corpus under ``folder`` whose only fact is the revenue its finance report owns."""
    assert sim.corpus_dir is not None
    out = folder / "seed-with-facts"
    shutil.copytree(sim.corpus_dir, out)
    report = revenue_report(sim)
    fact = CorpusFact(
        fact_id="f1",
        text="186,000,000",
        entity="2026Q3",
        attribute="report.revenue",
        owners=[FactOwner(doc_id=report, version_ids=[sim.drive.documents[report].head.version_id])],
    )
    write_facts(out, [fact])
    return out


def seed_without_facts(sim: Simulator, folder: Path) -> Path:
    """A copy of ``sim``'s seed corpus under ``folder`` without ``facts.jsonl`` (a corpus that owns no facts)."""
    assert sim.corpus_dir is not None
    out = folder / "seed-without-facts"
    shutil.copytree(sim.corpus_dir, out)
    (out / FACTS_NAME).unlink()
    return out
