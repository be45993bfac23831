"""What the HTTP benchmarks share: a lean keep-alive client, throughput at N requests in flight, and servers in
their own processes (the simulator with the recall fast path off, and two HTTP floors).

Why a lean client: the client runs on the same 2 cores as the server, and every millisecond it spends is
timed with the request. ``httpx`` spends about 0.7-0.8 ms of Python per keep-alive POST more than the standard
library's ``http.client`` (measured side by side against the same server process); that is the client's cost,
not the server's, so the judged figures use ``KeepAliveClient`` and ``bench_recall_http`` prints httpx's beside.

Why servers in their own processes: a server in a thread of the benchmark's process shares its interpreter
lock with the client, and each request then also times the hand-offs of that lock between the two. A
deployed server has a process of its own (``drivebench serve``).

``python benchmarks/http_harness.py KIND --port P [...]`` serves one of the variants (``spawn_variant``).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import sys
import threading
import time
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, Request, Response  # module level: the floor's annotations resolve here

from drivebench.server.process import free_port, spawn_server

RECALL = "/api/mcp/recall"
VARIANTS = ("routed", "fastapi_floor", "bare_floor")


class KeepAliveClient:
    """One keep-alive HTTP/1.1 connection (``http.client``) sending JSON POSTs with fixed headers.

    A server closes a keep-alive connection left idle (uvicorn: after 5 s); like every HTTP client, the next
    request then reconnects and is sent once more (recall only reads). ``reconnects`` counts those."""

    def __init__(self, url: str, headers: dict[str, str], timeout: float = 120.0) -> None:
        parts = urlsplit(url)
        self.conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
        self.headers = {**headers, "Content-Type": "application/json"}
        self.reconnects = 0

    def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        try:
            return self._post(path, body)
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            self.conn.close()
            self.reconnects += 1
            return self._post(path, body)

    def _post(self, path: str, body: bytes) -> tuple[int, bytes]:
        self.conn.request("POST", path, body, self.headers)
        response = self.conn.getresponse()
        return response.status, response.read()

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, bytes, dict[str, str]]:
        """Any method, with ``headers`` on top of the client's; (status, body, response headers). A request
        that finds the connection closed by the server is sent once more (callers send reads only)."""
        try:
            return self._request(method, path, body, headers)
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            self.conn.close()
            self.reconnects += 1
            return self._request(method, path, body, headers)

    def _request(
        self, method: str, path: str, body: bytes | None, headers: dict[str, str] | None
    ) -> tuple[int, bytes, dict[str, str]]:
        self.conn.request(method, path, body, {**self.headers, **(headers or {})})
        response = self.conn.getresponse()
        return response.status, response.read(), {k.lower(): v for k, v in response.getheaders()}

    def close(self) -> None:
        self.conn.close()


def recall_doc_ids(data: bytes) -> list[str]:
    """The ``doc_id`` of each result of a recall response; ValueError when ``data`` is not one (another shape,
    an error body, HTML from a proxy): a timed answer that is no recall must fail the run, never count."""
    try:
        body = json.loads(data)
        return [str(hit["doc_id"]) for hit in body["results"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"not a recall response ({exc!r}): {data[:200]!r}") from None


def throughput(url: str, headers: dict[str, str], bodies: list[bytes], in_flight: int) -> float:
    """Requests per second with ``in_flight`` client threads (one ``KeepAliveClient`` each) sending ``bodies``
    to the recall endpoint, each thread its own share. Any answer but 200, an answer that is no recall response,
    or only empty answers raise (a failure is no throughput); answers are read after the clock stops."""
    shares = [bodies[i::in_flight] for i in range(in_flight)]
    errors: list[str] = []
    barrier = threading.Barrier(in_flight + 1)

    answers: list[bytes] = []

    def run(share: list[bytes]) -> None:
        client = KeepAliveClient(url, headers)
        try:
            client.post(RECALL, share[0])  # connect before the clock starts
            barrier.wait()
            for body in share:
                status, data = client.post(RECALL, body)
                if status != 200:
                    errors.append(f"{status}: {data[:300]!r}")
                answers.append(data)  # read after the clock stops
        except Exception as exc:
            errors.append(repr(exc))
            barrier.abort()
        finally:
            client.close()

    threads = [threading.Thread(target=run, args=(share,)) for share in shares]
    for t in threads:
        t.start()
    with contextlib.suppress(threading.BrokenBarrierError):
        barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    if errors:
        raise RuntimeError(f"{len(errors)} failed requests at {in_flight} in flight: {errors[:3]}")
    if not any(recall_doc_ids(data) for data in answers):  # raises on an answer that is no recall
        raise RuntimeError(f"all {len(answers)} recalls at {in_flight} in flight came back empty")
    return len(bodies) / elapsed


def spawn_variant(
    kind: str, corpus: str = "", response_file: str = "", embedder: str = "e5", timeout: float = 900.0
) -> tuple[Any, str]:
    """Start ``python benchmarks/http_harness.py KIND`` as a child process; returns (process, url) once it
    answers ``/healthz``. ``routed`` needs ``corpus`` (and $DRIVEBENCH_TOKEN_SECRET); the floors need
    ``response_file``, the bytes they answer every recall with."""
    port = free_port()
    args = [sys.executable, __file__, kind, "--port", str(port)]  # as a script: from any working directory
    args += ["--corpus", corpus, "--embedder", embedder, "--response-file", response_file]
    url = f"http://127.0.0.1:{port}"
    return spawn_server(args, url, f"http_harness {kind}", timeout), url


def _app(kind: str, corpus: str, embedder: str, response_file: str) -> Any:
    if kind == "routed":  # the simulator as ``drivebench serve`` loads it, recall through the framework's routing
        from drivebench.server.api import create_app
        from drivebench.server.process import ReplicaSpec, limit_search_threads, load_replica

        limit_search_threads()
        return create_app(load_replica(ReplicaSpec(corpus, "bm25", embedder, [], rerank=None)), recall_fast_path=False)
    with open(response_file, "rb") as fh:
        payload = fh.read()
    if kind == "fastapi_floor":  # a bare FastAPI app: what any recall over FastAPI pays before its own work
        app = FastAPI()

        @app.post(RECALL)
        async def floor(request: Request) -> Response:
            await request.body()  # every recall reads its body
            return Response(payload, media_type="application/json")

        @app.get("/healthz")
        async def healthz() -> dict[str, str]:
            return {"status": "ok"}

        return app

    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]

    async def bare(scope: Any, receive: Any, send: Any) -> None:  # bare ASGI: what uvicorn alone pays
        if scope["type"] != "http":
            return
        more = True
        while more:
            more = (await receive()).get("more_body", False)
        body = payload if scope["path"] == RECALL else b"{}"
        sized = headers if body is payload else [(b"content-type", b"application/json"), (b"content-length", b"2")]
        await send({"type": "http.response.start", "status": 200, "headers": sized})
        await send({"type": "http.response.body", "body": body})

    return bare


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=VARIANTS)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--corpus", default="")
    parser.add_argument("--embedder", default="e5")
    parser.add_argument("--response-file", default="")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    app = _app(args.kind, args.corpus, args.embedder, args.response_file)
    lifespan = "on" if args.kind == "routed" else "off"
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False, lifespan=lifespan)


if __name__ == "__main__":
    main()
