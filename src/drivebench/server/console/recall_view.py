"""The recall playground, for the console: what ``POST /api/mcp/recall`` answers, and (for an admin viewing as
someone) the documents that matched but were withheld (``simulator/recall_view.py``).

No HTTP, no decision. The results are ``recall.recall_as``'s outcome turned into the API's own response model
(``api.recall.to_response``), so the playground shows exactly what the API returns. Another pipeline than the
server's runs the same recall code (the same permission mask and enforce re-check) with that pipeline's
retriever over the same index (``RecallQuery.pipeline``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from drivebench.server.api.recall import recall_query, to_response
from drivebench.server.api.schemas import RecallRequest, RecallResponse
from drivebench.simulator.recall import recall_as
from drivebench.simulator.recall_view import PIPELINES, Withheld, withheld

if TYPE_CHECKING:
    from drivebench.drive.permissions import Principal
    from drivebench.simulator.backend import Simulator

__all__ = ["PIPELINES", "Playground", "Withheld", "playground"]


@dataclass
class Playground:
    response: RecallResponse
    pipeline: str
    withheld: list[Withheld] | None = None  # None: not shown (a user, or no one viewed as)


def run_recall(sim: Simulator, principal: Principal, req: RecallRequest, pipeline: str) -> RecallResponse:
    """The API's recall as the page's principal (who the session views as), with ``pipeline``."""
    outcome = recall_as(sim, principal, replace(recall_query(req), pipeline=pipeline))
    return to_response(req, outcome, [])


def playground(sim: Simulator, principal: Principal, req: RecallRequest, pipeline: str, *, explain: bool) -> Playground:
    """Recall as ``principal``; with ``explain`` (an admin viewing as someone) the withheld list too."""
    response = run_recall(sim, principal, req, pipeline)
    out = Playground(response, pipeline)
    if explain:
        query = replace(recall_query(req), pipeline=pipeline)
        out.withheld = withheld(sim, principal, query, {r.doc_id for r in response.results})
    return out
