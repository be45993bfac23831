"""CI gates: ``--fail-on EXPR`` conditions on a metrics.json, and a JUnit XML of gates and failed queries.

An expression is ``NAME OP NUMBER`` with ``OP`` one of ``> >= < <= == !=``; the gate *fails* when
the condition holds (``leak_rate@10>0``, ``hit_rate@10<0.80``). ``NAME`` is

* a metric of ``metrics`` (over all queries, failed queries as misses), e.g. ``hit_rate@10``;
* ``answered.<metric>`` for the same metric over answered queries only;
* ``error_rate``, ``errors`` (failed queries), ``unmapped`` (unmapped results), ``queries_with_leak``,
  ``queries_with_answer_leak`` (answers stating a fact their asker may not know: ``metrics.answer_leak``),
  ``queries_over_restricted`` (queries that withheld a document their asker may see: ``metrics.over_restriction``),
  ``queries_under_filled`` (short lists although the asker may see enough matching documents: ``under_fill``;
  the rate is the metric ``under_fill_rate``).

A gate on a metric that was not measured (``null``: no oracle, nothing answered) fails too: a CI
gate never passes on a figure that does not exist. An unknown name is a usage error.

Every gate's message states the condition it checked: ``FAILED: hit_rate@10 = 0.61 is below 0.80`` or
``passed: hit_rate@10 = 0.93 is at least 0.50``. ``apply_verdict`` stores the gates (the ``--fail-on`` ones, and
the leak gates ``eval run``/``eval score`` add by default) and the overall ``verdict`` in the metrics dict, so that
metrics.json, the reports, the history and the console all read them from one place.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from drivebench.evaluator.result import RunResult, metrics_dict

_EXPR = re.compile(
    r"^\s*(?P<name>[A-Za-z_][\w.@\[\]-]*)\s*(?P<op>>=|<=|==|!=|>|<)\s*(?P<value>[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)\s*$"
)
OPS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
}
SPECIAL = (
    "error_rate",
    "errors",
    "unmapped",
    "queries_with_leak",
    "queries_with_answer_leak",
    "queries_over_restricted",
    "queries_under_filled",
)
COUNTS = (
    "errors",
    "unmapped",
    "queries_with_leak",
    "queries_with_answer_leak",
    "queries_over_restricted",
    "queries_under_filled",
)  # whole numbers: shown without decimals
# what an operator says of the value when it holds, and the operator that holds when it does not
_SAYS = {
    "<": "is below",
    "<=": "is at most",
    ">": "is above",
    ">=": "is at least",
    "==": "equals",
    "!=": "differs from",
}
_NOT = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
EXIT_OK, EXIT_GATE, EXIT_RUN_FAILED = 0, 1, 3
# a partial run (stopped early) exits 128 + the signal's number, the shell's convention: Ctrl-C 130, SIGTERM 143
EXIT_INTERRUPTED = {"SIGINT": 130, "SIGTERM": 143}


def partial_exit_code(result: Mapping[str, Any]) -> int:
    return EXIT_INTERRUPTED.get(str((result.get("completion") or {}).get("stopped_by")), 130)


class GateError(ValueError):
    """A gate expression that cannot be parsed or names no metric (usage error)."""


@dataclass(frozen=True)
class Gate:
    expr: str
    name: str
    op: str
    threshold: float


@dataclass
class GateResult:
    """One gate checked: ``failed`` when its condition held (or its figure was not measured); ``message`` starts
    with ``FAILED:`` or ``passed:`` and states the condition."""

    expr: str
    failed: bool
    value: float | None
    message: str
    name: str | None = None
    op: str | None = None
    threshold: float | None = None

    @property
    def passed(self) -> bool:
        return not self.failed

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "passed": self.passed}


def _decimals(x: float) -> int:
    """The fewest decimals (at least 2, at most 6) that write ``x`` exactly."""
    for d in range(2, 7):
        if float(f"{x:.{d}f}") == x:
            return d
    return 6


def figures(name: str, value: float, threshold: float, op: str) -> tuple[str, str]:
    """``(value, threshold)`` as text, with enough decimals that the text says what the numbers do: 0.7999 is
    never written 0.80 next to a threshold of 0.80."""
    if name in COUNTS and float(value).is_integer() and float(threshold).is_integer():
        return str(int(value)), str(int(threshold))
    d = _decimals(threshold)
    holds, equal = OPS[op](value, threshold), value == threshold
    text = f"{value:.{d}f}"
    for dv in range(d, 13):
        text = f"{value:.{dv}f}"
        if OPS[op](float(text), threshold) == holds and (float(text) == threshold) == equal:
            break
    return text, f"{threshold:.{d}f}"


def gate_message(name: str, op: str, threshold: float, value: float | None, expr: str | None = None) -> str:
    """``FAILED: hit_rate@10 = 0.61 is below 0.80`` (the condition held) or ``passed: hit_rate@10 = 0.93 is at
    least 0.50`` (it did not); a figure that was not measured fails."""
    if value is None:
        return f"FAILED: {name} was not measured, so the gate {expr or name + op + f'{threshold:g}'} cannot pass"
    v, t = figures(name, value, threshold, op)
    if OPS[op](value, threshold):
        return f"FAILED: {name} = {v} {_SAYS[op]} {t}"
    return f"passed: {name} = {v} {_SAYS[_NOT[op]]} {t}"


def pass_condition(op: str) -> str:
    """The operator a value passes a gate with, as a reader writes it: a gate ``x<0.80`` fails below 0.80, so a
    run passes at ``≥`` 0.80."""
    return {">=": "≥", "<=": "≤", "!=": "≠"}.get(_NOT[op], _NOT[op])


def parse_gate(expr: str) -> Gate:
    m = _EXPR.match(expr)
    if not m:
        raise GateError(f"--fail-on {expr!r}: use NAME OP NUMBER, e.g. 'leak_rate@10>0' or 'hit_rate@10<0.80'")
    return Gate(expr.strip(), m["name"], m["op"], float(m["value"]))


def gate_value(result: Mapping[str, Any], name: str) -> tuple[bool, float | None]:
    """``(known, value)`` of ``name`` in ``result``; ``value`` None = not measured."""
    errors = result.get("errors") or {}
    if name == "error_rate":
        return True, errors.get("rate")
    if name == "errors":
        return True, errors.get("failed")
    if name == "unmapped":
        return True, (result.get("unmapped") or {}).get("results", 0)
    if name == "queries_with_leak":
        measured = ((result.get("oracles") or {}).get("leak") or {}).get("measured")
        return True, (result.get("counts") or {}).get("queries_with_leak") if measured else None
    if name == "queries_with_answer_leak":
        measured = ((result.get("oracles") or {}).get("answer_leak") or {}).get("measured")
        return True, (result.get("counts") or {}).get("queries_with_answer_leak") if measured else None
    if name == "queries_over_restricted":  # not a gate by default: --fail-on 'queries_over_restricted>0'
        section = result.get("over_restriction") or {}
        return True, section.get("queries_over_restricted") if section.get("measured") else None
    if name == "queries_under_filled":  # not a gate by default: --fail-on 'under_fill_rate>0.05' or this
        section = result.get("under_fill") or {}
        return True, section.get("queries_under_filled") if section.get("measured") else None
    table = result.get("metrics") or {}
    if name.startswith("answered."):
        name, table = name.removeprefix("answered."), result.get("metrics_answered") or {}
    if name not in table:
        return False, None
    value = table[name]
    return True, value if isinstance(value, int | float) and not isinstance(value, bool) else None


def check_gates(result: Mapping[str, Any], gates: Sequence[Gate]) -> list[GateResult]:
    """Evaluate every gate; GateError when one names nothing in ``result``."""
    out = []
    for g in gates:
        known, value = gate_value(result, g.name)
        if not known:
            names = sorted([*SPECIAL, *(result.get("metrics") or {})])
            raise GateError(f"--fail-on {g.expr!r}: no metric {g.name!r}; known: {', '.join(names)}")
        figure = None if value is None else float(value)
        failed = figure is None or OPS[g.op](figure, g.threshold)
        message = gate_message(g.name, g.op, g.threshold, figure, g.expr)
        out.append(GateResult(g.expr, failed, figure, message, g.name, g.op, g.threshold))
    return out


def leak_gates(
    result: Mapping[str, Any], *, allow_no_oracle: bool = False, allow_leaks: bool = False
) -> list[GateResult]:
    """The gates every ``eval run``/``eval score`` adds: ``no leaks`` (a leak fails the run unless ``allow_leaks``),
    ``no answer leaks`` (an answer stating a fact its asker may not know fails it too, unless ``allow_leaks``) and
    ``leak oracle`` (leaks that could not be measured fail it unless ``allow_no_oracle``; answer leaks not measured,
    a run without answers or a corpus without facts, do not). A failed run gets none: its figures are not the
    target's."""
    if (result.get("status") or {}).get("state") == "failed":
        return []
    leak = (result.get("oracles") or {}).get("leak") or {}
    if not leak.get("measured"):
        if allow_no_oracle:
            return []
        why = leak.get("reason", "no oracle")
        return [
            GateResult(
                "leak oracle",
                True,
                None,
                f"FAILED: leaks were not measured ({why}); give --corpus, forbidden/allowed lists in the eval set, "
                "or --allow-no-oracle",
                "leak oracle",
            )
        ]
    if allow_leaks:
        return []
    out = []
    errors, counts = result.get("errors") or {}, result.get("counts") or {}
    leaked = int(counts.get("queries_with_leak") or 0)
    if leaked:
        total, answered = counts.get("queries"), errors.get("answered")
        of = f"{answered} answered queries" if answered is not None and answered != total else f"{total} queries"
        out.append(
            GateResult(
                "no leaks",
                True,
                float(leaked),
                f"FAILED: {leaked} of {of} leaked (no leaks allowed; --allow-leaks to accept)",
                "queries_with_leak",
                ">",
                0.0,
            )
        )
    stated = int(counts.get("queries_with_answer_leak") or 0)
    if stated and ((result.get("oracles") or {}).get("answer_leak") or {}).get("measured"):
        judged = ((result.get("answer_leaks") or {}).get("queries_judged")) or "?"
        out.append(
            GateResult(
                "no answer leaks",
                True,
                float(stated),
                f"FAILED: {stated} of {judged} answers stated a fact their asker may not know (no answer leaks "
                "allowed; --allow-leaks to accept)",
                "queries_with_answer_leak",
                ">",
                0.0,
            )
        )
    return out


