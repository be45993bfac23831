"""English templates: engineering design (drawings, BOM, supplier contract, inspection, release pack, legal review)."""

from __future__ import annotations

from typing import Any

from drivebench.corpora.render.spec import DocSpec, Section, ZipMember

COMPANY = "Acme Technologies Inc."
PURCHASED = (
    ("Power module", "24 V / 60 W wide input"),
    ("Main board", "4-layer PCB with MCU"),
    ("Pan head screw", "M3x8 stainless"),
    ("Shipping carton", "5-ply corrugated with insert"),
)
RESULTS = ("Accepted", "Accepted", "Accepted under concession")
DEFECTS = (
    "No cosmetic or dimensional defects found",
    "Two pieces show light surface scratches with no functional impact",
    "One piece has a 0.05 mm hole offset, within tolerance",
)
TOLERANCE = "ISO 2768-{}"  # general tolerances, by class
LAYERS = ["OUTLINE", "CENTER", "DIMENSIONS", "HATCH"]
RISKS = (
    "The late-delivery penalty is weak; add a penalty of 0.05% of the contract value per day of delay",
    "The warranty period has no start date; state that it starts on acceptance",
    "There is no intellectual property clause; the tooling and drawings should belong to the buyer",
    "The dispute clause names no venue; name the courts of the buyer's home state",
)

ATTRS: dict[str, str] = {
    "assembly.designer": "designer",
    "assembly.approver": "approver",
    "assembly.weight": "total weight",
    "assembly.checker": "checker",
    "assembly.torque": "screw tightening torque in N·m",
    "assembly.scale": "scale",
    "part.material": "material",
    "part.finish": "surface finish",
    "part.thickness": "default wall thickness",
    "part.designer": "designer",
    "part.tolerance": "general tolerance class",
    "part.checker": "checker",
    "bom.price1": "unit price of the {part1}",
    "bom.supplier2": "supplier of the {part2}",
    "bom.compiler": "compiler",
    "contract.amount": "contract value",
    "contract.delivery": "delivery date",
    "contract.signer": "buyer's representative",
    "contract.supplier_rep": "supplier's representative",
    "inspection.inspector": "inspector",
    "inspection.result": "inspection result",
    "inspection.sample": "sample size",
    "pack.ecn_owner": "owner of the engineering change notice",
    "pack.release_approver": "release approver",
    "legal_review.reviewer": "reviewer",
    "legal_review.conclusion": "conclusion",
}
SUBJECTS: dict[str, str] = {
    "assembly": "{product} assembly drawing {dwg}",
    "part": "{part} drawing {dwg}",
    "bom": "bill of materials {bom_no}",
    "contract": "purchase contract {contract_no}",
    "inspection": "incoming inspection report {iqc_no}",
    "pack": "{product} drawing release pack",
    "legal_review": "contract review memo {lr_no}",
}
# drawings by what they say (never their title or number, which make up the file name)
CONTENT_SUBJECTS: dict[str, str] = {
    "assembly": "the product measuring {dims} overall",
    "part": "part no. {pn}",
}
CHAINS: dict[str, dict[str, str]] = {
    "dwg_bom_supplier": {
        "short": "{dims} product BOM {part2} supplier",
        "medium": "In the bill of materials for the product measuring {dims} overall, who supplies the {part2}?",
        "long": "All I know is that the product measures {dims} overall. Its bill of materials lists the {part2}; "
        "which supplier provides that part?",
    },
    "dwg_bom_contract": {
        "short": "{dims} product {part1} contract value",
        "medium": "The product measuring {dims} overall has a bill of materials; what is the main supplier contract "
        "for its {part1} worth?",
        "long": "For costing I need to trace from the product to the contract: the product that measures {dims} "
        "overall has a bill of materials naming the main supplier contract for its {part1}. What is that purchase "
        "contract worth?",
    },
    "part_bom_contract": {
        "short": "part no. {pn1} BOM contract delivery date",
        "medium": "Part no. {pn1} belongs to a bill of materials; what delivery date does the purchase contract cited "
        "there set?",
        "long": "Production planning needs the material arrival date: part no. {pn1} belongs to a bill of materials, "
        "which cites a purchase contract. What delivery date does that contract give?",
    },
    "review_contract": {
        "short": "{lr_no} reviewed contract supplier representative",
        "medium": "Who is the supplier's representative in the purchase contract reviewed in memo {lr_no}?",
        "long": "Legal's contract review memo {lr_no} covers a purchase contract and I need to contact the other "
        "side. Who is named as the supplier's representative in that contract?",
    },
}


