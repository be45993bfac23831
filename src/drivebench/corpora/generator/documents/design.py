"""Engineering design unit: one product with an assembly drawing, two part drawings (DXF with
title blocks and layers), its bill of materials, the main supplier's purchase contract, an
incoming inspection report, a drawing release pack (zip) and legal's review of the contract.

Links: assembly drawing -> BOM number; part drawing -> BOM number; BOM -> contract number;
legal review -> contract number.

Drawings are asked about by their content (``content_subjects`` in ``scenario/<lang>/design.toml``): a part drawing by
the part number in its title block, an assembly drawing by the overall dimensions in its notes (unique
in the corpus, and no number of them is the product's model number). Neither is in the file name.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import cast

from drivebench.corpora.common.model import AnswerKind, Chain, DocPlan
from drivebench.corpora.common.names import story
from drivebench.corpora.common.scenario import LATEST, Scenario
from drivebench.corpora.generator.documents.base import UnitOutput, hook, n_versions, new_doc, subject

M = "design"
TOLERANCE_CLASSES = ("m", "f", "m", "c")  # general tolerance class of a part drawing (ISO 2768 / GB/T 1804)
PURCHASED_PRICE = ((35, 90), (80, 260), (1, 3), (4, 12))  # yuan/dollars per piece, aligned with PURCHASED


def _at(base: datetime, lo: int, hi: int, rng: random.Random) -> datetime:
    return min(base + timedelta(days=rng.randint(lo, hi)), LATEST)


def _dims(s: Scenario, model: str) -> str:
    """Overall dimensions (L × W × H mm), unique in the corpus, none of them the model's number."""
    digits = model.rsplit("-", 1)[-1]
    while True:
        i, j, k = s.combo("design:dims", 25, 17, 46)
        sizes = (160 + 10 * i, 80 + 10 * j, 30 + 2 * k)
        if digits not in {str(x) for x in sizes}:
            return " × ".join(str(x) for x in sizes) + " mm"