def verdict(result: Mapping[str, Any], gates: Sequence[GateResult]) -> dict[str, Any]:
    """``{"state": "passed" | "failed", "exit_code", "reasons", "gates_checked", "gates_failed"}``: failed when
    the run failed (exit 3) or a gate failed (exit 1); ``reasons`` are the failed gates' messages."""
    status = result.get("status") or {}
    reasons = []
    if status.get("state") == "failed":
        reasons.append(f"FAILED: the run failed: {status.get('reason', '')}")
    elif result.get("partial"):
        reasons.append(f"FAILED: {status.get('reason', 'the run is partial')}")
    reasons += [g.message for g in gates if g.failed]
    code = EXIT_RUN_FAILED if status.get("state") == "failed" else (EXIT_GATE if reasons else EXIT_OK)
    if result.get("partial"):  # never a success, whatever the gates say: exits as the interruption did
        code = partial_exit_code(result)
    return {
        "state": "failed" if reasons else "passed",
        "exit_code": code,
        "reasons": reasons,
        "gates_checked": len(gates),
        "gates_failed": sum(g.failed for g in gates),
    }


def apply_verdict(
    result: dict[str, Any],
    gates: Sequence[Gate],
    *,
    allow_no_oracle: bool = False,
    allow_leaks: bool = False,
) -> list[GateResult]:
    """Check the leak gates and ``gates``, and store ``result["gates"]`` and ``result["verdict"]`` (GateError
    when a gate names no metric: nothing is stored then)."""
    checked = check_gates(result, gates)
    out = [*leak_gates(result, allow_no_oracle=allow_no_oracle, allow_leaks=allow_leaks), *checked]
    # the leak gates first: a leak is the first thing a reader of the verdict must see
    result["gates"] = [g.as_dict() for g in out]
    result["verdict"] = verdict(result, out)
    _status_follows_verdict(result)
    return out


