"""The figures of a sync run (pure functions over the pairs): per change, per class and overall.

* ``lag_s``: seconds from the drive acknowledging the change to the first probe answer that reflects it,
  for the pair (principal, document); resolution: the poll interval plus one round of probes.
* ``leak_s``: for a revocation, the seconds the target was seen returning the document after the change:
  from the acknowledgement to the last answer that still returned it (0 when the first answer after the
  change already left it out), the whole deadline when it never converged (a lower bound then); 0 for
  grants and content. ``lag_s`` bounds it from above.
* percentiles are nearest-rank (``p95`` of 3 values is the largest) over converged, testable pairs; a class
  with none is ``None`` ("not measured"), never 0.
* ``not_converged``: testable pairs the target never reflected within the deadline; for a revocation that
  is a leak still open when the run stopped looking.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from drivebench.evaluator.sync.scenario import change_classes


def nearest_rank(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def class_summary(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    testable = [p for p in pairs if p["testable"]]
    lags = [p["lag_s"] for p in testable if p["converged"]]
    return {
        "kind": pairs[0]["kind"] if pairs else None,
        "n": len(testable),
        "lag_p50_s": _r(nearest_rank(lags, 0.5)),
        "lag_p95_s": _r(nearest_rank(lags, 0.95)),
        "lag_max_s": _r(max(lags) if lags else None),
        "not_converged": sum(1 for p in testable if not p["converged"]),
        "leak_seconds": _r(sum(p["leak_s"] or 0.0 for p in testable)),
        "not_testable": len(pairs) - len(testable),
    }


def summarize(pairs: list[dict[str, Any]], requests: int, errors: int, not_planned: dict[str, int]) -> dict[str, Any]:
    classes = change_classes()
    by_class: dict[str, list[dict[str, Any]]] = {}
    for p in pairs:
        by_class.setdefault(p["class"], []).append(p)
    per_class = {c: class_summary(ps) for c, ps in by_class.items()}
    for c, n in not_planned.items():
        row = per_class.setdefault(c, class_summary([]) | {"kind": classes[c].kind})
        row["not_planned"] = n
        row["not_planned_why"] = f"the drive offers {classes[c].none or 'no such change'}"
    testable = [p for p in pairs if p["testable"]]
    revocations = [p for p in testable if p["kind"] == "revoke"]
    rev_lags = [p["lag_s"] for p in revocations if p["converged"]]
    overall = {
        "pairs": len(testable),
        "revocation_pairs": len(revocations),
        "revocation_lag_p50_s": _r(nearest_rank(rev_lags, 0.5)),
        "revocation_lag_p95_s": _r(nearest_rank(rev_lags, 0.95)),
        "revocation_lag_max_s": _r(max(rev_lags) if rev_lags else None),
        "leak_seconds_total": _r(sum(p["leak_s"] or 0.0 for p in revocations)),
        "not_converged": sum(1 for p in testable if not p["converged"]),
        "revocations_not_converged": sum(1 for p in revocations if not p["converged"]),
        "not_testable": len(pairs) - len(testable),
        "not_planned": sum(not_planned.values()),
    }
    return {
        "overall": overall,
        "classes": dict(sorted(per_class.items())),
        "errors": {"requests": requests, "failed": errors, "rate": round(errors / requests, 4) if requests else 0.0},
    }


def gate_metrics(summary: dict[str, Any]) -> dict[str, float | int | None]:
    """A flat table for ``--fail-on``: the overall figures, and ``lag_p95_s[<class>]`` etc. per class."""
    out: dict[str, float | int | None] = dict(summary["overall"])
    for cls, s in summary["classes"].items():
        for key in ("lag_p50_s", "lag_p95_s", "lag_max_s", "not_converged", "leak_seconds", "not_testable"):
            out[f"{key}[{cls}]"] = s[key]
    return out
