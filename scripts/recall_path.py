"""How much of drivebench one recall crosses: the distinct source files and functions a ``POST /api/mcp/recall``
runs, from the app's middleware and router to the response body, over one in-process request
(``tests/support/sims.py``: the seed corpus, the hash embedder, ``client_for``).

The count starts at the endpoint (``server/api/recall.py``'s ``recall``) and ends when the response body is
written (``recall_json`` returns); the app's middleware, which every request crosses, is not counted. A warm-up
request runs first (lazy imports, the engine's compile and the index's first build are not the path);
the second request, the same one, is traced with ``sys.settrace``/``threading.settrace`` (the test client serves
the request in threads of its own). Prints the files, with how many distinct functions ran in each, and the
totals. ``--as user`` (default): a user's own token; ``--as eval``: the evaluation token acting as that user
(the ``evaluate-as`` path); ``--pipeline bm25`` for the lexical pipeline (its recall runs on the event loop).

    python scripts/recall_path.py [--as user|eval] [--pipeline hybrid|bm25|dense] [--functions]
"""

from __future__ import annotations

import argparse
import sys
import threading
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.support

import drivebench  # noqa: E402
from tests.support.sims import HASH, auth, client_for, fresh_sim  # noqa: E402

PACKAGE = str(Path(drivebench.__file__).resolve().parent)
ROUTER = ("drivebench/server/api/recall.py", "recall")  # the endpoint: where the count starts
BODY_WRITTEN = ("drivebench/server/api/recall.py", "recall_json")  # where it ends


def traced_request(who: str = "user", pipeline: str = "hybrid") -> set[tuple[str, str]]:
    """(file relative to the package's parent, qualified function name) of every drivebench function one recall
    calls (``tests/test_import_graph.py`` bounds how many files that is)."""
    sim = fresh_sim(replace(HASH, pipeline=pipeline))
    seen: set[tuple[str, str]] = set()
    before: set[tuple[str, str]] = set()  # what runs before the router: the app's middleware
    recording = False

    in_router = False  # from the router's entry to the end of the response body (the middleware is not counted)

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal in_router
        if not recording or event != "call":
            return None
        filename, function = frame.f_code.co_filename, frame.f_code.co_qualname
        if filename.startswith(PACKAGE):
            name = filename[len(PACKAGE) - len("drivebench") :]
            if (name, function) == ROUTER:
                in_router = True
            if not in_router:
                before.add((name, function))
            elif (name, function) not in before:  # not a middleware coroutine resumed on the way back
                seen.add((name, function))
                if (name, function) == BODY_WRITTEN:
                    return on_return  # the response body is written when this returns
        return None

    def on_return(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal in_router
        if event == "return":
            in_router = False

    sys.settrace(tracer)  # type: ignore[arg-type]
    threading.settrace(tracer)  # type: ignore[arg-type]
    try:
        client = client_for(sim)
        if who == "user":
            headers, body = auth(sim, "u001"), {}
        else:
            headers, body = {"Authorization": f"Bearer {sim.tokens.eval_token}"}, {"user_id": "u001"}
        request = {"query": "quarterly budget", "top_k": 5, **body}
        for warm_up in (True, False):
            recording = not warm_up
            response = client.post("/api/mcp/recall", headers=headers, json=request)
            recording = False
            if response.status_code != 200:
                raise SystemExit(f"the recall answered {response.status_code}: {response.text}")
    finally:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]
    return seen


def by_file(seen: set[tuple[str, str]]) -> dict[str, list[str]]:
    """The functions of ``traced_request`` grouped by file, both sorted."""
    files: dict[str, list[str]] = {}
    for filename, function in sorted(seen):
        files.setdefault(filename, []).append(function)
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--as", dest="who", choices=["user", "eval"], default="user")
    parser.add_argument("--pipeline", default="hybrid")
    parser.add_argument("--functions", action="store_true", help="list the functions of each file too")
    args = parser.parse_args(argv)
    seen = traced_request(args.who, args.pipeline)
    files = by_file(seen)
    for filename, functions in files.items():
        print(f"{len(functions):4d}  {filename}")
        if args.functions:
            for function in functions:
                print(f"        {function}")
    print(f"{len(files)} files, {len(seen)} functions ({args.who} token, {args.pipeline} pipeline)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
