"""acme@3: one consistent world, read the way a careful reader reads it.

Every check reads what the simulator extracts from the real files (or the files themselves), never the
generator's plans: the rows of every budget and bill of materials add up, every contract's value is its
quantity times its price, dates run in causal order across linked documents, every document's own number is
unique, and every question names only what its asker may see. The audit's acceptance figures (difficulty,
composition, gold lint, chain shortcuts) are in ``test_acme_v3_audit.py``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from datetime import date
from pathlib import Path

import numpy as np
import openpyxl
import pytest

from drivebench.corpora.builtin import corpus_version, resolve_corpus
from drivebench.corpora.validate import validate_corpus
from drivebench.drive.clock import as_utc
from drivebench.formats.corpus import EVALSET_NAME, Manifest, load_manifest
from drivebench.formats.evalset import EvalQuery, load_evalset
from drivebench.simulator.backend import SimConfig, Simulator

MONTHS = {
    m: i
    for i, m in enumerate(
        [
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ],
        1,
    )
}
ZH_DATE = re.compile(r"(\d{4})年(\d{1,2})月(\d{1,2})日")
EN_DATE = re.compile(
    r"(January|February|March|April|May|June|July|August|September|October|November|December) "
    r"(\d{1,2}), (\d{4})"
)
CODE = re.compile(r"\b[A-Z]{2,4}-[0-9A-Z]+(?:-[0-9]+)*\b")


def squeeze(text: str) -> str:
    return "".join(text.split()).lower()


class World:
    def __init__(self, label: str) -> None:
        self.dir = resolve_corpus(label)
        self.lang = label.split("-")[1].split("@")[0]
        self.m: Manifest = load_manifest(self.dir)
        self.queries: list[EvalQuery] = load_evalset(self.dir / EVALSET_NAME)
        self.sim = Simulator.from_corpus(self.dir, SimConfig(pipeline="bm25", embedder="hash"))
        store = self.sim.store
        self.version_text = {v: "\n".join(store.texts[c] for c in cs) for v, cs in store.by_version.items()}
        self.docs = {d.doc_id: d for d in self.m.documents}
        self.live = [d for d in self.m.documents if d.trashed_at is None]

    def head(self, doc_id: str) -> str:
        return self.version_text[self.docs[doc_id].versions[-1].version_id]

    def dates(self, text: str) -> list[date]:
        if self.lang == "zh":
            return [date(int(y), int(m), int(d)) for y, m, d in ZH_DATE.findall(text)]
        return [date(int(y), MONTHS[m], int(d)) for m, d, y in EN_DATE.findall(text)]

    def after(self, label: str, text: str) -> str:
        """The rest of the line after ``label`` (the first line holding it)."""
        for line in text.splitlines():
            if label in line:
                return line.split(label, 1)[1]
        raise AssertionError(f"no {label!r} in {text[:200]!r}")

    def visible(self, q: EvalQuery) -> set[str]:
        principal = self.sim.engine.user_principal(q.user_id)  # type: ignore[arg-type]
        at = as_utc(q.as_of) if q.as_of is not None else as_utc(self.m.clock.now)
        mask = self.sim.visible_chunks(principal, at)
        return {self.sim.store.doc_ids[c] for c in np.flatnonzero(mask)}


@pytest.fixture(scope="module", params=["acme-zh@3", "acme-en@3"])
def world(request: pytest.FixtureRequest) -> World:
    return World(request.param)


LABELS = {
    "zh": {
        "charter": "项目立项书",
        "filed": "立项申请提交日期：",
        "approved": "立项批准日期：",
        "kickoff": "计划启动日期：",
        "end": "计划结项日期：",
        "signed": "签订日期：",
        "deliver": "交货日期：",
        "po": "合同编号：",
        "accepted": "验收日期：",
        "paid": "付款日期",
        "total_row": "合计",
    },
    "en": {
        "charter": "Project charter",
        "filed": "Request filed: ",
        "approved": "Charter approved: ",
        "kickoff": "Planned start: ",
        "end": "Planned completion: ",
        "signed": "Date signed: ",
        "deliver": "Delivery date: ",
        "po": "Contract number: ",
        "accepted": "Accepted on: ",
        "paid": "Paid on",
        "total_row": "Total",
    },
}


@pytest.mark.slow
def test_built_in_valid_and_labelled(world: World) -> None:
    errors = [p for p in validate_corpus(world.dir) if p.level == "error"]
    assert errors == []
    assert corpus_version(world.dir) == f"acme-{world.lang}@3"
    assert len(world.queries) >= 300 and len(world.live) >= 300


def _number(cell: object) -> int | None:
    text = str(cell or "").replace(",", "").strip()
    return int(text) if text.isdigit() else None


@pytest.mark.slow
def test_tables_add_up(world: World) -> None:
    """Every budget (label, amount rows) and bill of materials (qty x unit = line) sums to its total row, in
    every version's real xlsx file."""
    total_label = LABELS[world.lang]["total_row"]
    checked = Counter()
    for d in world.live:
        if d.file_type != "xlsx" or d.tags.get("kind") not in ("budget", "bom"):
            continue
        for v in d.versions:
            rows = [
                [c for c in row if c not in (None, "")]
                for row in openpyxl.load_workbook(world.dir / v.file).active.iter_rows(values_only=True)
            ]
            rows = [r for r in rows if r]
            total_row = next(r for r in rows if str(r[0]) == total_label)
            if d.tags["kind"] == "budget":
                amounts = [
                    _number(r[1]) for r in rows if len(r) == 2 and r is not total_row and _number(r[1]) is not None
                ]
                assert amounts and sum(amounts) == _number(total_row[-1]), (d.doc_id, v.version)  # type: ignore[arg-type]
            else:
                lines = [r for r in rows if len(r) == 5 and _number(r[2]) is not None]
                for r in lines:
                    assert _number(r[2]) * _number(r[3]) == _number(r[4]), (d.doc_id, r)  # type: ignore[operator]
                assert sum(_number(r[4]) for r in lines) == _number(total_row[-1]), d.doc_id  # type: ignore[misc]
            checked[d.tags["kind"]] += 1
    assert checked["budget"] >= 12 and checked["bom"] >= 12, checked


