"""Timing oracles: how much longer a lookup of a hidden document or folder takes than a lookup of a missing one of
the same shape, per lookup surface, against a real ``drivebench serve`` process (acme-zh@2; ``BENCH_QUICK=1``:
seed). Target: paired median difference under 0.1 ms on every surface.

A user who may not list an object must not learn that it exists, from the answer or from its time. Lookups
read the caller's visibility off the permission masks first (``PermissionEngine.lookup``), so a hidden and a
missing id take the same path and neither reaches Casbin; before that, a Casbin check ran only when the object
existed and a hidden id cost 1.2-2.7 ms more (paired medians over 300 pairs).

Per surface (``GET /api/v1/files/{id}``, console ``/ui/doc/{id}``, ``GET /api/permissions/effective?path=`` of a
document and of a path under a folder, recall's ``filters.folder``, MCP ``get_document`` over streamable HTTP),
one user (the one with the most hidden documents and folders) sends 300 pairs: a hidden id or path and a missing one of the same shape (one character
changed), alternating which goes first, each hidden/missing couple cycling over up to 25 objects. Each timed
answer must be the expected refusal (404; 400 for the folder filter; a not-found tool error over MCP) and a hidden
and a missing answer must be identical but for the id or path. Reported: the median of the paired differences
(hidden - missing) with a 95% bootstrap interval, and the share of pairs where the hidden one was slower; beside
it, the resolution of the method: 60 pairs of a lookup the user may see (which runs Casbin) against a missing one.
The client is ``http_harness.KeepAliveClient`` (keep-alive ``http.client``); the server has its own process.
Writes ``benchmarks/results/bench_timing_oracles.json`` and ``.md``.
Run: ``flock /tmp/drivebench-heavy.lock .venv/bin/python -m benchmarks.bench_timing_oracles``.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote, urlencode

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("DRIVEBENCH_TOKEN_SECRET", "bench-timing-oracles-" + "0" * 32)  # the server's tokens

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # as a script too
from benchmarks.http_harness import KeepAliveClient
from benchmarks.report import report_checks
from drivebench.corpora.builtin import DEFAULT_CORPUS, resolve_corpus
from drivebench.drive.permissions.compiler import doc_obj, folder_obj
from drivebench.drive.permissions.engine import PermissionEngine, Principal
from drivebench.drive.state import Drive
from drivebench.drive.tokens import TokenRegistry
from drivebench.server.process import ReplicaSpec, start_replicas

QUICK = os.environ.get("BENCH_QUICK") == "1"
CORPUS = "seed" if QUICK else DEFAULT_CORPUS
PAIRS = int(os.environ.get("BENCH_PAIRS", 100 if QUICK else 300))
WARMUP = 30
RESOLUTION_PAIRS = 60
TARGET_MS = 0.1
OBJECTS = 25  # hidden/missing couples cycled over per surface


# ---------------------------------------------------------------------------------------------------- objects
def _mutations(text: str) -> list[str]:
    """``text`` with one character changed (same UTF-8 width), last characters first."""
    out = []
    for i in range(len(text) - 1, -1, -1):
        c = text[i]
        for step in range(1, 40):
            n = chr(ord(c) + step) if c.isascii() and not c.isalnum() else None
            if c.isdigit():
                n = str((int(c) + step) % 10) if step < 10 else None
            elif c.isascii() and c.isalpha():
                base = ord("a") if c.islower() else ord("A")
                n = chr(base + (ord(c) - base + step) % 26) if step < 26 else None
            elif not c.isascii():
                n = chr(ord(c) + step)
                if len(n.encode()) != len(c.encode()) or not n.isprintable():
                    n = None
            if n is not None and n != c and n not in "/.":
                out.append(text[:i] + n + text[i + 1 :])
    return out


def _missing_like(value: str, taken: Callable[[str], bool], keep_suffix: bool) -> str:
    """A value of the same shape as ``value`` (one character changed; for a path, in its last segment before the
    extension) that ``taken`` says does not exist."""
    head, sep, last = value.rpartition("/")
    stem, dot, ext = last.rpartition(".") if keep_suffix and "." in last else (last, "", "")
    for changed in _mutations(stem):
        candidate = f"{head}{sep}{changed}{dot}{ext}"
        if not taken(candidate):
            return candidate
    raise RuntimeError(f"no missing value like {value!r}")


def pick(drive: Drive, engine: PermissionEngine) -> dict[str, Any]:
    """The user with the most hidden documents and folders, and per kind: hidden objects, missing ones of the
    same shape, and one the user may see."""
    now = drive.clock.now()
    doc_paths = {drive.doc_path(d) for d in drive.documents.values()}
    folder_paths = {drive.folder_path(f) for f in drive.folders}

    def hidden_for(p: Principal) -> tuple[list[str], list[str], list[str], list[str]]:
        lists, previews = engine.allowed_mask(p, "list", now), engine.allowed_mask(p, "preview", now)
        hidden, seen = [], []
        for i, doc_id in enumerate(engine.doc_ids):
            d = drive.documents[doc_id]
            if d.trashed_at is not None or not d.versions:
                continue
            if not lists[i] and not previews[i]:
                hidden.append(doc_id)
            elif lists[i] and previews[i]:
                seen.append(doc_id)
        folders = [f for f in sorted(drive.folders) if drive.folder_path(f) != "/"]
        lists_f = {f: engine.enforce(p, folder_obj(f), "list", now) for f in folders}  # the reference decides
        hidden_f = [f for f in folders if not lists_f[f]]
        seen_f = [f for f in folders if lists_f[f]]
        return hidden, seen, hidden_f, seen_f

    best: tuple[int, str] | None = None
    for user in sorted(drive.users):
        h, s, hf, sf = hidden_for(engine.user_principal(user))
        if s and sf and hf and h:
            score = min(len(h), 5 * len(hf))
            if best is None or score > best[0]:
                best = (score, user)
    assert best is not None, "no user with hidden and visible documents and folders"
    user = best[1]
    p = engine.user_principal(user)
    hidden, seen, hidden_f, seen_f = hidden_for(p)
    step = max(1, len(hidden) // OBJECTS)
    hidden = hidden[::step][:OBJECTS]
    hidden_f = hidden_f[:OBJECTS]
    assert all(not engine.enforce(p, doc_obj(d), "list", now, drive.documents[d].secret_level) for d in hidden)
    ids = [(d, _missing_like(d, lambda x: x in drive.documents, False)) for d in hidden]
    paths = [
        (drive.doc_path(drive.documents[d]), "")
        for d in hidden
        if sum(drive.doc_path(x) == drive.doc_path(drive.documents[d]) for x in drive.documents.values()) == 1
    ]
    paths = [(x, _missing_like(x, lambda y: y in doc_paths or y in folder_paths, True)) for x, _ in paths]
    folders = [(drive.folder_path(f), "") for f in hidden_f]
    folders = [(x, _missing_like(x, lambda y: y in doc_paths or y in folder_paths, False)) for x, _ in folders]
    return {
        "user": user,
        "ids": ids,
        "paths": paths,
        "folders": folders,
        "under": [(f"{h}/notes.md", f"{m}/notes.md") for h, m in folders],
        "visible_id": seen[0],
        "visible_path": drive.doc_path(drive.documents[seen[0]]),
        "visible_folder": drive.folder_path(seen_f[0]),
    }


# ---------------------------------------------------------------------------------------------------- requests
class Mcp:
    """A streamable-HTTP MCP session over one keep-alive connection (initialize, then tool calls)."""

    ACCEPT: ClassVar[dict[str, str]] = {"Accept": "application/json, text/event-stream"}

    def __init__(self, client: KeepAliveClient) -> None:
        self.client, self.next_id = client, 1
        self.session = dict(self.ACCEPT)
        status, data, headers = self._rpc("initialize", self._init_params())
        if status != 200 or "mcp-session-id" not in headers:
            raise RuntimeError(f"MCP initialize answered {status}: {data[:300]!r}")
        self.session = {"mcp-session-id": headers["mcp-session-id"], **self.ACCEPT}
        body = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
        status, data, _ = client.request("POST", "/mcp/", body, self.session)
        if status not in (200, 202):
            raise RuntimeError(f"MCP initialized notification answered {status}: {data[:300]!r}")

    @staticmethod
    def _init_params() -> dict[str, Any]:
        return {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench_timing_oracles", "version": "1"},
        }

    def _rpc(self, method: str, params: dict[str, Any]) -> tuple[int, bytes, dict[str, str]]:
        body = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode()
        self.next_id += 1
        return self.client.request("POST", "/mcp/", body, self.session)

    def call(self, tool: str, args: dict[str, Any]) -> tuple[int, bytes]:
        status, data, _ = self._rpc("tools/call", {"name": tool, "arguments": args})
        return status, data


def mcp_text(data: bytes) -> tuple[bool, str]:
    """(is_error, text) of a tools/call answer (JSON, or server-sent events carrying JSON)."""
    text = data.decode("utf-8", "replace")
    payloads = [m.group(1) for m in re.finditer(r"^data: (.*)$", text, re.M)] or [text]
    for payload in payloads:
        msg = json.loads(payload)
        if "result" in msg:
            result = msg["result"]
            return bool(result.get("isError")), "".join(c.get("text", "") for c in result.get("content", []))
        if "error" in msg:
            return True, json.dumps(msg["error"])
    raise ValueError(f"no tools/call result in {text[:300]!r}")


Surface = tuple[str, Callable[[str], tuple[int, bytes]], Callable[[int, bytes], str | None]]


def surfaces(client: KeepAliveClient, mcp: Mcp) -> dict[str, tuple[str, Surface]]:
    """name -> (kind of object, (description, send(object) -> (status, body), refusal(status, body) -> the
    comparable refusal text, None when the answer is no refusal))."""

    def get(path: str) -> tuple[int, bytes]:
        status, data, _ = client.request("GET", path)
        return status, data

    def refused(expected: int) -> Callable[[int, bytes], str | None]:
        return lambda status, data: data.decode("utf-8", "replace") if status == expected else None

    def recall(folder: str) -> tuple[int, bytes]:
        body = json.dumps({"query": "预算 report", "top_k": 5, "filters": {"folder": folder}}).encode()
        status, data, _ = client.request("POST", "/api/mcp/recall", body)
        return status, data

    def mcp_refused(status: int, data: bytes) -> str | None:
        is_error, text = mcp_text(data)
        return text if status == 200 and is_error and "not-found (404)" in text else None

    return {
        "files_get": (
            "ids",
            ("GET /api/v1/files/{id}", lambda x: get(f"/api/v1/files/{quote(x)}"), refused(404)),
        ),
        "console_doc": ("ids", ("GET /ui/doc/{id}", lambda x: get(f"/ui/doc/{quote(x)}"), refused(404))),
        "effective_path": (
            "paths",
            (
                "GET /api/permissions/effective?path=",
                lambda x: get("/api/permissions/effective?" + urlencode({"path": x})),
                refused(404),
            ),
        ),
        "effective_under_folder": (
            "under",
            (
                "GET /api/permissions/effective?path= under a folder",
                lambda x: get("/api/permissions/effective?" + urlencode({"path": x})),
                refused(404),
            ),
        ),
        "recall_folder": ("folders", ("POST /api/mcp/recall filters.folder", recall, refused(400))),
        "mcp_get_document": (
            "ids",
            ("MCP tools/call get_document", lambda x: mcp.call("get_document", {"doc_id": x}), mcp_refused),
        ),
    }


# ---------------------------------------------------------------------------------------------------- statistics
def paired(diffs: list[float], resamples: int = 4000) -> dict[str, float]:
    d = np.asarray(diffs)
    rng = np.random.default_rng(0)
    medians = np.median(d[rng.integers(0, len(d), (resamples, len(d)))], axis=1)
    lo, hi = np.quantile(medians, [0.025, 0.975])
    return {
        "median_ms": round(float(np.median(d)), 4),
        "ci95_ms": [round(float(lo), 4), round(float(hi), 4)],
        "hidden_slower_share": round(float(np.mean(d > 0)), 3),
    }


def timed(send: Callable[[str], tuple[int, bytes]], x: str) -> tuple[float, int, bytes]:
    t0 = time.perf_counter()
    status, data = send(x)
    return 1000 * (time.perf_counter() - t0), status, data


def measure(surface: Surface, couples: list[tuple[str, str]], visible: str) -> dict[str, Any]:
    _, send, refusal = surface
    for i in range(WARMUP):
        hidden, missing = couples[i % len(couples)]
        send(hidden), send(missing), send(visible)
    diffs: list[float] = []
    answers: list[tuple[str, str, int, bytes, int, bytes]] = []
    for i in range(PAIRS):
        hidden, missing = couples[i % len(couples)]
        if i % 2 == 0:  # alternate which goes first
            t_h, s_h, b_h = timed(send, hidden)
            t_m, s_m, b_m = timed(send, missing)
        else:
            t_m, s_m, b_m = timed(send, missing)
            t_h, s_h, b_h = timed(send, hidden)
        diffs.append(t_h - t_m)
        answers.append((hidden, missing, s_h, b_h, s_m, b_m))
    resolution: list[float] = []
    for i in range(RESOLUTION_PAIRS):
        _, missing = couples[i % len(couples)]
        if i % 2 == 0:
            t_v, _, _ = timed(send, visible)
            t_m, _, _ = timed(send, missing)
        else:
            t_m, _, _ = timed(send, missing)
            t_v, _, _ = timed(send, visible)
        resolution.append(t_v - t_m)
    for hidden, missing, s_h, b_h, s_m, b_m in answers:  # read after the clock stopped
        r_h, r_m = refusal(s_h, b_h), refusal(s_m, b_m)
        if r_h is None or r_m is None:
            raise RuntimeError(f"not the expected refusal: {s_h} {b_h[:200]!r} / {s_m} {b_m[:200]!r}")
        if r_h.replace(hidden, "X").replace(quote(hidden), "X") != r_m.replace(missing, "X").replace(
            quote(missing), "X"
        ):
            raise RuntimeError(f"a hidden and a missing answer differ: {r_h[:300]!r} / {r_m[:300]!r}")
    return {
        **paired(diffs),
        "pairs": len(diffs),
        "objects": len(couples),
        "visible_minus_missing_median_ms": round(float(np.median(resolution)), 3),
    }


def main() -> None:
    corpus_dir = resolve_corpus(CORPUS)
    drive = Drive.from_corpus(corpus_dir)
    chosen = pick(drive, PermissionEngine(drive))
    token = TokenRegistry(drive, os.environ["DRIVEBENCH_TOKEN_SECRET"].encode()).for_subject(chosen["user"]).token
    print(f"{CORPUS}: user {chosen['user']}, {len(chosen['ids'])} hidden ids, {len(chosen['paths'])} hidden paths, ")
    print(f"  {len(chosen['folders'])} hidden folders; {PAIRS} pairs per surface; starting drivebench serve ...")
    load_before = os.getloadavg()[0]
    proc, url = start_replicas(ReplicaSpec(CORPUS, "bm25", "hash", []), 1, access_log=False)
    results: dict[str, Any] = {}
    try:
        client = KeepAliveClient(url, {"Authorization": f"Bearer {token}"})
        mcp = Mcp(client)
        visible = {
            "ids": chosen["visible_id"],
            "paths": chosen["visible_path"],
            "folders": chosen["visible_folder"],
            "under": chosen["visible_path"],
        }
        for name, (kind, surface) in surfaces(client, mcp).items():
            results[name] = {"request": surface[0], **measure(surface, chosen[kind], visible[kind])}
            r = results[name]
            print(
                f"  {name:<18} hidden - missing median {r['median_ms']:+.4f} ms (95% CI {r['ci95_ms'][0]:+.4f}"
                f" .. {r['ci95_ms'][1]:+.4f}), hidden slower in {100 * r['hidden_slower_share']:.0f}%;"
                f" visible - missing {r['visible_minus_missing_median_ms']:+.3f} ms"
            )
        client.close()
    finally:
        proc.terminate()
        proc.wait(30)
    checks = {
        f"{name}: paired median |hidden - missing| < {TARGET_MS} ms": abs(r["median_ms"]) < TARGET_MS
        for name, r in results.items()
    }
    result = {
        "corpus": CORPUS,
        "user": chosen["user"],
        "pairs_per_surface": PAIRS,
        "target_ms": TARGET_MS,
        "server": "drivebench serve --pipeline bm25 --embedder hash --no-access-log (its own process)",
        "client": "http.client keep-alive (benchmarks/http_harness.py)",
        "load_average_1min_at_start": round(load_before, 2),
        "surfaces": results,
    }
    report_checks("bench_timing_oracles", result, checks)


if __name__ == "__main__":
    main()
