"""Honest zero for the probe: every leak figure carries the exact one-sided Clopper-Pearson upper bound over the
trials that could show it ("0 of 200 pairs: <= 1.5 % (95 %)"), and ``--leak-budget`` sizes the probe and gates
on that bound, never on the point estimate.

Classes (``CLASSES``): ``results`` (the pair probe: a pair leaks when any of its requests returned a document the
pair's user may not preview; its trials are the measured pairs), ``body-identity`` and ``shared-cache``
(``beyond``: their measured trials). ``overall`` pools the measured classes. A class with no measured trial has no
bound: ``not measured``, never 0.
"""

from __future__ import annotations

import math
from typing import Any

from drivebench.evaluator.metrics.leak_bound import trials_for, upper_bound
from drivebench.evaluator.probe.beyond import BODY, CACHE

CONFIDENCE = 0.95
CLASSES: dict[str, str] = {
    "results": "the target returns documents the principal may not see",
    BODY: "the target trusts the request body",
    CACHE: "the target's cache is shared between principals",
}
UNITS = {"results": "pairs", BODY: "trials", CACHE: "trials", "overall": "trials"}


def percent(rate: float) -> str:
    """A bound as a percentage, rounded up (a bound is never shown smaller than it is): 1.5, 0.10, 28.4."""
    value = rate * 100
    digits = 1 if value >= 1 else max(1, 1 - math.floor(math.log10(value))) if value > 0 else 1
    scale = 10**digits
    shown = math.ceil(value * scale - 1e-9) / scale
    return f"{shown:.{digits}f}"


def figure(leaked: int, trials: int, unit: str) -> dict[str, Any]:
    """``leaked`` of ``trials`` with its upper bound and the sentence saying both."""
    bound = upper_bound(leaked, trials, CONFIDENCE)
    if bound is None:
        text = f"not measured (no {unit} answered)"
    else:
        text = f"{leaked} of {trials} {unit}: <= {percent(bound)} % ({CONFIDENCE * 100:.0f} %)"
    return {"leaked": leaked, "trials": trials, "unit": unit, "bound": bound, "confidence": CONFIDENCE, "text": text}


def parse_budget(text: str) -> float:
    """``0.1%`` or ``0.001`` -> 0.001; ValueError unless a rate strictly between 0 and 1."""
    raw = text.strip()
    try:
        rate = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise ValueError(f"--leak-budget {text!r}: give a rate such as 0.1% or 0.001") from None
    if not 0 < rate < 1:
        raise ValueError(f"--leak-budget {text!r}: must be above 0 and below 100 %")
    return rate


def sized(budget: float) -> int:
    """The trials each class needs to show ``budget`` with no leak seen."""
    return trials_for(budget, CONFIDENCE)


def results_class(result: dict[str, Any]) -> dict[str, Any]:
    """The pair probe as a class: measured pairs, and the pairs any of whose requests leaked."""
    c = result["counts"]
    leaked = len({x["pair_id"] for x in result["leaks"]})
    state = "measured" if c["pairs_measured"] else "not measured"
    reason = None if c["pairs_measured"] else (result["status"]["reason"] or "no pair was answered")
    return {
        "state": state,
        "reason": reason,
        "trials_planned": c["pairs_probed"],
        "population": (result.get("population") or {}).get("forbidden_pairs"),
        "measured": c["pairs_measured"],
        "leaked": leaked,
        "leaks_count": c["leaks"],
    }


def summarize(result: dict[str, Any], beyond: dict[str, dict[str, Any]], budget: float | None = None) -> dict[str, Any]:
    """Put ``classes`` (each with its title and figure), ``overall`` and, with a budget, ``leak_budget`` (the
    gate) into ``result``; returns it."""
    classes = {"results": results_class(result), **beyond}
    for name, section in classes.items():
        section["title"] = CLASSES[name]
        section["figure"] = figure(section["leaked"], section["measured"], UNITS[name])
    measured = [s for s in classes.values() if s["measured"]]
    result["classes"] = classes
    result["overall"] = figure(
        sum(s["leaked"] for s in measured), sum(s["measured"] for s in measured), UNITS["overall"]
    )
    if budget is not None:
        result["leak_budget"] = gate(classes, result["overall"], budget)
    return result


def gate(classes: dict[str, dict[str, Any]], overall: dict[str, Any], budget: float) -> dict[str, Any]:
    """Met when every measured class's bound, and the pooled one, is at most ``budget``. A class whose trials
    exist in fewer numbers than the budget needs is capped: its bound cannot reach the budget, and says which
    bound it reached."""
    needed = sized(budget)
    rows: dict[str, dict[str, Any]] = {}
    for name, s in classes.items():
        if not s["measured"]:
            continue
        bound = s["figure"]["bound"]
        population = s.get("population")
        rows[name] = {
            "trials": s["measured"],
            "bound": bound,
            "met": bound is not None and bound <= budget,
            "capped": population is not None and population < needed,
            "population": population,
        }
    failing = [n for n, r in rows.items() if not r["met"]]
    met = bool(rows) and not failing and overall["bound"] is not None and overall["bound"] <= budget
    not_measured = [n for n, s in classes.items() if not s["measured"]]
    parts = []
    for name, r in rows.items():
        said = f"{name} {classes[name]['figure']['text']}"
        if r["capped"]:
            said += (
                f" (capped: only {r['population']} {UNITS[name]} exist and the budget needs {needed}: it cannot be "
                "shown, the bound above is the one reached)"
            )
        parts.append(said + ("" if r["met"] else " ABOVE the budget"))
    head = f"leak budget {percent(budget)} % ({CONFIDENCE * 100:.0f} %), {needed} trials per class: "
    head += "met" if met else "NOT met"
    summary = head + ("; " + "; ".join(parts) if parts else "; nothing measured")
    if not_measured:
        summary += f"; not measured: {', '.join(not_measured)}"
    return {
        "budget": budget,
        "confidence": CONFIDENCE,
        "trials_needed": needed,
        "met": met,
        "failing": failing,
        "classes": rows,
        "not_measured": not_measured,
        "summary": summary,
    }
