"""Everything the seed corpus holds, gathered from the hand-written content modules."""

from __future__ import annotations

from drivebench.corpora.seed import docs_company, docs_finance, docs_hr_legal_it, docs_project_x, docs_rd
from drivebench.corpora.seed.model import SeedDoc
from drivebench.corpora.seed.org import (
    CLOCK_NOW,
    CLOCK_START,
    DEPARTMENTS,
    FOLDERS,
    GRANTS,
    PROJECTS,
    USERS,
)

DOCS: list[SeedDoc] = sorted(
    [
        *docs_company.DOCS,
        *docs_rd.DOCS,
        *docs_project_x.DOCS,
        *docs_finance.DOCS,
        *docs_hr_legal_it.DOCS,
    ],
    key=lambda d: d.doc_id,
)
DOCS_BY_ID: dict[str, SeedDoc] = {d.doc_id: d for d in DOCS}

__all__ = ["CLOCK_NOW", "CLOCK_START", "DEPARTMENTS", "DOCS", "DOCS_BY_ID", "FOLDERS", "GRANTS", "PROJECTS", "USERS"]
