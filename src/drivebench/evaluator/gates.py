"""CI gates: ``--fail-on EXPR`` conditions on a metrics.json, and a JUnit XML of gates and failed queries.

An expression is ``NAME OP NUMBER`` with ``OP`` one of ``> >= < <= == !=``; the gate *fails* when
the condition holds (``leak_rate@10>0``, ``hit_rate@10<0.80``). ``NAME`` is

* a metric of ``metrics`` (over all queries, failed queries as misses), e.g. ``hit_rate@10``;
* ``answered.<metric>`` for the same metric over answered queries only;
* ``error_rate``, ``errors`` (failed queries), ``unmapped`` (unmapped results), ``queries_with_leak``.

A gate on a metric that was not measured (``null``: no oracle, nothing answered) fails too: a CI
gate never passes on a figure that does not exist. An unknown name is a usage error.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

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
SPECIAL = ("error_rate", "errors", "unmapped", "queries_with_leak")


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
    expr: str
    failed: bool
    value: float | None
    message: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


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
        if value is None:
            out.append(GateResult(g.expr, True, None, f"{g.name} was not measured: the gate cannot pass"))
        elif OPS[g.op](float(value), g.threshold):
            out.append(GateResult(g.expr, True, float(value), f"{g.name} = {value:.4g}: {g.expr} holds"))
        else:
            out.append(GateResult(g.expr, False, float(value), f"{g.name} = {value:.4g}: ok"))
    return out


def write_junit(path: Path, result: Mapping[str, Any], gates: Sequence[GateResult]) -> Path:
    """JUnit XML: suite ``gates`` (a case per gate) and suite ``queries`` (a case per failed query:
    an error, a leak, or a miss at the main K)."""
    root = ET.Element("testsuites", name="drivebench")
    suite = ET.SubElement(root, "testsuite", name="drivebench.gates", tests=str(len(gates)))
    status = result.get("status") or {}
    if status.get("state") == "failed":
        case = ET.SubElement(suite, "testcase", classname="drivebench.run", name="run")
        ET.SubElement(case, "error", message="the run failed").text = str(status.get("reason", ""))
    for g in gates:
        case = ET.SubElement(suite, "testcase", classname="drivebench.gates", name=g.expr)
        if g.failed:
            ET.SubElement(case, "failure", message=g.message).text = g.message
    suite.set("failures", str(sum(g.failed for g in gates)))
    ks = (result.get("config") or {}).get("ks") or [10]
    k = 10 if 10 in ks else max(ks)
    qsuite = ET.SubElement(root, "testsuite", name="drivebench.queries")
    failed_queries = 0
    for row in result.get("per_query") or []:
        qid = str(row.get("query_id"))
        problem: tuple[str, str] | None = None
        if row.get("status") != "ok":
            problem = ("error", f"query failed ({row.get('error_kind') or row.get('status')}): {row.get('error', '')}")
        elif row.get("leaked"):
            problem = ("failure", f"leaked {', '.join(map(str, row['leaked']))}")
        elif row.get(f"hit_rate@{k}") == 0.0:
            problem = ("failure", f"no gold document in the top {k}")
        if problem is None:
            continue
        failed_queries += 1
        case = ET.SubElement(qsuite, "testcase", classname="drivebench.queries", name=qid)
        ET.SubElement(case, problem[0], message=problem[1]).text = problem[1]
    qsuite.set("tests", str(failed_queries))
    qsuite.set("failures", str(failed_queries))
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    return path