GATES_FAILED = "gates_failed"


def _status_follows_verdict(result: dict[str, Any]) -> None:
    """A run that completed but failed a gate (a leak, by default) is ``status.state == "gates_failed"``, never
    ``"ok"``: a reader of ``status`` alone must not take a leaking run for a good one. A failed or partial run keeps
    its state; checking the gates again (other gates, ``allow_leaks``) sets it afresh."""
    status = result.get("status")
    if isinstance(status, dict) and status.get("state") in ("ok", GATES_FAILED):
        status["state"] = GATES_FAILED if result["verdict"]["state"] == "failed" else "ok"


def stored_gates(result: Mapping[str, Any]) -> list[GateResult]:
    """The gates a metrics dict holds (``[]`` for one written before gates were stored)."""
    fields = ("expr", "failed", "value", "message", "name", "op", "threshold")
    stored: list[GateResult] = []
    for g in result.get("gates") or []:
        if isinstance(g, Mapping):
            values: dict[str, Any] = {k: g.get(k) for k in fields}
            stored.append(GateResult(**values))
    return stored


def write_junit(
    path: Path, result: RunResult | Mapping[str, Any], gates: Sequence[GateResult], *, misses: bool = False
) -> Path:
    """JUnit XML: suite ``gates`` (a case per gate) and suite ``queries`` (a case per failed query: an error or a
    leak; with ``misses``, a miss at the main K too).

    A miss is not a failing case by default: a CI server marks a job with failing cases unstable, and a run whose
    gates passed would show every miss in red. The gates judge retrieval quality (``--fail-on hit_rate@10<…``); the
    suite says how many queries missed in its ``missed_queries`` property."""
    result = metrics_dict(result)
    root = ET.Element("testsuites", name="drivebench")
    suite = ET.SubElement(root, "testsuite", name="drivebench.gates", tests=str(len(gates)))
    status = result.get("status") or {}
    if status.get("state") == "failed" or result.get("partial"):
        case = ET.SubElement(suite, "testcase", classname="drivebench.run", name="run")
        what = "the run failed" if status.get("state") == "failed" else "the run is partial"
        ET.SubElement(case, "error", message=what).text = str(status.get("reason", ""))
    for g in gates:
        case = ET.SubElement(suite, "testcase", classname="drivebench.gates", name=g.expr)
        if g.failed:
            ET.SubElement(case, "failure", message=g.message).text = g.message
    suite.set("failures", str(sum(g.failed for g in gates)))
    ks = (result.get("config") or {}).get("ks") or [10]
    k = 10 if 10 in ks else max(ks)
    qsuite = ET.SubElement(root, "testsuite", name="drivebench.queries")
    failed_queries = missed = 0
    named = {
        str(r.get("query_id")): r
        for r in ((result.get("failed_queries") or {}).get("rows") or [])
        if isinstance(r, Mapping)
    }
    for row in result.get("per_query") or []:
        qid = str(row.get("query_id"))
        problem: tuple[str, str] | None = None
        if row.get("status") != "ok":
            problem = ("error", f"query failed ({row.get('error_kind') or row.get('status')}): {row.get('error', '')}")
        elif row.get("leaked") or row.get("answer_leaked"):
            leaks = [f"leaked {', '.join(map(str, row['leaked']))}"] if row.get("leaked") else []
            if row.get("answer_leaked"):  # a fact of a forbidden document in the answer, whatever it cites
                leaks.append(f"the answer states {_answer_leaks_text(row['answer_leaked'])}")
            problem = ("failure", "; ".join(leaks))
        elif row.get(f"hit_rate@{k}") == 0.0:
            missed += 1
            problem = ("failure", f"no gold document in the top {k}") if misses else None
        if problem is None:
            continue
        if qid in named:  # the question and the documents by name: what a reader of the CI log needs
            problem = (problem[0], f"{problem[1]}. {_named_detail(named[qid])}")
        failed_queries += 1
        case = ET.SubElement(qsuite, "testcase", classname="drivebench.queries", name=qid)
        ET.SubElement(case, problem[0], message=problem[1]).text = problem[1]
    qsuite.set("tests", str(failed_queries))
    qsuite.set("failures", str(failed_queries))
    props = ET.Element("properties")
    ET.SubElement(props, "property", name="missed_queries", value=str(missed))
    ET.SubElement(props, "property", name="misses_are_failures", value=str(misses).lower())
    qsuite.insert(0, props)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    return path


