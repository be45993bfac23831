"""A small vendor-style recall API for the end-to-end tests, in front of the simulator's corpus.

It is *not* the simulator's shape: ``POST /v1/<mode>/search`` with ``{"keyword", "size", "userId",
"role", "dept", "asOf"}`` and an ``X-Api-Key`` header; answers ``{"code": 0, "msg": "ok", "data":
{"items": [{"fileId": <drive path>, "fileName", "versionId": "<version number>", "score"}]}}``, and
errors as HTTP 200 with ``code != 0`` or as plain HTTP statuses. Its ids are its own: drive paths and
numeric version strings, never the corpus's doc or version ids.

Modes (the path segment):

* ``same``: the simulator's own in-process recall for the query's principal (the same ranking as
  the simulator's endpoint), re-shaped.
* ``open``: no permission filtering: every query is answered as one service principal
  (``SERVICE_USER``), whoever asks; the corpus oracle must find the leaks.
* ``opaque``: like ``same`` but ``fileId`` is an opaque id no mapping knows.
* ``empty``: a valid, empty list for every query.
* ``401``, ``403``, ``500``: that HTTP status for every query.
* ``slow``: answers after ``SLOW_S`` seconds.
* ``shape``: ``data.records`` instead of ``data.items``.
* ``code``: HTTP 200 with ``{"code": 40001, "msg": "token expired", "data": null}``.
* ``flaky``: HTTP 500 for queries of user ``FLAKY_USER``, else like ``same``.
"""

from __future__ import annotations

import asyncio
import hashlib
from datetime import datetime
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from drivebench.simulator.backend import Simulator

API_KEY = "vendor-key"
SERVICE_USER = "u003"  # a manager with secret clearance: sees far more than an intern
FLAKY_USER = "u001"
SLOW_S = 3.0
# The body of the vendor's documented curl to the simulator's recall endpoint (docs/recall-api.md), verbatim.
VENDOR_BODY = '{"query": "项目X的技术方案审批人", "user_role": "engineer", "top_k": 10}'


def vendor_app(sim: Simulator) -> FastAPI:
    app = FastAPI()
    token = sim.tokens.resolve(sim.tokens.eval_token)
    assert token is not None

    def items(body: dict[str, Any], as_user: str | None = None) -> list[dict[str, Any]]:
        user, role = (as_user, None) if as_user else (body.get("userId"), body.get("role"))
        principal = sim.principal_for(
            token, user_id=user, user_role=role, department=None if as_user else body.get("dept")
        )
        as_of = datetime.fromisoformat(body["asOf"]) if body.get("asOf") else None
        outcome = sim.recall(principal, str(body["keyword"]), int(body.get("size", 10)), as_of)
        out = []
        for h in outcome.hits:
            doc = sim.drive.documents[h.doc_id]
            number = next(v.version for v in doc.versions if v.version_id == h.version_id)
            out.append({"fileId": h.path, "fileName": h.name, "versionId": str(number), "score": h.score})
        return out

    @app.post("/v1/{mode}/search")
    async def search(mode: str, request: Request) -> JSONResponse:
        if request.headers.get("x-api-key") != API_KEY:
            return JSONResponse({"code": 401, "msg": "invalid api key"}, status_code=401)
        body = await request.json()
        if mode in ("401", "403", "500"):
            return JSONResponse({"code": int(mode), "msg": f"vendor says {mode}"}, status_code=int(mode))
        if mode == "code":
            return JSONResponse({"code": 40001, "msg": "token expired", "data": None})
        if mode == "flaky" and body.get("userId") == FLAKY_USER:
            return JSONResponse({"code": 500, "msg": "backend unavailable"}, status_code=500)
        if mode == "slow":
            await asyncio.sleep(SLOW_S)
        if mode == "empty":
            return JSONResponse({"code": 0, "msg": "ok", "data": {"items": [], "total": 0}})
        found = await asyncio.to_thread(items, body, SERVICE_USER if mode == "open" else None)
        if mode == "opaque":
            for it in found:
                it["fileId"] = "fid-" + hashlib.sha1(it["fileId"].encode()).hexdigest()[:10]
        key = "records" if mode == "shape" else "items"
        return JSONResponse({"code": 0, "msg": "ok", "data": {key: found, "total": len(found)}})

    return app


PROFILE = """\
[request]
url = "{url}/v1/{mode}/search"
method = "POST"
headers = {{ "X-Tenant" = "acme" }}
timeout_s = {timeout}
concurrency = 4
[request.body]
keyword = "${{query}}"
size = "${{top_k}}"
userId = "${{user_id}}"
role = "${{user_role}}"
dept = "${{department}}"
asOf = "${{as_of}}"
[auth]
token = "{key}"
header = "X-Api-Key"
scheme = ""
[response]
results = "data.items"
doc_id = "fileId"
name = "fileName"
version = "versionId"
score = "score"
ok_when = {{ path = "code", equals = 0 }}
message = "msg"
[ids]
match = "path"
"""


def vendor_profile(url: str, mode: str, *, timeout: float = 30, key: str = API_KEY) -> str:
    return PROFILE.format(url=url, mode=mode, timeout=timeout, key=key)
