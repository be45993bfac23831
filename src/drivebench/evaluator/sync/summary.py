"""The figures of a sync run (pure functions over the pairs): per change, per class and overall.

* ``lag_s``: seconds from the drive acknowledging the change to the first probe answer that reflects it,
  for the pair (principal, document); resolution: the poll interval plus one round of probes.
* ``leak_s``: for a revocation, the seconds the target was seen returning the document after the change:
  from the acknowledgement to the last answer that still returned it (0 when the first answer after the
  change already left it out), the whole deadline when it never converged (a lower bound then); 0 for
  grants and content. ``lag_s`` bounds it from above.
* percentiles are nearest-rank (``p95`` of 3 values is the largest) over testable pairs, where a pair that
  never converged counts as the deadline: a lower bound of its lag, which has no upper bound (the leak was
  still open when the run stopped looking). A figure that falls on such a pair is the deadline, and the class
  (or, overall, the revocations) says ``lag_is_lower_bound``; every lag and leak gate of that scope fails
  (``verdict.sync_gates``), whatever its threshold. A class with no testable pair is ``None`` ("not measured"), never 0.
* ``not_converged``: testable pairs the target never reflected within the deadline; for a revocation that
  is a leak still open when the run stopped looking.
* ``open_leak_bound``: for revocations, the exact one-sided 95 % Clopper-Pearson upper bound of the rate of
  revocations left open, over the testable pairs (each one a trial that could show a leak): ``0 of 44`` open
  is a rate of at most 6.6 %, not a rate of 0. None without a testable revocation (not measured).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from drivebench.evaluator.metrics.leak_bound import upper_bound
from drivebench.evaluator.sync.scenario import change_classes

CONFIDENCE = 0.95  # of every open-leak bound


def nearest_rank(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def _lags(testable: list[dict[str, Any]], deadline_s: float | None) -> list[float]:
    """The lags of the converged pairs, and the deadline for each one that never converged (a lower bound)."""
    lags = [p["lag_s"] for p in testable if p["converged"]]
    if deadline_s is not None:
        lags += [deadline_s for p in testable if not p["converged"]]
    return lags


def _bound(open_: int, trials: int) -> float | None:
    bound = upper_bound(open_, trials, CONFIDENCE)
    return None if bound is None else round(bound, 4)


def class_summary(pairs: list[dict[str, Any]], deadline_s: float | None = None) -> dict[str, Any]:
    testable = [p for p in pairs if p["testable"]]
    lags = _lags(testable, deadline_s)
    not_converged = sum(1 for p in testable if not p["converged"])
    kind = pairs[0]["kind"] if pairs else None
    return {
        "kind": kind,
        "n": len(testable),
        # a leak figure of revocations only: a grant or content change left unreflected is no leak
        "open_leak_bound": _bound(not_converged, len(testable)) if kind == "revoke" else None,
        "lag_p50_s": _r(nearest_rank(lags, 0.5)),
        "lag_p95_s": _r(nearest_rank(lags, 0.95)),
        "lag_max_s": _r(max(lags) if lags else None),
        "not_converged": not_converged,
        "lag_is_lower_bound": bool(not_converged),
        "leak_seconds": _r(sum(p["leak_s"] or 0.0 for p in testable)),
        "not_testable": len(pairs) - len(testable),
    }


def summarize(
    pairs: list[dict[str, Any]],
    requests: int,
    errors: int,
    not_planned: dict[str, int],
    deadline_s: float | None = None,
    not_planned_why: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``deadline_s``: what a pair that never converged counts as in the lag figures (None: left out; only for
    a caller that has no deadline). ``not_planned_why``: why a class was not planned, when it is not what the
    drive lacks (the class's ``none``), e.g. a target without an answer endpoint."""
    classes = change_classes()
    by_class: dict[str, list[dict[str, Any]]] = {}
    for p in pairs:
        by_class.setdefault(p["class"], []).append(p)
    per_class = {c: class_summary(ps, deadline_s) for c, ps in by_class.items()}
    for c, n in not_planned.items():
        row = per_class.setdefault(c, class_summary([]) | {"kind": classes[c].kind})
        row["not_planned"] = n
        row["not_planned_why"] = (not_planned_why or {}).get(
            c
        ) or f"the drive offers {classes[c].none or 'no such change'}"
    testable = [p for p in pairs if p["testable"]]
    revocations = [p for p in testable if p["kind"] == "revoke"]
    rev_lags = _lags(revocations, deadline_s)
    rev_open = sum(1 for p in revocations if not p["converged"])
    overall = {
        "pairs": len(testable),
        "revocation_pairs": len(revocations),
        "revocation_lag_p50_s": _r(nearest_rank(rev_lags, 0.5)),
        "revocation_lag_p95_s": _r(nearest_rank(rev_lags, 0.95)),
        "revocation_lag_max_s": _r(max(rev_lags) if rev_lags else None),
        "leak_seconds_total": _r(sum(p["leak_s"] or 0.0 for p in revocations)),
        "not_converged": sum(1 for p in testable if not p["converged"]),
        "revocations_not_converged": rev_open,
        "revocation_lag_is_lower_bound": bool(rev_open),
        "revocations_open_bound": _bound(rev_open, len(revocations)),
        "bound_confidence": CONFIDENCE,
        "not_testable": len(pairs) - len(testable),
        "not_planned": sum(not_planned.values()),
    }
    return {
        "overall": overall,
        "classes": dict(sorted(per_class.items())),
        "errors": {"requests": requests, "failed": errors, "rate": round(errors / requests, 4) if requests else 0.0},
    }


def gate_metrics(summary: dict[str, Any]) -> dict[str, float | int | None]:
    """A flat table for ``--fail-on``: the overall figures, and ``lag_p95_s[<class>]`` etc. per class; a class
    the run did not measure is there too, not measured (None), so a gate on it fails instead of passing."""
    out: dict[str, float | int | None] = dict(summary["overall"])
    unmeasured = class_summary([])
    for cls in change_classes():
        s = summary["classes"].get(cls, unmeasured)
        for key in (
            "lag_p50_s",
            "lag_p95_s",
            "lag_max_s",
            "not_converged",
            "leak_seconds",
            "not_testable",
            "open_leak_bound",
        ):
            out[f"{key}[{cls}]"] = s[key]
    return {k: v for k, v in out.items() if not isinstance(v, bool)}


OVERALL_OPEN = ("revocation_lag_p50_s", "revocation_lag_p95_s", "revocation_lag_max_s", "leak_seconds_total")
CLASS_OPEN = ("lag_p50_s", "lag_p95_s", "lag_max_s", "leak_seconds")


def open_figures(summary: dict[str, Any]) -> dict[str, str]:
    """The lag and leak figures whose scope holds a pair that never converged, each with why it has no upper
    bound: ``{"revocation_lag_p95_s": "36 revocations never took effect", "lag_p95_s[trashed]": ...}``."""
    out: dict[str, str] = {}
    n = summary["overall"].get("revocations_not_converged") or 0
    if n:
        out |= dict.fromkeys(OVERALL_OPEN, f"{n} revocation{'s' if n != 1 else ''} never took effect")
    for cls, s in summary["classes"].items():
        if s.get("not_converged"):
            why = f"{s['not_converged']} {cls} change{'s' if s['not_converged'] != 1 else ''} never took effect"
            out |= {f"{key}[{cls}]": why for key in CLASS_OPEN}
    return out
