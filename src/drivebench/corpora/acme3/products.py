"""Per product: the assembly drawing, three part drawings and the bill of materials; per part a purchase
contract, an inspection pack and a payment request; and the chains that run through them."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from drivebench.corpora.acme3.base import BuilderBase
from drivebench.corpora.acme3.model import Chain
from drivebench.corpora.common.model import DocPlan, day
from drivebench.corpora.common.organisation import Person


class ProductDocs(BuilderBase):
    def product(
        self,
        i: int,
        base: dict[str, str],
        pid: str,
        kickoff: datetime,
        designer: Person,
        charter: DocPlan,
        rng: random.Random,
    ) -> None:
        s, org = self.s, self.s.org
        model = base["model"]
        drawings = self.folder(s.sub("design", "drawings"), model, owner="design")
        contracts = self.folder(s.sub("finance-procurement", "contracts"), model, owner="finance-procurement")
        accept = self.folder(s.sub("finance-procurement", "inspections"), model, owner="finance-procurement")
        payments = s.sub("finance-accounting", "requests")
        self.w.product_folders[pid] = [drawings, contracts, accept]
        parts_pool = list(s.pool("parts"))
        part_idx = rng.sample(range(len(parts_pool)), 3)
        checker = org.head("design")
        drawn = self.when(kickoff, 10, 30, rng)
        asm_no = f"DWG-A{i + 1:03d}"
        parts = []
        for k, pi in enumerate(part_idx, 1):
            parts.append(
                {"pn": f"{model}-{k:02d}", "part": parts_pool[pi], "dwg": f"DWG-{(i * 3 + k) * 37 % 900 + 100:03d}{k}"}
            )
        L, W_, H = rng.randint(18, 60) * 10, rng.randint(12, 40) * 10, rng.randint(4, 20) * 10
        af = {
            **base,
            "no": asm_no,
            "dims": f"{L} x {W_} x {H} mm",
            "designer": designer.name,
            "checker": checker.name,
            "date": self.date(drawn),
            "parts": [[str(n), p["pn"], p["part"]] for n, p in enumerate(parts, 1)],
        }
        asm = self.doc(
            "assembly", "dxf", drawings, self.fmt("assembly", no=asm_no), "internal", designer, [(drawn, af, "")]
        )
        dims = self.fact(asm, "dims", [model])
        start = {"project": base["project"], "code": base["code"]}
        self.w.chains.append(Chain("project_assembly_dims", [charter, asm], dims, start))
        materials, finishes = list(s.pool("materials")), list(s.pool("finishes"))
        bom_rows = []
        for k, p in enumerate(parts):
            mat = rng.randrange(len(materials))
            pf = {
                **base,
                **p,
                "material": materials[mat],
                "finish": rng.choice(finishes),
                "thickness": f"{rng.choice([1.5, 2.0, 2.5, 3.0])} mm",
                "designer": designer.name,
                "checker": checker.name,
                "date": self.date(drawn),
                "rev": "A",
                "supplier": self.suppliers[(i * 3 + k) % len(self.suppliers)],
                "asm_no": asm_no,
            }
            pv = [(drawn, pf, "")]
            if rng.random() < 0.55:
                rev_t = self.when(drawn, 20, 60, rng)
                new_mat = materials[(mat + 1 + rng.randrange(len(materials) - 1)) % len(materials)]
                pv.append((rev_t, {**pf, "material": new_mat, "rev": "B", "date": self.date(rev_t)}, "material"))
            part = self.doc("part", "dxf", drawings, self.fmt("part", dwg=p["dwg"]), "internal", designer, pv)
            material = self.fact(part, "material", [p["pn"]])
            self.fact(part, "finish", [p["pn"]])
            qty = rng.choice([200, 300, 500, 800, 1000, 1200])  # the batch bought
            unit = rng.randint(8, 160)  # the contract's unit price, which the BOM costs a unit at
            per_set = rng.choice([1, 1, 2, 4])
            bom_rows.append(
                [
                    p["pn"],
                    p["part"],
                    str(per_set),
                    self.s.common.fmt_money(unit),
                    self.s.common.fmt_money(per_set * unit),
                ]
            )
            contract, ctf = self.contract(i, k, p, pf, qty, unit, part, contracts, rng)
            acc = self.acceptance(i, k, p, pf, ctf, contract, accept, rng)
            self.payment(i, k, pf, ctf, acc, payments, rng)
            # chains
            ctrt_fact = next(f for f in self.w.facts if f.doc is contract and f.key == "total")
            signer_fact = next(f for f in self.w.facts if f.doc is contract and f.key == "signer")
            insp_fact = next(f for f in self.w.facts if f.doc is acc and f.key == "inspector")
            # a part is named by its item in the assembly's parts list: its name would find the later hops
            start_project = {"project": base["project"], "code": base["code"], "item": str(k + 1)}
            start_model = {"model": model, "family": base["family"], "item": str(k + 1)}
            start_part = {"pn": p["pn"]}
            self.w.chains += [
                Chain("part_contract_total", [part, contract], ctrt_fact, start_part),
                Chain("part_contract_signer", [part, contract], signer_fact, start_part),
                Chain("project_part_material", [charter, asm, part], material, start_project),
                Chain("part_contract_inspector", [part, contract, acc], insp_fact, start_part),
                Chain("project_contract_total", [charter, asm, part, contract], ctrt_fact, start_project),
                Chain("model_acceptance_inspector", [asm, part, contract, acc], insp_fact, start_model),
            ]
        bom_total = sum(int(r[2]) * int(r[3].replace(",", "")) for r in bom_rows)
        bom_no = f"BOM-2026-{i + 61:03d}"
        bf = {
            **base,
            "no": bom_no,
            "rows": bom_rows,
            "total": self.s.common.fmt_money(bom_total),
            "preparer": designer.name,
            "date": self.date(drawn),
        }
        bom = self.doc("bom", "xlsx", drawings, self.fmt("bom", no=bom_no), "internal", designer, [(drawn, bf, "")])
        bom_total_fact = self.fact(bom, "total", [bom_no])
        self.w.chains.append(Chain("project_bom_total", [charter, bom], bom_total_fact, start))

    def contract(
        self,
        i: int,
        k: int,
        p: dict[str, str],
        pf: dict[str, Any],
        qty: int,
        unit: int,
        part: DocPlan,
        folder: str,
        rng: random.Random,
    ) -> tuple[DocPlan, dict[str, Any]]:
        org = self.s.org
        po = f"PO-2026-{i * 3 + k + 101:03d}"
        signer = rng.choice(org.in_dept("finance-procurement", "finance"))
        signed = self.when(part.versions[0].created_at, 5, 20, rng)
        deliver = day(signed + timedelta(days=rng.randint(15, 35)))
        f = {
            "po": po,
            "supplier": pf["supplier"],
            "part": p["part"],
            "dwg": p["dwg"],
            "qty": str(qty),
            "unit": self.s.common.fmt_money(unit),
            "total": self.s.common.fmt_money(qty * unit),
            "signer": signer.name,
            "rep": self.s.outsiders[-1 - (i * 3 + k) % len(self.s.outsiders)],
            "signed": self.date(signed),
            "deliver": self.date(deliver),
            "deliver_at": deliver,
        }
        versions = [(signed, f, "")]
        if rng.random() < 0.5:
            amend = self.when(signed, 7, 14, rng)
            deliver2 = day(deliver + timedelta(days=rng.randint(10, 25)))
            versions.append((amend, {**f, "deliver": self.date(deliver2), "deliver_at": deliver2}, "term"))
        d = self.doc(
            "contract",
            "pdf",
            folder,
            self.fmt("contract", po=po),
            "internal",
            signer,
            [(t, {k2: v for k2, v in ff.items() if k2 != "deliver_at"}, n) for t, ff, n in versions],
        )
        {"po": po, "supplier": pf["supplier"], "part": p["part"]}
        self.fact(d, "total", [po])
        self.fact(d, "signer", [po])
        self.fact(d, "deliver", [po])
        return d, versions[-1][1]

    def acceptance(
        self,
        i: int,
        k: int,
        p: dict[str, str],
        pf: dict[str, Any],
        ctf: dict[str, Any],
        contract: DocPlan,
        folder: str,
        rng: random.Random,
    ) -> DocPlan:
        org = self.s.org
        iqc = f"IQC-2026-{i * 3 + k + 201:03d}"
        inspector = rng.choice(org.in_dept("rd-product", "engineer")[1:] + org.in_dept("design-mech", "designer"))
        at = self.when(ctf["deliver_at"], 1, 4, rng)
        results = self.W["names"]["results"]
        f = {
            "iqc": iqc,
            "po": ctf["po"],
            "supplier": pf["supplier"],
            "part": p["part"],
            "qty": ctf["qty"],
            "inspector": inspector.name,
            "result": results[rng.randrange(len(results))],
            "sample": str(rng.choice([13, 20, 32, 50])),
            "date": self.date(at),
        }
        d = self.doc(
            "acceptance",
            "zip",
            folder,
            self.fmt("acceptance", iqc=iqc),
            "internal",
            org.in_dept("finance-procurement", "finance")[-1],
            [(at, f, "")],
        )
        {"iqc": iqc, "po": ctf["po"], "supplier": pf["supplier"], "part": p["part"]}
        self.fact(d, "inspector", [iqc])
        self.fact(d, "result", [iqc])
        return d

    def payment(
        self, i: int, k: int, pf: dict[str, Any], ctf: dict[str, Any], acc: DocPlan, folder: str, rng: random.Random
    ) -> None:
        org = self.s.org
        no = f"FK-2026-{i * 3 + k + 301:03d}"
        at = self.when(acc.versions[0].created_at, 3, 12, rng)
        approver = rng.choice([org.head("finance"), org.in_dept("finance-accounting", "finance")[0]])
        f = {
            "no": no,
            "po": ctf["po"],
            "supplier": pf["supplier"],
            "amount": ctf["total"],
            "approver": approver.name,
            "date": self.date(at),
            "iqc": acc.versions[0].facts["iqc"],
        }
        d = self.doc(
            "payment",
            "xlsx",
            folder,
            self.fmt("payment", no=no),
            "confidential",
            org.in_dept("finance-accounting", "finance")[1],
            [(at, f, "")],
        )
        self.fact(d, "approver", [no])
        self.fact(d, "date", [no])

    # ------------------------------------------------------------------ company-wide documents
