"""The verdict of a sync run: its built-in gates (no revocation left open, no conformance case failed), the
``--fail-on`` gates read so that a pair that never converged never passes a lag gate, and the exit code.

Stored as ``result["gates"]`` and ``result["verdict"]`` in the shape ``eval run`` stores them
(``evaluator.gates.verdict``), so every rendering (terminal, report.md, report.html, JUnit) reads one verdict."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from drivebench.evaluator.gates import OPS, Gate, GateResult, check_gates, verdict
from drivebench.evaluator.sync.summary import open_figures


def sync_gates(result: dict[str, Any], gates: Sequence[Gate]) -> list[GateResult]:
    """``check_gates``, with every lag or leak figure of a scope that holds a pair that never converged taken as
    unbounded: its true value is at least the deadline and may be infinite (the leak was still open), so a
    gate ``>`` or ``>=`` any threshold fails, never passes on the lower bound. GateError: a gate names nothing."""
    checked = check_gates(result, gates)
    unbounded = open_figures(result["sync"])
    deadline = result["sync"]["config"]["deadline_s"]
    out = []
    for g, r in zip(gates, checked, strict=True):
        why = unbounded.get(g.name)
        if why is None or r.value is None:  # a figure not measured fails as it is
            out.append(r)
            continue
        failed = OPS[g.op](math.inf, g.threshold)
        state = "FAILED" if failed else "passed"
        message = f"{state}: {g.name} is at least {deadline:g} s with no upper bound: {why} within {deadline:g} s"
        out.append(GateResult(g.expr, failed, r.value, message, g.name, g.op, g.threshold))
    return out


def builtin_gates(result: dict[str, Any], allow_not_converged: bool = False) -> list[GateResult]:
    """What fails a sync run without any --fail-on: a revocation never reflected (an open leak; waived, still
    stated, by ``allow_not_converged``) and a failed conformance case."""
    sync = result["sync"]
    deadline = sync["config"]["deadline_s"]
    out = []
    n = int(sync["overall"].get("revocations_not_converged") or 0)
    if sync["overall"].get("revocation_pairs") or n:
        what = f"{n} revocation{'s' if n != 1 else ''} never took effect within {deadline:g} s"
        if not n:
            message = f"passed: every revocation took effect within {deadline:g} s"
        elif allow_not_converged:
            message = f"passed: {what} (open leaks, waived by --allow-not-converged)"
        else:
            message = f"FAILED: {what} (open leaks)"
        out.append(
            GateResult("revocations_not_converged>0", bool(n) and not allow_not_converged, n, message, None, ">", 0)
        )
    cases = sync.get("cases")
    if cases is not None:
        failed = [c for c in cases if c["verdict"] == "fail"]
        if failed:
            names = "; ".join(f"{c['case']} ({c['wrong']}: {c['note'] or c['bug']})" for c in failed)
            message = f"FAILED: {len(failed)} conformance case{'s' if len(failed) != 1 else ''} failed: {names}"
        else:
            message = f"passed: no conformance case failed ({sum(c['verdict'] == 'pass' for c in cases)} passed)"
        out.append(GateResult("cases_failed>0", bool(failed), len(failed), message, None, ">", 0))
    return out


def judge(result: dict[str, Any], gates: Sequence[Gate], allow_not_converged: bool = False) -> list[GateResult]:
    """Check the built-in gates and ``gates`` and store ``result["gates"]`` and ``result["verdict"]``."""
    out = [*builtin_gates(result, allow_not_converged), *sync_gates(result, gates)]
    result["gates"] = [g.as_dict() for g in out]
    result["verdict"] = verdict(result, out)
    return out


def verdict_line(result: dict[str, Any]) -> str:
    """``Verdict: FAILED (exit 1): 36 revocations never took effect within 12 s (open leaks)``: the reasons
    themselves, worst first, not only how many gates failed."""
    v = result.get("verdict") or {}
    code = v.get("exit_code")
    reasons = [str(r).removeprefix("FAILED: ") for r in v.get("reasons") or []]
    if reasons:
        return f"Verdict: FAILED (exit {code}): " + "; ".join(reasons)
    return f"Verdict: passed (exit {code}): " + (
        "every revocation took effect" if result["sync"]["overall"].get("revocation_pairs") else "no gate failed"
    )