@pytest.mark.slow
def test_derived_figures_follow_from_their_inputs(world: World) -> None:
    """A contract's value is quantity x unit price; a payment pays its contract's value; a test report's pass
    rate is passed / run (every version)."""
    value = {
        "zh": (
            r"数量：(\d+) 件；单价：([\d,]+) 元",
            r"合同总价：([\d,]+) 元",
            r"付款金额（元） ([\d,]+)",
            r"测试用例 (\d+) 个，通过 (\d+) 个",
            r"用例通过率：([\d.]+)%",
        ),
        "en": (
            r"Quantity: (\d+) pcs; unit price: USD ([\d,]+)",
            r"Contract value: USD ([\d,]+)",
            r"Amount \(USD\) ([\d,]+)",
            r"(\d+) test cases run, (\d+) passed",
            r"Pass rate: ([\d.]+)%",
        ),
    }[world.lang]
    totals: dict[str, int] = {}
    n = Counter()
    for d in world.live:
        for v in d.versions:
            text = world.version_text[v.version_id]
            if d.tags.get("kind") == "contract":
                qty, unit = re.search(value[0], text).groups()  # type: ignore[union-attr]
                total = int(re.search(value[1], text).group(1).replace(",", ""))  # type: ignore[union-attr]
                assert int(qty) * int(unit.replace(",", "")) == total, d.doc_id
                po = world.after(LABELS[world.lang]["po"], text).strip()
                totals[po] = total
                n["contract"] += 1
            if d.tags.get("kind") == "test_report":
                run, passed = map(int, re.search(value[3], text).groups())  # type: ignore[union-attr]
                rate = float(re.search(value[4], text).group(1))  # type: ignore[union-attr]
                assert passed <= run and rate == round(100 * passed / run, 1), d.doc_id
                n["test_report"] += 1
    for d in world.live:
        if d.tags.get("kind") == "payment":
            text = world.head(d.doc_id)
            po = next(c for c in CODE.findall(text) if c.startswith("PO-"))
            assert int(re.search(value[2], text).group(1).replace(",", "")) == totals[po], d.doc_id  # type: ignore[union-attr]
            n["payment"] += 1
    assert n["contract"] >= 36 and n["payment"] >= 36 and n["test_report"] >= 12, n


