"""An in-process target: calls a ``Simulator`` directly (no HTTP), with the same principal rules.

Useful for fast evaluation loops and tests; the request goes through ``principal_for`` with the
simulator's evaluation token exactly as an HTTP request would.
"""

from __future__ import annotations

import asyncio

from drivebench.drive.errors import DriveError, PermissionCheckFailed
from drivebench.formats.evalset import EvalQuery, RunHit
from drivebench.formats.target import TargetError, TargetResponse
from drivebench.simulator.backend import Simulator


class InProcessTarget:
    def __init__(self, sim: Simulator) -> None:
        self.sim = sim
        self.name = f"inprocess:{sim.drive.name}"
        self._token = sim.tokens.resolve(sim.tokens.eval_token)

    def _call(self, query: EvalQuery, top_k: int) -> TargetResponse:
        assert self._token is not None
        try:
            principal = self.sim.principal_for(
                self._token, user_id=query.user_id, user_role=query.user_role, department=query.department
            )
            outcome = self.sim.recall(principal, query.query, top_k, query.as_of)
        except PermissionCheckFailed as exc:
            raise TargetError(f"503 permission check failed: {exc}", retryable=False) from exc
        except DriveError as exc:
            raise TargetError(f"{exc.code}: {exc}", retryable=False) from exc
        hits = [RunHit(doc_id=h.doc_id, version_id=h.version_id, score=h.score, rank=h.rank) for h in outcome.hits]
        return TargetResponse(
            hits=hits,
            as_of=outcome.at.isoformat(),
            snapshot=outcome.snapshot,
            faults=self.sim.faults.header_value(),  # what X-Drivebench-Faults would say
        )

    async def recall(self, query: EvalQuery, top_k: int) -> TargetResponse:
        return await asyncio.to_thread(self._call, query, top_k)

    async def aclose(self) -> None:
        return None
