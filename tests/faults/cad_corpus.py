"""A small English corpus with DXF drawings, for the ``cad-blind`` fault (the seed corpus has no dxf).

Twelve drawings (``S-101.dxf`` ...), each holding one fact in its annotations and title block only
(the drawing's title and file name say nothing about it), and twelve markdown notes on the same
construction topics without those facts (they become the better match once drawings are read by
file name only). The eval set asks twelve questions whose gold is a drawing and eight whose gold is
a note, tagged with ``file_type`` so the evaluator's ``file_type`` stratum separates them.
"""

from __future__ import annotations

from pathlib import Path

from drivebench.corpora.format import (
    EVALSET_NAME,
    Clock,
    Department,
    Document,
    Folder,
    Grant,
    Manifest,
    Subject,
    User,
    Version,
    write_manifest,
)
from drivebench.corpora.render import render
from drivebench.corpora.render.spec import DocSpec, Section
from drivebench.evaluator.schema import EvalQuery, GoldDoc, write_jsonl

NOW = "2026-06-01T00:00:00+00:00"
CREATED = "2026-03-01T00:00:00+00:00"

# (fact written on the drawing, question about it)
DRAWINGS: list[tuple[str, str]] = [
    (
        "The north abutment pier cap uses C45 concrete with 50 mm cover to all reinforcement.",
        "What concrete grade is specified for the north abutment pier cap?",
    ),
    (
        "Bearing pads at the expansion joint are laminated elastomeric pads 400 by 300 millimetres.",
        "What size are the elastomeric bearing pads at the expansion joint?",
    ),
    (
        "Deck drainage scuppers are spaced every 6 metres along the western parapet.",
        "How far apart are the deck drainage scuppers along the parapet?",
    ),
    (
        "Post-tensioning tendons in the box girder consist of 19 strands of 15.2 mm diameter.",
        "How many strands make up each post-tensioning tendon of the box girder?",
    ),
    (
        "Piles under the south pier are bored piles of 1.5 m diameter founded 32 m deep.",
        "What diameter are the bored piles under the south pier?",
    ),
    (
        "The pedestrian railing is stainless steel grade 316 with a height of 1.2 m.",
        "Which stainless steel grade is the pedestrian railing made of?",
    ),
    (
        "Anchor bolts for the lighting poles are M24 hot-dip galvanized bolts.",
        "What size are the anchor bolts of the lighting poles?",
    ),
    (
        "The deck waterproofing membrane is a 5 mm spray-applied polyurea layer.",
        "What waterproofing membrane is applied on the bridge deck?",
    ),
    (
        "Retaining wall weep holes use 100 mm PVC pipes at 2 m centres.",
        "What pipes are used for the retaining wall weep holes?",
    ),
    (
        "Cable stay sockets are designed for a breaking load of 12000 kN.",
        "What breaking load are the cable stay sockets designed for?",
    ),
    (
        "Approach slab reinforcement is T16 bars at 150 mm spacing both ways.",
        "What reinforcement bars are used in the approach slab?",
    ),
    (
        "Navigation lights on the main span are red LED lanterns visible at 2 nautical miles.",
        "How far away are the main span navigation lights visible?",
    ),
]

# (title, paragraphs, question or None): notes on the same topics, without the drawings' facts
NOTES: list[tuple[str, list[str], str | None]] = [
    (
        "Concrete curing procedure",
        [
            "Concrete for the pier caps and abutments must be moist cured for at least 7 days.",
            "Curing compound is not allowed on construction joints.",
        ],
        "How many days must the pier cap concrete be moist cured?",
    ),
    (
        "Bearing inspection checklist",
        [
            "Inspect every elastomeric bearing for bulging and splitting twice a year.",
            "Record the inspection in the bridge maintenance log within 3 days.",
        ],
        "How often must the elastomeric bearings be inspected?",
    ),
    (
        "Drainage maintenance schedule",
        [
            "Deck drainage scuppers and downpipes are cleaned every spring by the maintenance crew.",
            "Blocked scuppers are reported to the duty engineer on extension 4410.",
        ],
        "Who receives reports of blocked drainage scuppers?",
    ),
    (
        "Tendon stressing method statement",
        [
            "Stressing of post-tensioning tendons starts only after the concrete reaches 35 MPa.",
            "Elongations are recorded for every strand and checked against the design values.",
        ],
        "What concrete strength is required before tendon stressing starts?",
    ),
    (
        "Piling subcontractor report",
        [
            "The piling subcontractor mobilised two rigs to the south pier in April.",
            "Bored piles were tested with cross-hole sonic logging.",
        ],
        "How were the bored piles tested?",
    ),
    (
        "Steel procurement policy",
        [
            "Stainless steel for railings and fixings is bought from approved mills only.",
            "Mill certificates must accompany every delivery of steel.",
        ],
        "What documents must accompany every steel delivery?",
    ),
    (
        "Lighting maintenance plan",
        [
            "Lighting poles are inspected for corrosion every two years.",
            "Failed lamps on the bridge are replaced within 48 hours.",
        ],
        "How quickly are failed bridge lamps replaced?",
    ),
    (
        "Waterproofing supplier comparison",
        [
            "Three suppliers of deck waterproofing membranes were compared on price and warranty.",
            "The selected supplier offers a warranty of 15 years.",
        ],
        "How long is the warranty of the selected waterproofing supplier?",
    ),
    (
        "Retaining wall site notes",
        [
            "Backfill behind the retaining wall is placed in layers of 200 mm.",
            "Each layer is compacted with a vibrating plate.",
        ],
        None,
    ),
    (
        "Cable stay fabrication notes",
        [
            "Cable stay strands are delivered on reels and cut to length on site.",
            "Sockets are filled with epoxy after the strands are anchored.",
        ],
        None,
    ),
    (
        "Reinforcement bar schedule guide",
        [
            "Bar schedules list the mark, diameter, shape code and number of bars.",
            "Schedules are issued with each reinforcement drawing revision.",
        ],
        None,
    ),
    (
        "Marine navigation notice",
        [
            "Vessels approaching the main span must keep to the marked navigation channel.",
            "The harbour master issues notices to mariners about works on the bridge.",
        ],
        None,
    ),
]


