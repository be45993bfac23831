"""The JSON schema of ``PUT /_sim/faults``'s body, generated from ``catalog.FAULT_DEFS``.

It is the body the endpoint accepts (tests/faults/test_fault_body_schema.py checks both ways): an
object with exactly one key, ``faults``, holding either one comma-separated string of specs or a list
whose items are a spec string (``"name"``, ``"name:key=value"``) or ``{"name", "params"}`` with the
fault's own parameters, typed and bounded. In spec strings the schema checks names and parameter
keys; their values are checked by the server (a 400 names the bad one).
"""

from __future__ import annotations

import re
from typing import Any

from drivebench.simulator.faults.catalog import FAULT_DEFS, MAX_COUNT, ParamValue

FAULTS_EXAMPLE: dict[str, Any] = {"faults": ["leaky-acl", {"name": "latency", "params": {"delay_ms": 50}}]}

# the largest value each time parameter may take (the server's bounds; api/faults.py checks them too)
BOUNDS: dict[str, float] = {"delay_ms": 60_000.0, "jitter_ms": 60_000.0, "delay_s": 604_800.0, "retry_after_s": 3_600.0}


def _param_schema(key: str, default: ParamValue) -> dict[str, Any]:
    if key == "clock":
        return {"type": "string", "enum": ["wall", "sim"]}
    if isinstance(default, str):
        return {"type": "string"}
    if key == "status":
        return {"type": "integer", "minimum": 500, "maximum": 599}
    if key in ("fetch_k", "max_entries"):
        return {"type": "integer", "minimum": 0, "maximum": MAX_COUNT}
    if isinstance(default, int) and not isinstance(default, bool):
        return {"type": "integer", "minimum": -(10**12), "maximum": 10**12}
    out: dict[str, Any] = {"type": "number", "minimum": 0}
    if key == "share":
        out["maximum"] = 1
    elif key in BOUNDS:
        out["maximum"] = BOUNDS[key]
    return out


def _spec_pattern() -> str:
    """One spec (``name[:key=value]...``) of a known fault with its own parameter keys."""
    alts = []
    for d in FAULT_DEFS.values():
        keys = "|".join(re.escape(k) for k in d.defaults)
        params = f"(\\s*:\\s*({keys})\\s*=[^:,]*)*" if keys else ""
        alts.append(re.escape(d.name) + params)
    return "(" + "|".join(alts) + ")\\s*"


def faults_body_schema() -> dict[str, Any]:
    spec = _spec_pattern()
    one_spec = {"type": "string", "pattern": f"^\\s*{spec}$"}
    objects = [
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "const": d.name},
                "params": {
                    "type": "object",
                    "properties": {k: _param_schema(k, v) for k, v in d.defaults.items()},
                    "additionalProperties": False,
                },
            },
            "required": ["name"],
            "additionalProperties": False,
            "title": d.name,
            "description": d.description,
        }
        for d in FAULT_DEFS.values()
    ]
    return {
        "title": "FaultsBody",
        "type": "object",
        "properties": {
            "faults": {
                "oneOf": [
                    {
                        "type": "string",
                        "pattern": f"^\\s*({spec})?(,\\s*({spec})?)*$",
                        "description": "Comma-separated specs NAME[:key=value...]; empty: a clean server.",
                    },
                    {"type": "array", "items": {"anyOf": [one_spec, *objects]}},
                ]
            }
        },
        "required": ["faults"],
        "additionalProperties": False,
    }