def _block(f: dict[str, Any], name: str, material: str) -> dict[str, str]:
    return {
        "DWG NO": f["dwg"],
        "TITLE": name,
        "MATERIAL": material,
        "SCALE": f["scale"],
        "DRAWN": f["designer"],
        "CHECKED": f["checker"],
        "APPROVED": f["approver"],
        "DATE": f["date"],
        "REV": f["rev"],
    }


def assembly(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="dxf",
        layers=list(LAYERS),
        title_block={**_block(f, f"{f['product']} assembly", "See BOM"), "WEIGHT": f["weight"]},
        sections=[
            Section(
                "Technical requirements",
                [
                    "1. Deburr and clean all parts before assembly.",
                    f"2. Tighten screws to {f['torque']} N·m.",
                    "3. Enclosure rating IP65; water-spray test after assembly.",
                ],
            ),
            Section("References", [f"Bill of materials: {f['bom_no']}", f"Part drawings: {f['dwg1']}, {f['dwg2']}"]),
            Section("Notes", [f"Total weight {f['weight']}", f"Overall dimensions {f['dims']} (see front view)"]),
        ],
    )


def part(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="dxf",
        layers=list(LAYERS),
        title_block={**_block(f, f"{f['product']} {f['part']}", f["material"]), "PART NO": f["pn"]},
        sections=[
            Section(
                "Technical requirements",
                [
                    f"1. Material: {f['material']}",
                    f"2. Default wall thickness {f['thickness']}",
                    f"3. Finish: {f['finish']}",
                    f"4. Untoleranced dimensions per {f['tolerance']}.",
                    f"5. Mark part no. {f['pn']} and the revision letter on the inside face.",
                ],
            ),
            Section("References", [f"Assembly drawing: {f['dwg0']}", f"Bill of materials: {f['bom_no']}"]),
        ],
    )


def bom(f: dict[str, Any]) -> DocSpec:
    rows = [
        ["Item", "Part no.", "Name", "Spec / material", "Qty", "Unit price (USD)", "Supplier"],
        *[list(r) for r in f["rows"]],
    ]
    return DocSpec(
        title=f["title"],
        file_type="xlsx",
        sections=[
            Section(
                "Bill of materials",
                [
                    f"BOM number: {f['bom_no']}",
                    f"Product: {f['product']}",
                    f"Assembly drawing: {f['dwg0']}",
                    f"Compiled by: {f['compiler']}",
                    f"Main supplier contract: {f['contract_no']}",
                ],
                table=rows,
            ),
        ],
    )


def contract(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="pdf",
        sections=[
            Section(
                "Contract details",
                [
                    f"Contract number: {f['contract_no']}",
                    f"Buyer: {COMPANY}",
                    f"Supplier: {f['supplier']}",
                    f"Signed on: {f['sign_date']}",
                ],
            ),
            Section(
                "1. Subject",
                [
                    f"The supplier delivers {f['qty']} pieces of {f['part1']} (part no. {f['pn1']}) "
                    f"per the buyer's bill of materials {f['bom_no']}."
                ],
            ),
            Section("2. Contract value", [f"The total contract value is ${f['amount']}, sales tax included."]),
            Section(
                "3. Delivery",
                [f"The supplier delivers all goods to the buyer's Austin plant warehouse by {f['delivery']}."],
            ),
            Section(
                "4. Payment", ["30% on signature, 60% on accepted delivery, and a 10% retention paid after one year."]
            ),
            Section(
                "5. Signatures",
                [f"Buyer's representative: {f['signer']}", f"Supplier's representative: {f['supplier_rep']}"],
            ),
        ],
    )