def design_unit(s: Scenario, rng: random.Random, base: datetime) -> UnitOutput:
    n = s.seq("design")
    T = s.t(M)
    families, codes = s.pool("product_families"), story()["product_codes"]
    family, code = families[(n - 1) % len(families)], codes[(n - 1) % len(codes)]
    model = f"{code}-{100 + 10 * n + n % 7}"
    product = f"{family} {model}"
    p1, p2 = (s.pool("parts")[i] for i in rng.sample(range(len(s.pool("parts"))), 2))
    dwg0, dwg1, dwg2 = (f"DWG-{model}-{k:02d}" for k in range(3))
    pn1, pn2 = (f"41{n:03d}-{rng.randint(1000, 9999)}-{k}" for k in (1, 2))
    bom_no, contract_no = f"BOM-{model}", s.no("CG")
    iqc_no, ecn_no, lr_no = s.no("IQC"), s.no("ECN"), s.no("LR")
    supplier_i, supplier2_i = rng.sample(range(len(s.pool("suppliers"))), 2)
    supplier, supplier2 = s.pool("suppliers")[supplier_i], s.pool("suppliers")[supplier2_i]
    head = s.org.head("design")
    mech = [p for p in s.org.in_dept("design-mech", "designer")]
    elec = [p for p in s.org.in_dept("design-elec", "designer")]
    d_asm, d_p1 = rng.choice(mech), rng.choice(mech)
    d_p2 = rng.choice(elec + mech)
    checker = rng.choice([p for p in mech + elec if p not in (d_asm,)])
    cto = s.org.head("rd")
    buyer_mgr = s.org.head("finance-procurement")
    buyer = next(p for p in s.org.in_dept("finance-procurement") if p is not buyer_mgr)
    lawyer = rng.choice(s.org.in_dept("legal-compliance", "legal"))
    folder = s.sub("design", "drawings")
    folder = s.folder(f"{folder}/{model}", kind="department", owner="design")
    common = {
        "product": product,
        "model": model,
        "dwg0": dwg0,
        "dwg1": dwg1,
        "dwg2": dwg2,
        "bom_no": bom_no,
        "contract_no": contract_no,
        "iqc_no": iqc_no,
        "ecn_no": ecn_no,
        "lr_no": lr_no,
        "part1": p1,
        "part2": p2,
        "pn1": pn1,
        "pn2": pn2,
        "supplier": supplier,
        "scale": rng.choice(["1:1", "1:2", "2:1"]),
        "dims": _dims(s, model),
    }
    notes = s.common.VERSION_NOTES
    out = UnitOutput()

    # assembly drawing: re-approved by a different approver in later revisions
    approvers = [head]
    for _ in range(1, n_versions(rng, 0.5)):
        approvers.append(cto if approvers[-1] is head else head)
    t0 = _at(base, 0, 10, rng)
    asm_f = {
        **common,
        "dwg": dwg0,
        "designer": d_asm.name,
        "checker": checker.name,
        "date": s.date(t0),
        "weight": f"{rng.randint(8, 95) / 10:.1f} kg",
        "torque": f"{rng.choice([0.6, 0.8, 1.2, 2.5])}",
    }
    asm = new_doc(
        s,
        key="assembly",
        kind="assembly",
        module=M,
        file_type="dxf",
        folder=folder,
        title=subject(s, M, "assembly", {**common, "dwg": dwg0}),
        level="internal",
        owner=d_asm,
        created=t0,
        rng=rng,
        notes=[notes["approver_dwg"]] * 4,
        facts=[{**asm_f, "approver": a.name, "rev": "ABCDE"[i]} for i, a in enumerate(approvers)],
    )
    for fact, ans in (
        ("designer", "who"),
        ("approver", "who"),
        ("weight", "what"),
        ("checker", "who"),
        ("torque", "number"),
        ("scale", "what"),
    ):
        hook(s, M, asm, fact, ans)

    # part drawings: the first part changes material (or wall thickness) across revisions
    parts: list[DocPlan] = []
    for k, (dwg, pname, pn, designer) in enumerate(((dwg1, p1, pn1, d_p1), (dwg2, p2, pn2, d_p2)), 1):
        mats = [rng.randrange(len(s.pool("materials")))]
        thick = [rng.choice([1.5, 2.0, 2.5, 3.0])]
        nv = n_versions(rng, 0.5 if k == 1 else 0.25)
        pnotes = []
        for i in range(1, nv):
            if i % 2:
                mats.append(rng.choice([m for m in range(len(s.pool("materials"))) if m != mats[-1]]))
                thick.append(thick[-1])
                pnotes.append(notes["material"])
            else:
                mats.append(mats[-1])
                thick.append(thick[-1] + 0.5)
                pnotes.append(notes["thickness"])
        tk = _at(base, 1, 12, rng)
        pf = {
            **common,
            "dwg": dwg,
            "part": pname,
            "pn": pn,
            "designer": designer.name,
            "checker": checker.name,
            "approver": head.name,
            "date": s.date(tk),
            "finish": s.pool("finishes")[rng.randrange(len(s.pool("finishes")))],
            "tolerance": T.TOLERANCE.format(TOLERANCE_CLASSES[s.combo("design:tolerance", 4)[0]]),
        }
        doc = new_doc(
            s,
            key=f"part{k}",
            kind="part",
            module=M,
            file_type="dxf",
            folder=folder,
            title=subject(s, M, "part", {**common, "dwg": dwg, "part": pname}),
            level="confidential" if k == 2 and n % 4 == 0 else "internal",
            owner=designer,
            created=tk,
            rng=rng,
            notes=pnotes,
            facts=[
                {**pf, "material": s.pool("materials")[m], "thickness": f"{t:.1f} mm", "rev": "ABCDE"[i]}
                for i, (m, t) in enumerate(zip(mats, thick, strict=True))
            ],
        )
        for fact, ans in (
            ("material", "what"),
            ("finish", "what"),
            ("thickness", "what"),
            ("designer", "who"),
            ("tolerance", "what"),
            ("checker", "who"),
        ):
            hook(s, M, doc, fact, ans)
        parts.append(doc)
    part1, part2 = parts

    # BOM: unit prices change across versions
    qty = rng.choice([500, 800, 1000, 1200, 2000, 3000])
    price1 = [rng.randint(12, 380)]
    for _ in range(1, n_versions(rng, 0.5)):
        price1.append(max(5, price1[-1] + rng.choice([-8, -5, -3, 3, 5, 9])))
    price2 = rng.randint(4, 120)
    mat1 = part1.versions[-1].facts["material"]
    mat2 = part2.versions[-1].facts["material"]
    compiler = rng.choice(mech)
    purchased = rng.sample(range(len(T.PURCHASED)), 2)
    other = [
        s.pool("suppliers")[i] for i in rng.sample([i for i in range(len(s.pool("suppliers"))) if i != supplier_i], 2)
    ]

    bought = []
    for j, (pi, sup) in enumerate(zip(purchased, other, strict=True), 3):
        name, specs = T.PURCHASED[pi]
        lo, hi = PURCHASED_PRICE[pi]
        bought.append(
            (
                str(j),
                f"42{n:03d}-{1000 + pi}-{j}",
                name,
                specs,
                str(rng.choice([1, 2, 4])),
                s.money(rng.randint(lo, hi)),
                sup,
            )
        )

    def rows(p: int) -> list[tuple[str, ...]]:
        return [
            ("1", pn1, p1, mat1, "1", s.money(p), supplier),
            ("2", pn2, p2, mat2, "1", s.money(price2), supplier2),
            *bought,
        ]

    t_bom = max(part1.created_at, part2.created_at, asm.created_at) + timedelta(days=rng.randint(1, 6))
    bom_f = {**common, "compiler": compiler.name, "supplier2": supplier2}
    bom = new_doc(
        s,
        key="bom",
        kind="bom",
        module=M,
        file_type="xlsx",
        folder=folder,
        title=subject(s, M, "bom", common),
        level="internal",
        owner=compiler,
        created=t_bom,
        rng=rng,
        notes=[notes["price"]] * 4,
        facts=[{**bom_f, "rows": rows(p), "price1": s.money(p)} for p in price1],
    )
    for fact, ans in (("price1", "amount"), ("supplier2", "org"), ("compiler", "who")):
        hook(s, M, bom, fact, ans)

    # purchase contract: an amendment changes the amount
    amounts = [qty * price1[0] * rng.choice([100, 105, 110]) // 100]
    for _ in range(1, n_versions(rng, 0.5)):
        amounts.append(amounts[-1] + rng.choice([-1, 1, 2]) * rng.randint(2, 30) * 1000)
    t_sign = _at(t_bom, 4, 20, rng)
    con_f = {
        **common,
        "qty": str(qty),
        "sign_date": s.date(t_sign),
        "signer": buyer_mgr.name,
        "supplier_rep": s.outsider(),
        "delivery": s.date(t_sign + timedelta(days=rng.randint(30, 90))),
    }
    contract = new_doc(
        s,
        key="contract",
        kind="contract",
        module=M,
        file_type="pdf",
        folder=s.sub("finance-procurement", "contracts"),
        title=subject(s, M, "contract", common),
        level="confidential",
        owner=buyer,
        created=t_sign,
        rng=rng,
        notes=[notes["amount"]] * 4,
        facts=[{**con_f, "amount": s.money(a)} for a in amounts],
    )
    for fact, ans in (("amount", "amount"), ("delivery", "date"), ("signer", "who"), ("supplier_rep", "who")):
        hook(s, M, contract, fact, ans)

    t_iqc = _at(t_sign, 20, 60, rng)
    inspector = rng.choice(mech)
    iqc_f = {
        **common,
        "batch": str(qty),
        "sample": str(rng.choice([13, 20, 32, 50, 80])),
        "date": s.date(t_iqc),
        "result": rng.choice(T.RESULTS),
        "defects": rng.choice(T.DEFECTS),
        "inspector": inspector.name,
        "material": mat1,
    }
    inspection = new_doc(
        s,
        key="inspection",
        kind="inspection",
        module=M,
        file_type="docx",
        folder=s.sub("design", "inspections"),
        title=subject(s, M, "inspection", common),
        level="internal",
        owner=inspector,
        created=t_iqc,
        rng=rng,
        facts=[iqc_f],
    )
    for fact, ans in (("inspector", "who"), ("result", "what"), ("sample", "number")):
        hook(s, M, inspection, fact, ans)

    t_rel = _at(t_bom, 3, 15, rng)
    pack_f = {
        **common,
        "release_date": s.date(t_rel),
        "ecn_owner": rng.choice(mech + elec).name,
        "release_approver": head.name,
    }
    pack = new_doc(
        s,
        key="pack",
        kind="pack",
        module=M,
        file_type="zip",
        folder=s.folder(f"{folder}/{s.name('released')}"),
        title=subject(s, M, "pack", common),
        level="internal",
        owner=d_asm,
        created=t_rel,
        rng=rng,
        facts=[pack_f],
    )
    for fact, ans in (("ecn_owner", "who"), ("release_approver", "who")):
        hook(s, M, pack, fact, ans)

    t_lr = t_sign - timedelta(days=rng.randint(2, 5))
    lr_f = {
        **common,
        "reviewer": lawyer.name,
        "date": s.date(t_lr),
        "risks": rng.sample(T.RISKS, 2),
        "conclusion": rng.choice(T.CONCLUSIONS),
    }
    review = new_doc(
        s,
        key="legal_review",
        kind="legal_review",
        module=M,
        file_type="txt",
        folder=s.sub("legal", "legal_review"),
        title=subject(s, M, "legal_review", common),
        level="internal",
        owner=lawyer,
        created=t_lr,
        rng=rng,
        facts=[lr_f],
    )
    for fact, ans in (("reviewer", "who"), ("conclusion", "what")):
        hook(s, M, review, fact, ans)

    out.docs = [asm, part1, part2, bom, contract, inspection, pack, review]
    for kind, hops, fact, ans in (
        ("dwg_bom_supplier", [asm, bom], "supplier2", "org"),
        ("dwg_bom_contract", [asm, bom, contract], "amount", "amount"),
        ("part_bom_contract", [part1, bom, contract], "delivery", "date"),
        ("review_contract", [review, contract], "supplier_rep", "who"),
    ):
        texts = {k: v.format(**common) for k, v in T.CHAINS[kind].items()}  # drawings: by dims or part number
        out.chains.append(Chain(kind=kind, hops=hops, fact=fact, answer=cast(AnswerKind, ans), texts=texts))
    return out