@pytest.mark.slow
def test_dates_run_in_causal_order(world: World) -> None:
    """Filed before approved before the planned start before the planned end; signed before delivered before
    accepted before paid (linked through the contract and inspection numbers), in every version."""
    L = LABELS[world.lang]
    first = lambda label, text: world.dates(world.after(label, text))[0]  # noqa: E731
    charters = deliveries = accepted = 0
    deliver_by_po: dict[str, date] = {}
    accepted_by_iqc: dict[str, date] = {}
    for d in world.live:
        for v in d.versions:
            text = world.version_text[v.version_id]
            kind = d.tags.get("kind")
            if kind == "charter":
                assert (
                    first(L["filed"], text)
                    < first(L["approved"], text)
                    <= first(L["kickoff"], text)
                    < first(L["end"], text)
                )
                charters += 1
            if kind == "contract":
                signed, deliver = first(L["signed"], text), first(L["deliver"], text)
                assert signed < deliver, d.doc_id
                po = world.after(L["po"], text).strip()
                deliver_by_po[po] = max(deliver_by_po.get(po, deliver), deliver)
                deliveries += 1
    for d in world.live:
        text = world.head(d.doc_id)
        if d.tags.get("kind") == "acceptance":
            po = next(c for c in CODE.findall(text) if c.startswith("PO-"))
            iqc = next(c for c in CODE.findall(text) if c.startswith("IQC-"))
            accepted_by_iqc[iqc] = first(L["accepted"], text)
            assert accepted_by_iqc[iqc] >= deliver_by_po[po], d.doc_id
            accepted += 1
    for d in world.live:
        if d.tags.get("kind") == "payment":
            text = world.head(d.doc_id)
            iqc = next(c for c in CODE.findall(text) if c.startswith("IQC-"))
            assert first(L["paid"], text) > accepted_by_iqc[iqc], d.doc_id
    assert charters >= 12 and deliveries >= 36 and accepted >= 36
    years = {dt.year for d in world.live for v in d.versions for dt in world.dates(world.version_text[v.version_id])}
    assert years <= {2026, 2027}, years  # no digit perturbation ever reaches a year


@pytest.mark.slow
def test_every_document_number_is_its_own(world: World) -> None:
    """The number in a document's name (contract, inspection, payment, review, drawing, budget...) names no other
    document; each project code heads exactly one charter."""
    owners: dict[str, list[str]] = defaultdict(list)
    for d in world.live:
        for code in CODE.findall(d.name):
            owners[code].append(d.doc_id)
    assert len(owners) >= 200
    assert {c: ids for c, ids in owners.items() if len(ids) > 1} == {}
    charters = [d for d in world.live if d.tags.get("kind") == "charter"]
    codes = [next(c for c in CODE.findall(world.head(d.doc_id)) if c.startswith("PRJ-")) for d in charters]
    assert len(codes) == len(set(codes)) == len(charters) >= 12


@pytest.mark.slow
def test_every_question_is_answerable_by_its_asker(world: World) -> None:
    """The asker may preview every gold document at the question's time; the pinned version holds the answer
    and the anchors; every code a question names exists in a document (none is invented or perturbed); a
    permission question's forbidden document is one the asker may not preview."""
    every_text = "\n".join(world.version_text.values())
    for q in world.queries:
        seen = world.visible(q)
        for code in CODE.findall(q.query):
            assert code in every_text, (q.query_id, code)
        if q.tags.get("kind") == "permission":
            assert not q.gold and q.forbidden and not set(q.forbidden) & seen, q.query_id
            continue
        assert q.gold and set(q.gold_ids) <= seen, q.query_id
        last = q.gold[-1] if not q.hops else next(g for g in q.gold if g.doc_id == q.hops[-1])
        text = re.sub(r"\s+", "", world.version_text[last.version_id]).lower()  # type: ignore[index]
        for s in [*q.answer_facts, *(q.anchors or [])]:
            assert re.sub(r"\s+", "", s).lower() in text, (q.query_id, s)


@pytest.mark.slow
def test_no_names_from_the_other_language(world: World) -> None:
    """A question names people, projects and suppliers of its own corpus only (a cross-language question is
    worded in the other language but uses language-neutral values: codes and model numbers)."""
    other = load_manifest(resolve_corpus(f"acme-{'en' if world.lang == 'zh' else 'zh'}@3"))
    names = {u.name for u in other.users} | {p.name for p in other.projects}
    for q in world.queries:
        assert not [n for n in names if n in q.query], q.query_id
    crossed = [q for q in world.queries if q.tags.get("phrasing") == "cross_language"]
    cjk = [bool(re.search(r"[\u4e00-\u9fff]", q.query)) for q in crossed]
    assert crossed and all(c == (world.lang == "en") for c in cjk), [q.query for q in crossed]


