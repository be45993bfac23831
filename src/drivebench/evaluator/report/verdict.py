"""The verdict and the gates of a run, as every report opens with them (markdown, HTML, terminal).

Read from ``result["verdict"]`` and ``result["gates"]`` (``evaluator.gates.apply_verdict`` stores them before any
report is written); a metrics.json written before gates were stored has neither and gets no verdict section.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drivebench.evaluator.gates import stored_gates
from drivebench.evaluator.history import main_metric

GATE_HEADER = ["Gate", "Result", "Value", "Threshold", "Condition"]


def has_verdict(result: Mapping[str, Any]) -> bool:
    return isinstance(result.get("verdict"), Mapping)


def is_failed(result: Mapping[str, Any]) -> bool:
    return has_verdict(result) and result["verdict"].get("state") == "failed"


def verdict_line(result: Mapping[str, Any]) -> str:
    """``Verdict: FAILED (exit 1): 1 of 3 gates failed`` or ``Verdict: passed (exit 0): 2 gates passed``."""
    v = result.get("verdict") or {}
    checked, failed = int(v.get("gates_checked") or 0), int(v.get("gates_failed") or 0)
    code = v.get("exit_code")
    if v.get("state") == "failed":
        what = "the run failed" if code == 3 else f"{failed} of {checked} gate{'s' if checked != 1 else ''} failed"
        done = result.get("completion") or {}
        if result.get("partial"):
            what = f"the run is partial ({done.get('answered')} of {done.get('queries')} queries answered)"
            if failed:
                what += f", and {failed} of {checked} gate{'s' if checked != 1 else ''} failed"
            return f"Verdict: FAILED (exit {code}): {what}"
        if code == 3 and failed:
            what += f", and {failed} of {checked} gate{'s' if checked != 1 else ''} failed"
        return f"Verdict: FAILED (exit {code}): {what}"
    if not checked:
        return f"Verdict: passed (exit {code}): no gate was set"
    return f"Verdict: passed (exit {code}): {'the gate' if checked == 1 else f'all {checked} gates'} passed"


def reasons(result: Mapping[str, Any]) -> list[str]:
    return [str(r) for r in (result.get("verdict") or {}).get("reasons") or []]


def _figure(value: Any) -> str:
    if value is None:
        return "not measured"
    number = float(value)
    return str(int(number)) if number.is_integer() else f"{number:.4g}"


def gate_rows(result: Mapping[str, Any]) -> list[list[str]]:
    """One row per gate: expression, FAILED/passed, value, threshold, the condition as a sentence."""
    return [
        [
            g.expr,
            "FAILED" if g.failed else "passed",
            _figure(g.value),
            "—" if g.threshold is None else f"{g.threshold:g}",
            g.message.split(": ", 1)[1] if ": " in g.message else g.message,
        ]
        for g in stored_gates(result)
    ]


# --- the one-line verdict every report opens with -------------------------------------------------------


def leaking_queries(result: Mapping[str, Any]) -> int:
    """Answered queries that returned a document their principal may not open (0 when leaks were not measured)."""
    from drivebench.evaluator.report import _common as c

    if not c.leak_measured(result):
        return 0
    leaks = result.get("leaks") or {}
    return int(leaks.get("queries_with_leak") or (result.get("counts") or {}).get("queries_with_leak") or 0)


def answer_leaking_queries(result: Mapping[str, Any]) -> int:
    """Answered queries whose answer stated a fact their asker may not know (0 when not measured)."""
    from drivebench.evaluator.report import _common as c

    if not c.answer_leak_measured(result):
        return 0
    return int((result.get("counts") or {}).get("queries_with_answer_leak") or 0)


def line_state(result: Mapping[str, Any]) -> str:
    """``failed`` (a gate failed, the run failed, or a run without a verdict leaked: a leak is never shown as
    neutral), ``passed``, or ``none`` (a file without a verdict and without a leak)."""
    if is_failed(result) or (result.get("status") or {}).get("state") == "failed":
        return "failed"
    if has_verdict(result):
        return "passed"
    return "failed" if leaking_queries(result) or answer_leaking_queries(result) else "none"


def _head(result: Mapping[str, Any]) -> str | None:
    v = result.get("verdict") or {}
    if not has_verdict(result):
        return "RUN FAILED" if (result.get("status") or {}).get("state") == "failed" else None
    if v.get("state") != "failed":
        return "PASSED"
    if v.get("exit_code") == 3:
        return "FAILED (the run failed)"
    checked, failed = int(v.get("gates_checked") or 0), int(v.get("gates_failed") or 0)
    return f"FAILED ({failed} of {checked} gate{'s' if checked != 1 else ''} failed)"


def _number(value: Any) -> str:
    return "not measured" if value is None else f"{float(value):.3f}"


def comparison_text(result: Mapping[str, Any]) -> str:
    """The main figure and its change against the previous run with the same label (``result["previous_run"]``,
    stored when the run was recorded): ``hit_rate@10 0.925 (+0.012 vs run #4, 2026-12-03 14:02)``."""
    prev = result.get("previous_run")
    if not isinstance(prev, Mapping):
        metric = main_metric(result)
        return f"{metric} {_number((result.get('metrics') or {}).get(metric))} (not compared: no run history)"
    text = f"{prev.get('metric')} {_number(prev.get('value'))}"
    state = prev.get("state")
    if state == "first":
        return f"{text} (first run with this label)"
    if state != "compared":
        return f"{text} (not compared: the run was not recorded in a history)"
    before = prev.get("previous") or {}
    where = f"run #{before.get('run_id')}, {before.get('when')}"
    if prev.get("delta") is None:
        return f"{text} (vs {where}: {_number(before.get('value'))} then, no change can be computed)"
    return f"{text} ({float(prev['delta']):+.3f} vs {where})"


CATCH_ALL = frozenset({"none", "unknown", "mixed"})


def worst_stratum(result: Mapping[str, Any]) -> tuple[str, str, float, int] | None:
    """``(stratum, group, hit rate, n)`` of the group with the lowest Hit Rate at the main K among the groups
    large enough to read (groups flagged small, n < SMALL_GROUP, are anecdotes, not rates); ``None`` if none."""
    from drivebench.evaluator.report import _common as c

    metric = main_metric(result)
    found: list[tuple[float, bool, int, str, str]] = []
    for stratum in c.strata_names(result):
        groups = (result.get("strata") or {}).get(stratum) or {}
        for group, g in groups.items():
            value = g.get(metric) if isinstance(g, Mapping) else None
            if value is None or c.is_small(g):
                continue
            # on a tie, a named group before a catch-all bucket (none, unknown, mixed), then the larger group
            bucket = str(group) in CATCH_ALL
            found.append((float(value), bucket, -int(g.get("n") or 0), stratum, str(group)))
    if not found:
        return None
    value, _, neg_n, stratum, group = min(found)
    return stratum, group, value, -neg_n


def worst_stratum_text(result: Mapping[str, Any]) -> str:
    worst = worst_stratum(result)
    if worst is None:
        return "worst stratum: not measured"
    stratum, group, value, n = worst
    return f"worst stratum: {stratum}={group} {main_metric(result)} {value:.3f} (n={n})"


def summary_line(result: Mapping[str, Any]) -> str:
    """The one line a manager reads: ``PASSED · hit_rate@10 0.925 (+0.012 vs run #4, 2026-12-03 14:02) · worst
    stratum: phrasing=typo hit_rate@10 0.610 (n=21)``; a run that leaked says ``LEAKS in N queries`` (and
    ``ANSWER LEAKS in N answers``) right after the verdict (a leak is the first thing to know, even when ``--allow-leaks`` let the run pass)."""
    leaked = leaking_queries(result)
    leaks = f"LEAKS in {leaked} {'query' if leaked == 1 else 'queries'}" if leaked else None
    stated = answer_leaking_queries(result)
    answer_leaks = f"ANSWER LEAKS in {stated} {'answer' if stated == 1 else 'answers'}" if stated else None
    parts = [_head(result), leaks, answer_leaks, comparison_text(result), worst_stratum_text(result)]
    return " · ".join(p for p in parts if p)
