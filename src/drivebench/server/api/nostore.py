"""``Cache-Control: no-store`` on every response but the public static assets.

Nearly every answer carries one principal's view of the drive (recall, answers, files, permissions, the change
feed, the directory, MCP, the console's pages), and a shared or browser cache must keep none of it: a later
user of the same machine or proxy would read it. Pure ASGI and outermost, so it also covers what bypasses the
routers (the recall fast path, the MCP mount, the boundary's own error answers); a route's own
``Cache-Control`` is replaced. Only the console's CSS and the offline docs' assets (the same for everyone) may be
cached.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

PUBLIC_PREFIXES = ("/ui/static/", "/_docs-assets/")  # identical for every caller, no private data
NO_STORE = (b"cache-control", b"no-store")


def is_public(path: str) -> bool:
    return path.startswith(PUBLIC_PREFIXES)


class NoStore:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or is_public(scope.get("path", "")):
            await self.app(scope, receive, send)
            return

        async def send_no_store(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"cache-control"]
                message = {**message, "headers": [*headers, NO_STORE]}
            await send(message)

        await self.app(scope, receive, send_no_store)