@pytest.mark.slow
def test_export_drive_writes_every_file_of_the_default_corpora(world: World, tmp_path: Path) -> None:
    """``corpus export-drive`` succeeds on acme@3 (acme@2 is refused: two live documents at one path): every
    version of every document lands at its own path, live ones under drive/ at their folder, and the id map
    names each live document by its path."""
    from drivebench.corpora.export_drive import export_drive

    counts = export_drive(world.dir, tmp_path / "export")
    versions = sum(len(d.versions) for d in world.m.documents)
    assert counts["files"] == versions and counts["trashed"] == len(world.m.documents) - len(world.live) > 0
    written = [
        p
        for p in (tmp_path / "export").rglob("*")
        if p.is_file() and p.suffix[1:] in {d.file_type for d in world.m.documents}
    ]
    assert len(written) == versions
    for d in world.live[:: max(1, len(world.live) // 25)]:
        assert (tmp_path / "export" / "drive" / d.folder.lstrip("/") / d.name).is_file(), d.doc_id
    id_map = (tmp_path / "export" / "id_map.csv").read_text(encoding="utf-8")
    assert all(f"{d.folder.rstrip('/')}/{d.name}" in id_map for d in world.live)


V3_CHECKSUMS = Path(__file__).parent / "data" / "acme_v3_checksums.json"


@pytest.mark.slow
@pytest.mark.parametrize("label", ["acme-zh@3", "acme-en@3"])
def test_version_3_builds_the_committed_bytes(label: str) -> None:
    """A released version never changes: the build equals the committed checksum list, file for file."""
    import json

    from drivebench.corpora.checksums import tree_checksums, tree_digest

    expected = json.loads(V3_CHECKSUMS.read_text(encoding="utf-8"))["corpora"][label]
    got = tree_checksums(resolve_corpus(label))
    assert sorted(set(got) ^ set(expected["files"])) == []
    assert [p for p in expected["files"] if got[p] != expected["files"][p]] == []
    assert tree_digest(got) == expected["digest"]


@pytest.mark.slow
def test_the_build_does_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    """A process with another string-hash seed builds the same bytes as this one (a set's order once chose where a
    typo went, so a build differed from process to process). One side is built here, the other in a child
    process whose PYTHONHASHSEED differs from this process's (random unless set)."""
    import os
    import subprocess
    import sys

    from drivebench.corpora.acme3.build import build_acme3
    from drivebench.corpora.checksums import tree_checksums, tree_digest

    script = (
        "import sys; from pathlib import Path; from drivebench.corpora.acme3.build import build_acme3; "
        "from drivebench.corpora.checksums import tree_checksums, tree_digest; "
        "out = Path(sys.argv[1]); build_acme3(out, language='zh', scale=60); print(tree_digest(tree_checksums(out)))"
    )
    other_seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    child = subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path / "child")],
        env={**os.environ, "PYTHONHASHSEED": other_seed},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    build_acme3(tmp_path / "here", language="zh", scale=60)
    here = tree_digest(tree_checksums(tmp_path / "here"))
    out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err[-2000:]
    assert out.strip().splitlines()[-1] == here


def test_every_fact_is_stated_by_the_versions_it_names(world: World) -> None:
    """``facts.jsonl``: each fact's value is in the extracted text of every version its owners list (as the
    evaluator normalises it, in the versions of the document it was drawn for; as written, in the others: a
    value inside a code makes a co-owner too, so an answer is never counted a leak for what a visible document
    spells); one value per (entity, attribute) is the current one, and the values a revision replaced say so
    (``current`` false, only the old versions listed)."""
    from drivebench.evaluator.fact_text import normalise, stated
    from drivebench.formats.facts import load_facts

    facts = load_facts(world.dir)
    assert facts is not None and len(facts) > 300
    for f in facts:
        assert f.owners[0].doc_id in world.docs
        for version_id in f.owners[0].version_ids:
            assert stated(f.text, normalise(world.version_text[version_id])), (f.fact_id, version_id)
        for owner in f.owners[1:]:
            for version_id in owner.version_ids:
                assert squeeze(f.text) in squeeze(world.version_text[version_id]), (f.fact_id, version_id)
    by_attribute: dict[tuple[str, str, str], list[bool]] = defaultdict(list)
    for f in facts:
        by_attribute[(f.owners[0].doc_id, f.entity, f.attribute)].append(f.current)
    assert all(flags.count(True) <= 1 for flags in by_attribute.values())
    replaced = [f for f in facts if not f.current]
    assert replaced, "some revision changes an owned value"
    for f in replaced:
        head = world.docs[f.owners[0].doc_id].versions[-1].version_id
        assert head not in f.owners[0].version_ids
    kinds = Counter(f.attribute.split(".")[0] for f in facts)
    assert {"budget", "contract", "charter", "payment"} <= set(kinds)