def _drawing_spec(number: str, fact: str) -> DocSpec:
    return DocSpec(
        title=f"Drawing {number}",
        file_type="dxf",
        language="en",
        sections=[Section(heading="General notes", paragraphs=[fact, "All dimensions are in millimetres."])],
        title_block={"Drawing No.": number, "Project": "Harbor Bridge", "Scale": "1:50", "Checked": "R. Osei"},
        layers=["STRUCTURE"],
    )


def build_cad_corpus(out: Path) -> Path:
    """Write the corpus (``corpus.json``, files, ``evalset.jsonl``) into ``out``; returns ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    documents: list[Document] = []
    queries: list[EvalQuery] = []
    for i, (fact, question) in enumerate(DRAWINGS, 1):
        number = f"S-{100 + i}"
        doc_id = f"c{i:03d}"
        spec = _drawing_spec(number, fact)
        path = f"files/{doc_id}/v1.dxf"
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_bytes(render(spec))
        documents.append(_document(doc_id, f"{number}.dxf", "/drawings", "dxf", spec.title, path))
        queries.append(_query(f"cad{i:02d}", question, doc_id, "dxf"))
    for i, (title, paragraphs, question) in enumerate(NOTES, 1):
        doc_id = f"n{i:03d}"
        spec = DocSpec(title=title, file_type="md", language="en", sections=[Section("Notes", paragraphs)])
        path = f"files/{doc_id}/v1.md"
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_bytes(render(spec))
        documents.append(_document(doc_id, f"{title}.md", "/notes", "md", title, path))
        if question is not None:
            queries.append(_query(f"note{i:02d}", question, doc_id, "md"))
    manifest = Manifest(
        name="cadlab",
        language="en",
        description="Harbor Bridge drawings (dxf) and notes (md): the cad-blind fault's test corpus.",
        clock=Clock(start=CREATED, now=NOW),
        departments=[Department(id="eng", name="Engineering")],
        users=[User(user_id="e01", name="Ama Osei", department="eng", roles=["engineer"], clearance="internal")],
        folders=[
            Folder(path="/"),
            Folder(path="/drawings", owner_department="eng"),
            Folder(path="/notes", owner_department="eng"),
        ],
        documents=documents,
        grants=[Grant(grant_id="g1", path="/", subject=Subject(kind="department", id="eng"), actions=["preview"])],
    )
    write_manifest(manifest, out)
    write_jsonl(out / EVALSET_NAME, queries)
    return out


def _document(doc_id: str, name: str, folder: str, file_type: str, title: str, path: str) -> Document:
    return Document(
        doc_id=doc_id,
        name=name,
        folder=folder,
        file_type=file_type,
        secret_level="internal",
        title=title,
        owner="e01",
        created_at=CREATED,
        versions=[Version(version_id=f"{doc_id}-v1", version=1, file=path, created_at=CREATED, author="e01")],
        tags={"department": "eng", "language": "en"},
    )


def _query(qid: str, question: str, doc_id: str, file_type: str) -> EvalQuery:
    return EvalQuery(
        query_id=qid,
        query=question,
        user_id="e01",
        gold=[GoldDoc(doc_id=doc_id, version_id=f"{doc_id}-v1")],
        tags={"file_type": file_type, "kind": "single", "department": "eng"},
    )
