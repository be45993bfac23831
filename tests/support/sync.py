"""Running ``eval sync`` in process: the drive API through a TestClient, the target through an ASGI transport
(the simulator's own recall) or any object with ``async recall(query, top_k)``."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI, Request  # at module level: the route's annotations are resolved here
from fastapi.responses import JSONResponse

from drivebench.evaluator.sync.drive_client import DriveClient
from drivebench.evaluator.sync.evaluate import run_sync
from drivebench.evaluator.sync.runner import SyncConfig
from drivebench.evaluator.sync.scenario import Scenario, load_scenario
from drivebench.evaluator.targets.http import HttpTarget
from drivebench.server.api import create_app
from drivebench.simulator.backend import Simulator
from tests.support.sims import client_for


def simulator_target(sim: Simulator) -> HttpTarget:
    app = create_app(sim)
    return HttpTarget("http://testserver/api/mcp/recall", sim.tokens.eval_token, transport=httpx.ASGITransport(app=app))


def drive_client(sim: Simulator) -> DriveClient:
    return DriveClient("http://testserver", sim.tokens.admin_token, http=client_for(sim))


def run_in_process(
    sim: Simulator, scenario: str | Scenario, target: Any = None, *, deadline: float = 5.0, poll: float = 0.1, **kw: Any
) -> dict[str, Any]:
    chosen = load_scenario(scenario) if isinstance(scenario, str) else scenario
    return run_sync(
        drive_client(sim),
        target if target is not None else simulator_target(sim),
        "in-process",
        chosen,
        SyncConfig(deadline_s=deadline, poll_s=poll),
        **kw,
    )


class HidingTarget:
    """Wraps a target and drops ``doc_id`` from the answers to ``user`` (a target that never returned a pair)."""

    def __init__(self, inner: Any, hide: set[tuple[str, str]] | None = None, *, nothing: bool = False) -> None:
        self.inner, self.hide, self.nothing = inner, hide or set(), nothing

    async def recall(self, query: Any, top_k: int) -> Any:
        resp = await self.inner.recall(query, top_k)
        if self.nothing:
            resp.hits = []
        resp.hits = [h for h in resp.hits if (query.user_id, h.doc_id) not in self.hide]
        return resp


class RecallProxy:
    """A recall endpoint in front of a real simulator, for ``eval sync``'s failure paths (serve ``app`` with
    ``tests.support.failopen.serve_app``):

    * ``freeze``: an index that never syncs: the first answer to each (user, query) is replayed forever, so a
      revocation is never reflected;
    * ``fail_after``: the first N calls are forwarded, every later one answers 500 (a target that answers,
      then breaks mid-run)."""

    def __init__(self, upstream: str, *, freeze: bool = False, fail_after: int | None = None) -> None:
        self.upstream, self.freeze, self.fail_after = upstream.rstrip("/"), freeze, fail_after
        self.calls = self.forwarded = self.failed = 0
        self._frozen: dict[tuple[Any, Any], Any] = {}
        self.app = FastAPI()

        @self.app.post("/api/mcp/recall")
        async def recall(request: Request) -> JSONResponse:
            self.calls += 1
            if self.fail_after is not None and self.calls > self.fail_after:
                self.failed += 1
                return JSONResponse({"error": {"code": "internal", "message": "the index is down"}}, status_code=500)
            body = await request.json()
            key = (body.get("user_id"), body.get("query"))
            if self.freeze and key in self._frozen:
                return JSONResponse(self._frozen[key])
            async with httpx.AsyncClient(timeout=30) as client:
                resp = await client.post(
                    f"{self.upstream}/api/mcp/recall",
                    json=body,
                    headers={"Authorization": request.headers.get("authorization", "")},
                )
            self.forwarded += 1
            if self.freeze and resp.status_code == 200:
                self._frozen[key] = resp.json()
            return JSONResponse(resp.json(), status_code=resp.status_code)


class KeepsPurgedTarget:
    """Wraps the simulator's own recall with an index that never hears of a purge: every document it once
    returned to a (user, query) that the drive no longer has (purged) is still returned there. Trash, grants
    and everything else are reflected as the simulator reflects them; no simulator fault keeps purged
    documents, so this stands in for a connector that misses purges (ConfusedPilot's deleted documents)."""

    def __init__(self, inner: Any, sim: Simulator) -> None:
        self.inner, self.sim = inner, sim
        self.seen: dict[tuple[str | None, str], list[Any]] = {}

    async def recall(self, query: Any, top_k: int) -> Any:
        resp = await self.inner.recall(query, top_k)
        key = (query.user_id, query.query)
        kept = self.seen.setdefault(key, [])
        kept += [h for h in resp.hits if h.doc_id not in {k.doc_id for k in kept}]
        ids = {h.doc_id for h in resp.hits}
        resp.hits += [h for h in kept if h.doc_id not in ids and h.doc_id not in self.sim.drive.documents]
        return resp
