"""``Drivebench-Index: behind`` on every response while the Milvus rows lag the drive.

The drive is the truth: a write committed while the Milvus server did not answer still succeeds (its 2xx), and
the rows are written when Milvus answers again (``Simulator.write_shared_rows``). This header says so on that
write's answer and on every answer until the rows are current; recalls meanwhile answer 503
``index-unavailable`` (the writer) or refuse what disagrees (replicas), never from the stale rows.
"""

from __future__ import annotations

from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

HEADER = b"drivebench-index"
BEHIND = b"behind"


class IndexStateHeader:
    def __init__(self, app: ASGIApp, sim: Any) -> None:
        self.app = app
        self.sim = sim

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_state(message: Message) -> None:
            if message["type"] == "http.response.start" and self.sim.shared_rows_behind is not None:
                message = {**message, "headers": [*message.get("headers", []), (HEADER, BEHIND)]}
            await send(message)

        await self.app(scope, receive, send_state)