def _answer_leaks_text(leaks: Sequence[Mapping[str, Any]]) -> str:
    """``"1,300,000" of 预算表.xlsx (why: ...)``: each fact an answer states that its asker may not know."""
    return "; ".join(f'"{leak.get("text")}" of {_leaked_name(leak)}' for leak in leaks)


def _doc_name(d: Mapping[str, Any]) -> str:
    return str(d.get("name") or d.get("doc_id"))


def _leaked_name(d: Mapping[str, Any]) -> str:
    """A leaked document's name and why its asker may not see it (the grant chain), when known."""
    why = [str(x) for x in d.get("why") or []]
    return _doc_name(d) + (f" (why: {'; '.join(why)})" if why else "")


def _named_detail(row: Mapping[str, Any]) -> str:
    """A failed query's question, expected documents, top results and leaked documents, by name (ids
    without a catalog)."""
    parts = [f"Question: {row.get('question')!s} (asked by {row.get('asker')!s})"]
    parts.append("expected: " + (", ".join(_doc_name(d) for d in row.get("gold") or []) or "(no gold)"))
    parts.append("top results: " + (", ".join(_doc_name(d) for d in row.get("top") or []) or "(nothing returned)"))
    if row.get("leaked"):
        parts.append("leaked: " + ", ".join(_leaked_name(d) for d in row["leaked"]))
    return "; ".join(parts)
