"""8 readers and 1 writer against a real ``drivebench serve --data-dir`` for 8 s (60 s with ``DRIVEBENCH_SOAK=1``,
any length with ``DRIVEBENCH_CONCURRENCY_SECONDS``).

* no errors: every request answers 2xx;
* no leaks: no reader ever sees a document outside its permitted set (the corpus's own ground truth,
  plus the uploads for the users who may read ``/rd/platform``); the server's open file descriptors
  stay flat and its threads bounded;
* every acknowledged version is recallable from the moment it is acknowledged: a reader that starts
  after the acknowledgement finds the document at that version or a later one.
"""

from __future__ import annotations

import json
import os
import random
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from drivebench.corpora.builtin import resolve_corpus
from drivebench.formats.corpus import load_manifest
from tests.support.serverproc import ServerProc

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

DURATION = float(
    os.environ.get("DRIVEBENCH_CONCURRENCY_SECONDS", "60" if os.environ.get("DRIVEBENCH_SOAK") == "1" else "8")
)
READERS = ["u010", "u007", "u001", "u002", "u003", "u005", "u011", "u004"]  # 5 may read /rd/platform, 3 may not
MAY_READ_UPLOADS = {"u010", "u007", "u001", "u002", "u003"}
QUERIES = [
    "项目X的技术方案审批人",
    "budget 预算",
    "员工手册 年假",
    "加密模块设计",
    "融资计划",
    "platform architecture",
    "薪酬",
]
VERSION = re.compile(r"-v(\d+)$")


@dataclass
class Shared:
    lock: threading.Lock = field(default_factory=threading.Lock)
    acked: dict[str, tuple[int, float]] = field(default_factory=dict)  # doc_id -> (version, ack time)
    order: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: int = 0
    uploads: int = 0
    versions: int = 0
    fresh_checks: int = 0  # acknowledged < 100 ms before the read started
    version_checks: int = 0
    leak_checks: int = 0


def marker(doc_index: int) -> str:
    return f"concdoc{doc_index}"


def writer(srv: ServerProc, shared: Shared, deadline: float) -> None:
    rng = random.Random(7)
    docs: list[tuple[str, int]] = []  # (doc_id, doc index)
    with httpx.Client(base_url=srv.url, timeout=60, headers=srv.headers("u010")) as c:
        i = 0
        while time.monotonic() < deadline:
            if docs and rng.random() < 0.4:
                doc_id, idx = rng.choice(docs)
                data = f"# {marker(idx)} update\n{marker(idx)} 并发测试 新版本 {rng.random()}".encode()
                r = c.post(f"/api/v1/files/{doc_id}/versions", files={"file": ("v.md", data)})
            else:
                idx, i = i, i + 1
                data = f"# {marker(idx)}\n{marker(idx)} 并发测试 platform notes {rng.random()}".encode()
                r = c.post(
                    "/api/v1/files", files={"file": (f"{marker(idx)}.md", data)}, data={"folder": "/rd/platform"}
                )
            now = time.monotonic()
            with shared.lock:
                shared.requests += 1
                if r.status_code != 201:
                    shared.errors.append(f"writer {r.status_code} {r.text[:200]}")
                    return
                body = r.json()
                shared.acked[body["doc_id"]] = (body["version"], now)
                if body["version"] == 1:
                    docs.append((body["doc_id"], idx))
                    shared.order.append(body["doc_id"])
                    shared.uploads += 1
                else:
                    shared.versions += 1
            shared_markers[body["doc_id"]] = marker(idx)


shared_markers: dict[str, str] = {}


