"""Small probe and oversharing-audit results, shaped as ``probe.run.judge`` and ``audit.oversharing`` return them,
for the report-page tests (the real ones need a served simulator or a built corpus). ``name`` is the file name of
the leaked / flagged document: pass a hostile one to test escaping."""

from __future__ import annotations

from typing import Any


def probe_result(name: str = "薪酬方案.xlsx", *, leaks: bool = True) -> dict[str, Any]:
    path = f"/hr/confidential/{name}"
    leak = {
        "kind": "target",
        "pair_id": "p1",
        "user_id": "u012",
        "department": "rd",
        "doc_id": "d0042",
        "doc_path": path,
        "secret_level": "confidential",
        "surface": "recall",
        "query_kind": "title",
        "query": "薪酬方案",
        "request_id": "p1-0",
        "result": {"rank": 1, "score": 0.91, "doc_id": "d0042", "version_id": None, "name": name},
        "why_forbidden": {
            "reason": "no-grant",
            "path": [{"effect": "allow", "grant_id": "g7", "subject": "dept:hr", "path": "/hr"}],
        },
    }
    unknown = {**leak, "kind": "collateral", "doc_id": "x-999", "doc_path": None, "secret_level": None, "pair_id": "p2"}
    found = [leak, unknown] if leaks else []
    return {
        "status": {"state": "ok", "reason": None},
        "errors": {"requests": 4, "answered": 4, "failed": 0, "rate": 0.0, "by_kind": {}},
        "preflight": None,
        "counts": {
            "pairs": 2,
            "pairs_probed": 2,
            "pairs_measured": 2,
            "pairs_not_measured": 0,
            "pairs_over_budget": 0,
            "requests": 4,
            "results": 20,
            "unmapped_results": 0,
            "empty_responses": 0,
            "leaks": len(found),
            "target_leaks": 1 if leaks else 0,
            "collateral_leaks": 1 if leaks else 0,
            "pairs_leaked": 1 if leaks else 0,
            "leaked_documents": 2 if leaks else 0,
            "requests_by_query_kind": {"title": 4},
        },
        "leaked_documents": [
            {"doc_id": "d0042", "path": path, "leaks": 1},
            {"doc_id": "x-999", "path": None, "leaks": 1},
        ]
        if leaks
        else [],
        "strata": {
            "reason": {"no-grant": {"pairs": 2, "measured": 2, "leaked": 1 if leaks else 0}},
            "secret_level": {"confidential": {"pairs": 2, "measured": 2, "leaked": 1 if leaks else 0}},
            "department": {"rd": {"pairs": 2, "measured": 2, "leaked": 1 if leaks else 0}},
        },
        "leaks": found,
        "run_info": {"target": "http://127.0.0.1:9/api/mcp/recall", "corpus": "acme-zh", "seed": 0},
    }


def audit_result(name: str = "董事会纪要.docx") -> dict[str, Any]:
    def doc(doc_id: str, path: str, flags: list[dict[str, Any]], risk: int) -> dict[str, Any]:
        return {
            "risk": risk,
            "doc_id": doc_id,
            "path": path,
            "secret_level": "secret",
            "owner_department": "board",
            "previewers": 40,
            "previewers_outside_department": 31,
            "grant_chains": [
                {"grant_id": "g1", "subject": "everyone", "path": "/board", "inherited": True, "users": 40}
            ],
            "flags": flags,
        }

    return {
        "corpus": "acme-zh",
        "level": "confidential",
        "at": "2026-12-01T00:00:00+00:00",
        "threshold": 15,
        "counts": {"documents": 2, "flagged": 1, "by_flag": {"broad-subject": 1}},
        "documents": [
            doc("d0007", f"/board/{name}", [{"flag": "broad-subject", "outside": 31}], 384),
            doc("d0008", "/board/agenda.md", [], 96),
        ],
    }