def inspection(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="docx",
        sections=[
            Section(
                "Inspection details",
                [
                    f"Report number: {f['iqc_no']}",
                    f"Item: {f['part1']} (part no. {f['pn1']})",
                    f"Supplier: {f['supplier']}",
                    f"Lot size: {f['batch']} pcs",
                    f"Sample size: {f['sample']} pcs",
                    f"Inspected on: {f['date']}",
                ],
            ),
            Section(
                "Checks",
                [],
                table=[
                    ["Check", "Standard", "Result"],
                    ["Appearance", "No scratches or burrs", "Pass"],
                    ["Critical dimensions", "Per drawing " + f["dwg1"], "Pass"],
                    ["Material", f["material"], "Pass"],
                ],
            ),
            Section(
                "Result",
                [f"Inspection result: {f['result']}", f"Remarks: {f['defects']}.", f"Inspector: {f['inspector']}"],
            ),
        ],
    )


def pack(f: dict[str, Any]) -> DocSpec:
    index = DocSpec(
        title="Drawing index",
        file_type="md",
        sections=[
            Section(
                "Drawings",
                [
                    f"{f['dwg0']} assembly",
                    f"{f['dwg1']} {f['part1']}",
                    f"{f['dwg2']} {f['part2']}",
                    f"Release date: {f['release_date']}",
                ],
            ),
        ],
    )
    ecn = DocSpec(
        title=f"Engineering change notice {f['ecn_no']}",
        file_type="txt",
        sections=[
            Section(
                "Change",
                [
                    f"ECN number: {f['ecn_no']}",
                    f"Change: the {f['part1']} gets three ribs instead of two to survive drop tests.",
                    f"Change owner: {f['ecn_owner']}",
                ],
            ),
        ],
    )
    note = DocSpec(
        title="Release note",
        file_type="docx",
        sections=[
            Section(
                "Release",
                [
                    f"The {f['product']} drawings are checked, approved and released for pilot production.",
                    f"Release approver: {f['release_approver']}",
                    f"Release date: {f['release_date']}",
                ],
            ),
        ],
    )
    return DocSpec(
        title=f["title"],
        file_type="zip",
        members=[
            ZipMember("drawing-index.md", index),
            ZipMember(f"{f['ecn_no']}.txt", ecn),
            ZipMember("release-note.docx", note),
        ],
    )


def legal_review(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="txt",
        sections=[
            Section(
                "Summary",
                [
                    f"Review number: {f['lr_no']}",
                    f"Document reviewed: purchase contract {f['contract_no']}",
                    f"Reviewer: {f['reviewer']}",
                    f"Review date: {f['date']}",
                ],
            ),
            Section("Key risks", [f"{i}. {r}." for i, r in enumerate(f["risks"], 1)]),
            Section("Conclusion", [f"Conclusion: {f['conclusion']}"]),
        ],
    )


CONCLUSIONS = ("Sign after the changes above", "Cleared for signature", "Hold; resubmit with the missing clauses")

SUBJECT_ALIASES: dict[str, str] = {
    "assembly": "the {dims} unit",
    "part": "component {pn}",
    "bom": "{product} parts list",
    "pack": "{product} released drawings archive",
}
ATTR_ALIASES: dict[str, str] = {
    "assembly.designer": "draftsperson",
    "assembly.approver": "signatory",
    "assembly.weight": "mass",
    "assembly.checker": "reviewer",
    "assembly.torque": "screw torque",
    "part.material": "raw material",
    "part.finish": "surface treatment",
    "part.thickness": "wall gauge",
    "part.designer": "draftsperson",
    "part.tolerance": "tolerance grade for unmarked dimensions",
    "part.checker": "reviewer",
    "bom.price1": "purchase price of the {part1}",
    "bom.supplier2": "vendor of the {part2}",
    "bom.compiler": "preparer",
    "contract.amount": "total price",
    "contract.delivery": "deadline for the goods",
    "contract.signer": "signatory for Acme",
    "contract.supplier_rep": "signatory for the vendor",
    "inspection.inspector": "person who inspected the lot",
    "inspection.result": "verdict",
    "inspection.sample": "number of pieces checked",
    "pack.ecn_owner": "ECN owner",
    "pack.release_approver": "person who cleared the release",
    "legal_review.reviewer": "reviewing lawyer",
    "legal_review.conclusion": "final advice",
}
