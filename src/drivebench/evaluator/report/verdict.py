"""The verdict and the gates of a run, as every report opens with them (markdown, HTML, terminal).

Read from ``result["verdict"]`` and ``result["gates"]`` (``evaluator.gates.apply_verdict`` stores them before any
report is written); a metrics.json written before gates were stored has neither and gets no verdict section.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drivebench.evaluator.gates import stored_gates

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