def reader(srv: ServerProc, user: str, allowed: set[str], shared: Shared, deadline: float, seed: int) -> None:
    rng = random.Random(seed)
    with httpx.Client(base_url=srv.url, timeout=60, headers=srv.headers(user)) as c:
        while time.monotonic() < deadline:
            with shared.lock:
                pick = None
                if shared.order and rng.random() < 0.6:
                    doc_id = shared.order[-1] if rng.random() < 0.5 else rng.choice(shared.order)
                    pick = (doc_id, *shared.acked[doc_id])
            started = time.monotonic()
            query = shared_markers.get(pick[0], rng.choice(QUERIES)) if pick else rng.choice(QUERIES)
            r = c.post("/api/mcp/recall", json={"query": query, "top_k": 10})
            with shared.lock:
                shared.requests += 1
            if r.status_code != 200:
                with shared.lock:
                    shared.errors.append(f"{user} {r.status_code} {r.text[:200]}")
                return
            results = r.json()["results"]
            ids = {h["doc_id"] for h in results}
            uploads_seen = {d for d in ids if d.startswith("n")}
            corpus_seen = ids - uploads_seen
            problems = []
            if not corpus_seen <= allowed:
                problems.append(f"leak to {user}: {sorted(corpus_seen - allowed)}")
            if uploads_seen and user not in MAY_READ_UPLOADS:
                problems.append(f"leak of uploads to {user}: {sorted(uploads_seen)}")
            if pick is not None and user in MAY_READ_UPLOADS:
                doc_id, version, acked_at = pick
                hit = next((h for h in results[:2] if h["doc_id"] == doc_id), None)
                if hit is None or int(VERSION.search(hit["version_id"]).group(1)) < version:  # type: ignore[union-attr]
                    problems.append(f"{user}: acknowledged {doc_id} v{version} not recalled: {results[:3]}")
                with shared.lock:
                    shared.version_checks += 1
                    shared.fresh_checks += started - acked_at < 0.1
            with shared.lock:
                shared.leak_checks += 1
                shared.errors.extend(problems)
                if problems:
                    return


def test_eight_readers_one_writer(tmp_path: Path) -> None:
    manifest = load_manifest(resolve_corpus("seed"))
    assert manifest.access is not None
    srv = ServerProc(tmp_path / "data")
    srv.start()
    shared = Shared()
    try:
        # warm up every path once, then take the baseline
        for user in READERS:
            assert (
                httpx.post(
                    f"{srv.url}/api/mcp/recall",
                    json={"query": "预算", "top_k": 5},
                    headers=srv.headers(user),
                    timeout=60,
                ).status_code
                == 200
            )
        fds0, threads0, rss0 = srv.fd_count(), srv.thread_count(), srv.rss_kb()
        deadline = time.monotonic() + DURATION
        threads = [threading.Thread(target=writer, args=(srv, shared, deadline))]
        for n, user in enumerate(READERS):
            allowed = set(manifest.access[user])
            threads.append(threading.Thread(target=reader, args=(srv, user, allowed, shared, deadline, n)))
        for t in threads:
            t.start()
        for t in threads:
            t.join(DURATION + 120)
        assert not shared.errors, shared.errors[:5]
        settle = time.monotonic() + 2.0  # let the closed client connections go (up to the 1 s once slept, and more)
        while srv.fd_count() > fds0 + 10 and time.monotonic() < settle:
            time.sleep(0.05)
        fds1, threads1, rss1 = srv.fd_count(), srv.thread_count(), srv.rss_kb()
        stats = srv.get("/_sim/stats").json()
        report = {
            "seconds": DURATION,
            "requests": shared.requests,
            "uploads": shared.uploads,
            "new_versions": shared.versions,
            "version_checks": shared.version_checks,
            "checks_within_100ms_of_ack": shared.fresh_checks,
            "leak_checks": shared.leak_checks,
            "fds": [fds0, fds1],
            "threads": [threads0, threads1],
            "rss_mb": [rss0 // 1024, rss1 // 1024],
            "changes": stats["changes"],
        }
        print("concurrency-test", json.dumps(report))
        assert shared.uploads > 0 and shared.versions > 0 and shared.version_checks > 100
        assert stats["changes"] == shared.uploads + shared.versions
        assert fds1 <= fds0 + 10, (fds0, fds1)
        assert threads1 <= 80, threads1
    finally:
        srv.kill()
