"""The fault profiles the simulator can inject, their parameters and their defaults.

A fault is switched on by name, optionally with parameters: ``leaky-acl``,
``latency:delay_ms=50:jitter_ms=10``. Several are joined with commas:
``leaky-acl,errors:share=0.3``. Every random-looking decision is a hash of the fault's ``seed``
and what it decides about (query, document, request key and attempt), so a run is reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ParamValue = float | int | str
MAX_COUNT = 100_000  # the largest fetch_k and max_entries (the schema's bound too)


@dataclass(frozen=True)
class FaultDef:
    name: str
    description: str
    defaults: dict[str, ParamValue] = field(default_factory=dict)
    damages: str = ""  # the metric the evaluator must see move


FAULT_DEFS: dict[str, FaultDef] = {
    d.name: d
    for d in (
        FaultDef(
            "leaky-acl",
            "A share of (query, document) pairs ignore denies and department boundaries: documents the "
            "principal may only list, or that someone in another department may preview, are let into the "
            "search and skip the per-hit enforce re-check.",
            {"share": 0.2, "seed": 0},
            "leak_rate@K > 0",
        ),
        FaultDef(
            "stale-acl",
            "Grant changes reach the permission engine only after a delay: for delay_s seconds (wall clock, "
            "or the simulated clock with clock=sim) after a policy change is first seen, the engine keeps "
            "serving the policy from before the change.",
            {"delay_s": 60.0, "clock": "wall"},
            "leak_rate@K > 0 after a revocation",
        ),
        FaultDef(
            "stale-index",
            "New versions are not re-indexed: sync_index skips updates and search keeps serving the last "
            "indexed version of each document.",
            {},
            "stale_version_hit_rate@K > 0",
        ),
        FaultDef(
            "cad-blind",
            "DXF drawings are extracted as their file name only (ExtractConfig dxf='filename-only'); dxf "
            "documents are re-ingested when the fault is switched on or off.",
            {},
            "hit rate of the dxf stratum falls",
        ),
        FaultDef(
            "citation-drop",
            "Answers omit the citation of a share of the documents they quote.",
            {"share": 0.5, "seed": 0},
            "source_coverage falls",
        ),
        FaultDef(
            "wrong-citation",
            "A share of an answer's citations name another document the principal may preview.",
            {"share": 0.5, "seed": 0},
            "citation_precision falls",
        ),
        FaultDef(
            "permission-outage",
            "The permission engine cannot be reached: every recall's permission check raises, so recall and "
            "answer fail closed with 503 (permission-check-failed) and return nothing. What `drivebench probe "
            "--fail-safe --drive-token` switches on to see that a target answers an error, not documents.",
            {},
            "recall answers 503, never results",
        ),
        FaultDef(
            "answer-unfiltered-context",
            "Answers are composed from the same search without the permission filter and cite only the documents "
            "recall returned: the answer text states facts of documents the principal may not preview while the "
            "results and the citations stay clean.",
            {},
            "answer_leak_rate > 0",
        ),
        FaultDef(
            "role-from-body",
            "Recall and answer trust user_id, user_role and department in the request body: a user token acts as "
            "the user, role (in the department) or department the body names, instead of the token's own user "
            "(unknown names still answer 400).",
            {},
            "body-identity probe leaks > 0",
        ),
        FaultDef(
            "shared-answer-cache",
            "Answers are cached by the request body only, not by who asks: the next caller sending the same body "
            "receives the first caller's answer, citations, results and principal. At most max_entries answers are "
            "kept (the oldest dropped); switching faults empties the cache.",
            {"max_entries": 1024},
            "cache probe leaks > 0",
        ),
        FaultDef(
            "post-filter",
            "Retrieval takes a fixed-size top fetch_k (0: top_k) without the permission filter, then drops what the "
            "principal may not preview: a principal who sees little gets fewer than top_k results although enough "
            "permitted documents match. Nothing forbidden is returned.",
            {"fetch_k": 0},
            "under-fill rate > 0",
        ),
        FaultDef(
            "latency",
            "Adds delay_ms + jitter_ms * u (u uniform in [0, 1), from a hash) to a share of API requests.",
            {"delay_ms": 200.0, "jitter_ms": 100.0, "share": 1.0, "seed": 0},
            "latency percentiles rise",
        ),
        FaultDef(
            "errors",
            "A share of API requests answer a 5xx error (status) instead of results.",
            {"share": 0.2, "status": 503, "seed": 0},
            "errors and retries counted",
        ),
        FaultDef(
            "throttle",
            "A share of API requests answer 429 Too Many Requests with a Retry-After header.",
            {"share": 0.2, "retry_after_s": 1.0, "seed": 0},
            "retries counted",
        ),
    )
}

FAULT_NAMES: tuple[str, ...] = tuple(FAULT_DEFS)


class FaultSpecError(ValueError):
    """A fault name, parameter or value that cannot be applied (HTTP 400; the CLI exits)."""


def _coerce(name: str, key: str, value: Any, default: ParamValue) -> ParamValue:
    try:
        if isinstance(default, str):
            out: ParamValue = str(value)
        elif isinstance(default, int) and not isinstance(default, bool):
            if isinstance(value, float) and not value.is_integer():
                raise ValueError(value)
            out = int(value)
        else:
            out = float(value)
    except (TypeError, ValueError):
        raise FaultSpecError(f"{name}: {key}={value!r} is not a {type(default).__name__}") from None
    _check(name, key, out)
    return out


def _check(name: str, key: str, value: ParamValue) -> None:
    if key == "share" and not 0.0 <= float(value) <= 1.0:
        raise FaultSpecError(f"{name}: share must be between 0 and 1, got {value}")
    if key in ("delay_ms", "jitter_ms", "delay_s", "retry_after_s") and float(value) < 0:
        raise FaultSpecError(f"{name}: {key} must be >= 0, got {value}")
    if key == "status" and not 500 <= int(value) <= 599:
        raise FaultSpecError(f"{name}: status must be a 5xx code, got {value}")
    if key in ("fetch_k", "max_entries") and not 0 <= int(value) <= MAX_COUNT:
        raise FaultSpecError(f"{name}: {key} must be between 0 and {MAX_COUNT}, got {value}")
    if key == "clock" and value not in ("wall", "sim"):
        raise FaultSpecError(f"{name}: clock must be wall or sim, got {value!r}")


@dataclass(frozen=True)
class Fault:
    """One active fault: its name and its full parameter set (defaults filled in)."""

    name: str
    params: tuple[tuple[str, ParamValue], ...] = ()

    @classmethod
    def make(cls, name: str, params: dict[str, Any] | None = None) -> Fault:
        name = name.strip()
        if name not in FAULT_DEFS:
            raise FaultSpecError(f"unknown fault {name!r}; known: {', '.join(FAULT_NAMES)}")
        defaults = FAULT_DEFS[name].defaults
        values: dict[str, ParamValue] = dict(defaults)
        for key, value in (params or {}).items():
            if key not in defaults:
                known = ", ".join(defaults) or "none"
                raise FaultSpecError(f"{name}: unknown parameter {key!r} (parameters: {known})")
            values[key] = _coerce(name, key, value, defaults[key])
        return cls(name, tuple(sorted(values.items())))

    def get(self, key: str) -> ParamValue:
        return dict(self.params)[key]

    def num(self, key: str) -> float:
        return float(self.get(key))

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "params": dict(self.params)}

    def full_spec(self) -> str:
        """The ``name:key=value`` form with every parameter, seeds included (what a run records)."""
        return ":".join([self.name, *(f"{k}={v}" for k, v in self.params)])

    def spec(self) -> str:
        """The ``name:key=value`` form, naming only the parameters that differ from the defaults."""
        defaults = FAULT_DEFS[self.name].defaults
        changed = [f"{k}={v}" for k, v in self.params if defaults.get(k) != v]
        return ":".join([self.name, *changed])


def parse_fault_spec(text: str) -> Fault:
    """``"latency:delay_ms=50:jitter_ms=5"`` -> ``Fault``."""
    name, *pairs = [p.strip() for p in text.strip().split(":")]
    params: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise FaultSpecError(f"bad fault parameter {pair!r} in {text!r}: use NAME:key=value")
        params[key.strip()] = value.strip()
    return Fault.make(name, params)


def parse_fault_specs(values: str | list[str] | tuple[str, ...] | None) -> list[Fault]:
    """Comma-separated specs (a list of such strings is joined); one fault per name, the last wins."""
    if values is None:
        return []
    texts = [values] if isinstance(values, str) else list(values)
    out: dict[str, Fault] = {}
    for text in texts:
        for part in text.split(","):
            if part.strip():
                fault = parse_fault_spec(part)
                out[fault.name] = fault
    return list(out.values())


def fault_from_json(value: Any) -> Fault:
    """A fault given as JSON: ``"name"``, ``"name:k=v"`` or ``{"name": ..., "params": {...}}``."""
    if isinstance(value, str):
        return parse_fault_spec(value)
    if isinstance(value, dict):
        extra = set(value) - {"name", "params"}
        if extra or not isinstance(value.get("name"), str):
            raise FaultSpecError('each fault is "name", "name:key=value" or {"name": ..., "params": {...}}')
        params = value.get("params", {})
        if not isinstance(params, dict):
            raise FaultSpecError(f"{value['name']}: params must be an object")
        name = value["name"]
        if name not in FAULT_DEFS:
            raise FaultSpecError(f"unknown fault {name!r}; known: {', '.join(FAULT_NAMES)}")
        for key, given in params.items():  # JSON values keep their JSON type (a string is no number)
            default = FAULT_DEFS[name].defaults.get(key)
            if default is None:
                continue  # Fault.make names the unknown parameter
            numeric = isinstance(default, int | float) and not isinstance(default, bool)
            if numeric != (isinstance(given, int | float) and not isinstance(given, bool)):
                kind = "a number" if numeric else "a string"
                raise FaultSpecError(f"{name}: {key} must be {kind}, got {given!r}")
        return Fault.make(name, params)
    raise FaultSpecError('each fault is "name", "name:key=value" or {"name": ..., "params": {...}}')
