"""An in-process target: calls a ``Simulator`` directly (no HTTP), with the same principal rules.

Useful for fast evaluation loops and tests; the request goes through ``recall.recall_for`` with the
simulator's evaluation token exactly as an HTTP request would.
"""

from __future__ import annotations

import asyncio

from drivebench.drive.errors import DriveError, PermissionCheckFailed
from drivebench.formats.evalset import EvalQuery, RunHit
from drivebench.formats.target import TargetError, TargetResponse
from drivebench.simulator.answer import answer_outcome
from drivebench.simulator.backend import Simulator
from drivebench.simulator.recall import RecallQuery, recall_for


class InProcessTarget:
    def __init__(self, sim: Simulator, citation_style: str = "brackets") -> None:
        self.sim = sim
        self.citation_style = citation_style
        self.name = f"inprocess:{sim.drive.name}"
        self._token = sim.tokens.resolve(sim.tokens.eval_token)

    def _call(self, query: EvalQuery, top_k: int, answer: bool = False) -> TargetResponse:
        assert self._token is not None
        try:
            ask = RecallQuery(
                query.query,
                top_k,
                user_id=query.user_id,
                user_role=query.user_role,
                department=query.department,
                as_of=query.as_of,
            )
            outcome = recall_for(self.sim, self._token, ask)
        except PermissionCheckFailed as exc:
            raise TargetError(f"503 permission check failed: {exc}", retryable=False) from exc
        except DriveError as exc:
            raise TargetError(f"{exc.code}: {exc}", retryable=False) from exc
        hits = [RunHit(doc_id=h.doc_id, version_id=h.version_id, score=h.score, rank=h.rank) for h in outcome.hits]
        text = None
        if answer:  # what POST /api/mcp/answer would say, with the simulator's answer levers (and its faults)
            text = answer_outcome(self.sim, outcome, ask, self.citation_style).text
        return TargetResponse(
            hits=hits,
            answer=text,
            as_of=outcome.at.isoformat(),
            snapshot=outcome.snapshot,
            faults=self.sim.faults.header_value(),  # what X-Drivebench-Faults would say
        )

    async def recall(self, query: EvalQuery, top_k: int) -> TargetResponse:
        return await asyncio.to_thread(self._call, query, top_k)

    async def answer(self, query: EvalQuery, top_k: int) -> TargetResponse:
        """Recall plus the simulator's extractive answer (``simulator.answer``), as the answer endpoint gives."""
        return await asyncio.to_thread(self._call, query, top_k, True)

    async def aclose(self) -> None:
        return None
