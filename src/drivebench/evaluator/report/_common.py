"""What the Markdown, HTML and terminal reports share: metric order and labels, number formatting,
and the rows of every table, all read from a ``metrics.json`` dict (``scoring.score`` + ``run_info``).

Every reader is tolerant: a key that is missing (an older or partial metrics.json) gives an empty
table, never an exception, and metrics this module does not know are still listed (at the end).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from drivebench.evaluator.strata import DEFAULT_TAGS, SHARE_BUCKETS, SHARE_TOP, SMALL_GROUP, STRATA

#: Metric families in report order: (family, label, one-line meaning).
FAMILIES: tuple[tuple[str, str, str], ...] = (
    ("hit_rate", "Hit Rate@K", "share of queries with at least one gold document in the top K"),
    ("recall", "Recall@K", "share of each query's gold documents in the top K, averaged"),
    ("mrr", "MRR@K", "mean reciprocal rank of the first gold document within K"),
    ("ndcg", "nDCG@K", "graded ranking quality within K"),
    ("hit_rate_permitted", "Permitted Hit Rate@K", "hit rate against the gold the principal may open"),
    ("leak_rate", "Leak rate@K", "share of queries returning a document the principal may not open"),
    ("version_exact_hit_rate", "Exact-version hit rate@K", "version-pinned queries that got the pinned version"),
    ("stale_version_hit_rate", "Stale-version hit rate@K", "version-pinned queries that got an outdated version"),
    ("trashed_hit_rate", "Trashed hit rate@K", "queries returning a document in the recycle bin"),
    ("source_coverage", "Source Recall Coverage", "gold documents cited by the answer (micro average)"),
    ("source_coverage_macro", "Source coverage (macro)", "gold documents cited, averaged per query"),
    ("citation_precision", "Citation precision", "citations that name a gold document"),
    ("answer_fact_recall", "Answer-fact recall", "share of a query's answer facts the answer states (normalised)"),
    ("claim_support", "Claim support", "share of the answer facts stated that sit in a cited statement"),
    ("answer_leak_rate", "Answer leak rate", "answers stating a fact of a document the asker may not preview"),
    ("multi_hop_completeness", "Multi-hop completeness", "share of a chain's documents in the top K, by hop count"),
    ("full_chain_rate", "Full-chain rate", "multi-hop queries with every link in the top K, by hop count"),
    ("hop_position_hit_rate", "Hit rate by hop position", "per hop count, how often link p was found"),
    ("latency_ms", "Latency (ms)", "per-request latency percentiles"),
)
FAMILY_LABEL = {name: label for name, label, _ in FAMILIES}
FAMILY_HELP = {name: text for name, _, text in FAMILIES}

STRATA_ORDER: tuple[str, ...] = (*STRATA, *DEFAULT_TAGS)  # built-in strata first, then the default tags
STRATUM_LABEL = {
    "department": "Department",
    "file_type": "File type",
    "length": "Query length",
    "hops": "Hop count",
    "role": "Role",
    "kind": "Query kind",
    "secret_level": "Secret level",
    "visible_share": "Asker's visible share of the corpus",
    "phrasing": "Phrasing",
    "style": "Question style",
    "noise": "Noise",
}
SECRET_ORDER = ("public", "internal", "confidential", "secret", "unknown")
CITATION_CELLS = (
    ("retrieved_cited", "retrieved, cited", "success"),
    ("retrieved_not_cited", "retrieved, not cited", "generation gap"),
    ("cited_not_retrieved", "cited, not retrieved", "cited from elsewhere"),
    ("neither", "not retrieved, not cited", "retrieval gap"),
)

_AT_K = re.compile(r"^(?P<family>.+)@(?P<k>\d+)$")


def family_of(name: str) -> tuple[str, int | None]:
    """``"hit_rate@10"`` -> ``("hit_rate", 10)``; ``"latency_ms_p95"`` -> ``("latency_ms", None)``."""
    m = _AT_K.match(name)
    if m:
        return m["family"], int(m["k"])
    if name.startswith("latency_ms_"):
        return "latency_ms", None
    return name, None


def ordered_metric_names(names: Iterable[str]) -> list[str]:
    """Metric names grouped by family in report order, by K within a family; unknown families last."""
    rank = {fam: i for i, (fam, _, _) in enumerate(FAMILIES)}

    def key(name: str) -> tuple[int, str, int, str]:
        fam, k = family_of(name)
        return (rank.get(fam, len(rank)), fam, k if k is not None else -1, name)

    return sorted(names, key=key)


def ks_of(result: Mapping[str, Any]) -> list[int]:
    ks = (result.get("config") or {}).get("ks")
    if ks:
        return [int(k) for k in ks]
    found = {k for name in result.get("metrics") or {} for fam, k in [family_of(name)] if k is not None}
    return sorted(found)


def main_k(result: Mapping[str, Any]) -> int:
    """The K the strata tables use: 10 when evaluated, else the largest K."""
    ks = ks_of(result)
    return 10 if 10 in ks else (max(ks) if ks else 10)


def fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return "—"
        return f"{value:.{digits}f}"
    if isinstance(value, Mapping):
        if not value:
            return "—"
        return "; ".join(f"{k}: {fmt(v, digits)}" for k, v in value.items())
    return str(value)


def fmt_ci(ci: Any) -> str:
    if not ci or ci[0] is None:
        return "—"
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def fmt_hops(value: Any) -> str:
    """A by-hop dict ``{"2": 0.9, "3": 0.5}`` as ``2 hops 0.900 · 3 hops 0.500``."""
    if not isinstance(value, Mapping) or not value:
        return "—"
    parts = []
    for hops, v in sorted(value.items(), key=lambda kv: _int_or(kv[0])):
        parts.append(f"{hops} hops {fmt_hops_inner(v)}" if isinstance(v, Mapping) else f"{hops} hops {fmt(v)}")
    return " · ".join(parts)


def fmt_hops_inner(value: Mapping[str, Any]) -> str:
    return "(" + ", ".join(f"#{p} {fmt(v)}" for p, v in sorted(value.items(), key=lambda kv: _int_or(kv[0]))) + ")"


def _int_or(text: Any) -> tuple[int, str]:
    try:
        return (int(text), "")
    except (TypeError, ValueError):
        return (1 << 30, str(text))


def definition_rows(result: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(family label, meaning)`` for every metric family present in ``result["metrics"]``."""
    present = {family_of(name)[0] for name in result.get("metrics") or {}}
    return [(label, text) for fam, label, text in FAMILIES if fam in present]


ANSWER_FACT_FAMILIES = ("answer_fact_recall", "claim_support")


def answer_fact_sentence(result: Mapping[str, Any]) -> str:
    """``Answer facts: recall 0.812 [0.70, 0.90], claim support 0.95 (over 40 queries with answer facts; ...)``
    or ``Answer facts: not measured: <why>``; never a bare 0."""
    entry = (result.get("oracles") or {}).get("answer_facts")
    metrics, ci = result.get("metrics") or {}, result.get("ci") or {}
    if entry is None or not entry.get("measured") or metrics.get("answer_fact_recall") is None:
        why = (entry or {}).get("reason", "no answer_facts in this metrics.json")
        return f"Answer facts: not measured: {why}"
    support = metrics.get("claim_support")
    n = (result.get("counts") or {}).get("with_answer_facts", "?")
    return (
        f"Answer facts: recall {fmt(metrics['answer_fact_recall'])} {fmt_ci(ci.get('answer_fact_recall'))}, "
        f"claim support {fmt(support) + ' ' + fmt_ci(ci.get('claim_support')) if support is not None else 'not measured (no fact stated)'} "
        f"(over {n} queries with answer facts; matched after normalising numbers, dates, amounts and names, no LLM)"
    )


def metric_rows(result: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    """Every metric of ``result["metrics"]``: ``(name, label, value, 95% CI)`` in report order."""
    metrics, ci = result.get("metrics") or {}, result.get("ci") or {}
    rows = []
    for name in ordered_metric_names(metrics):
        fam, k = family_of(name)
        label = FAMILY_LABEL.get(fam, name)
        if k is not None:
            label = label.replace("@K", f"@{k}") if "@K" in label else f"{label} @{k}"
        elif fam == "latency_ms":
            label = f"Latency {name.removeprefix('latency_ms_')} (ms)"
        value = metrics[name]
        text = fmt_hops(value) if isinstance(value, Mapping) else fmt(value)
        if value is None and fam in (*ANSWER_FACT_FAMILIES, "answer_leak_rate"):  # never a bare dash: not measured
            text = "not measured"
        rows.append((name, label, text, fmt_ci(ci.get(name))))
    return rows


STRATA_COLUMNS: tuple[tuple[str, str], ...] = (
    ("hit_rate", "Hit Rate"),
    ("recall", "Recall"),
    ("mrr", "MRR"),
    ("ndcg", "nDCG"),
    ("leak_rate", "Leak rate"),
    ("stale_version_hit_rate", "Stale"),
)


#: How a group too small to read (fewer than ``SMALL_GROUP`` queries) is marked in every strata table.
SMALL_MARK = f"n<{SMALL_GROUP}: too few to read"
SMALL_NOTE = (
    f"Groups marked {SMALL_MARK!r} have fewer than {SMALL_GROUP} queries: their figures swing with a single "
    "query, so read them as anecdotes, not rates."
)


def is_small(group: Mapping[str, Any]) -> bool:
    """A stratum group too small to read: its ``small`` flag, else (an older metrics.json) ``n`` below
    ``SMALL_GROUP``."""
    flag = group.get("small")
    if flag is not None:
        return bool(flag)
    n = group.get("n")
    return isinstance(n, int) and n < SMALL_GROUP


def has_small(result: Mapping[str, Any]) -> bool:
    """Some group of some stratum is too small to read (the strata tables then get a note column)."""
    return any(is_small(g) for groups in (result.get("strata") or {}).values() for g in (groups or {}).values())


def small_values(result: Mapping[str, Any], stratum: str) -> list[bool]:
    """For every row of ``strata_rows(result, stratum)``: whether its group is too small to read."""
    groups = (result.get("strata") or {}).get(stratum) or {}
    return [is_small(groups[v]) for v in stratum_values(result, stratum)]


def strata_names(result: Mapping[str, Any]) -> list[str]:
    strata = result.get("strata") or {}
    return [s for s in STRATA_ORDER if s in strata] + sorted(s for s in strata if s not in STRATA_ORDER)


def stratum_values(result: Mapping[str, Any], stratum: str) -> list[str]:
    groups = (result.get("strata") or {}).get(stratum) or {}
    if stratum == "secret_level":
        order = {lv: i for i, lv in enumerate(SECRET_ORDER)}
        return sorted(groups, key=lambda v: (order.get(v, len(order)), v))
    if stratum == "hops":
        return sorted(groups, key=_int_or)
    if stratum == "visible_share":  # the buckets low to high, not as strings ("<10 %" after "25-50 %")
        order = {label: i for i, label in enumerate([*(label for _, label in SHARE_BUCKETS), SHARE_TOP])}
        return sorted(groups, key=lambda v: (order.get(v, len(order)), v))
    return sorted(groups, key=lambda v: (v in ("unknown", "mixed", "none"), v))


def strata_header(result: Mapping[str, Any]) -> list[str]:
    k = main_k(result)
    note = ["Note"] if has_small(result) else []
    return ["Value", "n", *(f"{label}@{k}" for _, label in STRATA_COLUMNS), *note]


def strata_rows(result: Mapping[str, Any], stratum: str) -> list[list[str]]:
    """One row per value of ``stratum``: value, n and the main-K metrics; when some group of the result is too
    small to read, a last column marks those groups (``SMALL_MARK``)."""
    k = main_k(result)
    groups = (result.get("strata") or {}).get(stratum) or {}
    note = has_small(result)
    rows = []
    for value in stratum_values(result, stratum):
        g = groups[value]
        cells = [str(value), str(g.get("n", "—"))]
        cells += [fmt(g.get(f"{fam}@{k}")) for fam, _ in STRATA_COLUMNS]
        if note:
            cells.append(SMALL_MARK if is_small(g) else "")
        rows.append(cells)
    return rows


def hop_rows(result: Mapping[str, Any]) -> list[list[str]]:
    """One row per hop count: queries, completeness, full-chain rate, per-position hit rates."""
    metrics = result.get("metrics") or {}
    comp = metrics.get("multi_hop_completeness") or {}
    full = metrics.get("full_chain_rate") or {}
    pos = metrics.get("hop_position_hit_rate") or {}
    counts = hop_counts(result)
    rows = []
    for hops in sorted(set(comp) | set(full) | set(pos), key=_int_or):
        positions = pos.get(hops) or {}
        rows.append(
            [
                str(hops),
                str(counts.get(str(hops), "—")),
                fmt(comp.get(hops)),
                fmt(full.get(hops)),
                ", ".join(f"#{p} {fmt(v)}" for p, v in sorted(positions.items(), key=lambda kv: _int_or(kv[0]))) or "—",
            ]
        )
    return rows


HOP_HEADER = ["Hops", "Queries", "Completeness", "Full chain", "Hit rate by position"]


def hop_counts(result: Mapping[str, Any]) -> dict[str, int]:
    """Multi-hop queries per hop count (from per-query ``hops``; falls back to the ``hops`` stratum)."""
    out: dict[str, int] = {}
    for row in result.get("per_query") or []:
        h = row.get("hops")
        if h is not None:
            key = str(int(h))
            out[key] = out.get(key, 0) + 1
    if not out:
        for value, g in ((result.get("strata") or {}).get("hops") or {}).items():
            if value != "none":
                out[str(value)] = int(g.get("n", 0))
    return out


def leak_level_rows(result: Mapping[str, Any]) -> list[list[str]]:
    """Leaked documents by secret level: level, distinct documents, (query, document) leaks."""
    leaks = result.get("leaks") or {}
    docs = leaks.get("documents") or []
    by_level = leaks.get("by_secret_level") or {}
    distinct: dict[str, int] = {}
    for d in docs:
        lv = d.get("secret_level") or "unknown"
        distinct[lv] = distinct.get(lv, 0) + 1
    order = {lv: i for i, lv in enumerate(SECRET_ORDER)}
    levels = sorted(set(by_level) | set(distinct), key=lambda v: (order.get(v, len(order)), v))
    return [[lv, str(distinct.get(lv, 0)), str(by_level.get(lv, 0))] for lv in levels]


LEAK_LEVEL_HEADER = ["Secret level", "Documents leaked", "Leaks (query × document)"]
LEAK_DOC_HEADER = ["Document", "Path", "Secret level", "Queries that leaked it", "Id", "Why it must not be seen"]
LEAK_CAUSE_HEADER = ["Cause", "Leaks (query × document)", "Documents leaked"]
LEAK_CAUSE_NOTE = "A leak with several causes counts under each; the causes are the leak oracle's own decision."


def leak_cause_rows(result: Mapping[str, Any]) -> list[list[str]]:
    """The leaks grouped by cause (expired grant, inheritance broken, clearance, deny, not yet valid, ...): the
    cause, its (query, document) leaks and distinct documents; ``[]`` for a file written before causes were."""
    return [
        [str(g.get("label") or g.get("cause")), str(g.get("leaks", 0)), str(g.get("documents", 0))]
        for g in (result.get("leaks") or {}).get("by_cause") or []
        if isinstance(g, Mapping)
    ]


def leak_why(d: Mapping[str, Any]) -> str:
    """A leaked document's causes and reasons, as the "why" cell: ``grant expired: grant g7 to ... expired ...``."""
    from drivebench.evaluator.leak_causes import label

    causes = ", ".join(label(str(x)) for x in d.get("causes") or [])
    why = "; ".join(str(x) for x in d.get("why") or [])
    return f"{causes}: {why}" if causes and why else causes or why or "—"


LEAK_ID_NOTE = "Some documents are shown by id: give --corpus (the document catalog) for their names and paths."


def doc_names(result: Mapping[str, Any]) -> dict[str, tuple[str, str | None]]:
    """``doc_id -> (name, path)`` for every document the run names: the leaked documents (``leaks.documents``, with
    the catalog), else the documents of the missed and leaking queries (``failed_queries``, an older file)."""
    out: dict[str, tuple[str, str | None]] = {}
    for row in (failed_section(result) or {}).get("rows") or []:
        for d in [*(row.get("leaked") or []), *(row.get("gold") or []), *(row.get("top") or [])]:
            if isinstance(d, Mapping) and d.get("name"):
                out[str(d.get("doc_id"))] = (str(d["name"]), d.get("path"))
    for d in (result.get("leaks") or {}).get("documents") or []:
        if d.get("name"):
            out[str(d.get("doc_id"))] = (str(d["name"]), d.get("path"))
    return out


def leak_doc_rows(result: Mapping[str, Any], limit: int | None = 50) -> list[list[str]]:
    """One row per leaked document, most leaked first: its name and path when the corpus is known, else its id
    (``leak_docs_unnamed`` says whether the note ``LEAK_ID_NOTE`` applies)."""
    docs = (result.get("leaks") or {}).get("documents") or []
    names = doc_names(result)
    rows = []
    for d in docs[:limit]:
        doc_id = str(d.get("doc_id"))
        name, path = names.get(doc_id, (doc_id, None))
        level, queries = str(d.get("secret_level") or "unknown"), str(d.get("queries", 0))
        rows.append([name, str(path or "—"), level, queries, doc_id, leak_why(d)])
    return rows


def leak_docs_unnamed(result: Mapping[str, Any]) -> bool:
    names = doc_names(result)
    return any(str(d.get("doc_id")) not in names for d in (result.get("leaks") or {}).get("documents") or [])


def citation_matrix(result: Mapping[str, Any]) -> dict[str, int] | None:
    """Counts of the four gold-document cells plus ``wrong`` / ``unresolvable``; ``None`` without answers."""
    cit = result.get("citations")
    if not cit:
        return None
    gold = cit.get("gold_docs") or {}
    non_gold = cit.get("non_gold_citations") or {}
    out = {key: int(gold.get(key, 0)) for key, _, _ in CITATION_CELLS}
    out["wrong"] = int(non_gold.get("wrong", 0))
    out["unresolvable"] = int(non_gold.get("unresolvable", 0))
    return out


GAP_TEXT = {
    "generation": "generation: gold documents recalled but not cited outnumber those never recalled (make the "
    "answer cite what it read)",
    "retrieval": "retrieval: gold documents never recalled outnumber those recalled but not cited (improve recall)",
    "both": "generation and retrieval lose as many gold documents",
    "none": "no gold document was lost",
}


def gap_sentence(result: Mapping[str, Any]) -> str | None:
    """``Larger gap: generation: ...`` from the citation diagnosis (None without answers or in an older file)."""
    gap = (result.get("citations") or {}).get("larger_gap")
    return f"Larger gap: {GAP_TEXT.get(gap, gap)}" if gap else None


RUN_INFO_ORDER = (
    "target",
    "faults",
    "corpus",
    "corpus_version",
    "pipeline",
    "embedder",
    "evalset",
    "evalset_hash",
    "snapshot",
    "started_at",
    "finished_at",
    "top_k",
    "concurrency",
    "drivebench_version",
)


def faults_line(result: Mapping[str, Any]) -> str | None:
    """The faults the run was measured under (``run_info.faults``, from the simulator's
    ``X-Drivebench-Faults`` header, its MCP tool results' ``_meta``, or the fault demo), for every report's header. ``None`` when the
    target did not say (another endpoint)."""
    info = result.get("run_info") or {}
    if "faults" not in info or info["faults"] is None:
        return None
    faults = info["faults"]
    if not faults:
        return "Faults: none (the simulator reported a clean server)"
    specs = ", ".join(map(str, faults)) if isinstance(faults, list) else str(faults)
    return f"FAULTS INJECTED: {specs} (these numbers measure a deliberately damaged server)"


def run_info_rows(result: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``run_info`` (known keys first) plus the format and cutoffs, as ``(key, text)`` pairs."""
    info = result.get("run_info") or {}
    rows = [("format", str(result.get("format", "—")))]
    keys = [k for k in RUN_INFO_ORDER if k in info] + sorted(k for k in info if k not in RUN_INFO_ORDER)
    for key in keys:
        value = info[key]
        rows.append((key, ", ".join(map(str, value)) if isinstance(value, list) else fmt(value)))
    cfg = result.get("config") or {}
    if cfg:
        rows.append(("ks", ", ".join(str(k) for k in ks_of(result))))
        boot = cfg.get("bootstrap")
        if boot:
            rows.append(("confidence intervals", f"{boot.get('method')} bootstrap, {boot.get('resamples')} resamples"))
        rows.append(("leak oracle", oracle_text(result, "leak")))
        if result.get("oracles"):
            rows.append(("version oracle", oracle_text(result, "version")))
            rows.append(("trash oracle", oracle_text(result, "trashed")))
            if "answer_facts" in result["oracles"]:
                rows.append(("answer facts", oracle_text(result, "answer_facts")))
            if "answer_leak" in result["oracles"]:
                rows.append(("answer leak oracle", oracle_text(result, "answer_leak")))
        rows.append(("document catalog", "yes" if cfg.get("catalog") else "no"))
    return rows


def count_rows(result: Mapping[str, Any]) -> list[tuple[str, str]]:
    counts = result.get("counts") or {}
    return [(k, str(counts[k])) for k in sorted(counts)]


def headline(result: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """The few numbers a reader wants first: ``(label, value, ci)``."""
    metrics, ci = result.get("metrics") or {}, result.get("ci") or {}
    k = main_k(result)
    out = []
    errors = result.get("errors")
    if errors is not None:
        out.append(
            (
                "Error rate",
                f"{fmt(float(errors.get('rate') or 0.0))} ({errors.get('failed', 0)}/{errors.get('queries', 0)})",
                "—",
            )
        )
    for name, label in (
        (f"hit_rate@{k}", f"Hit Rate@{k}"),
        (f"recall@{k}", f"Recall@{k}"),
        (f"mrr@{k}", f"MRR@{k}"),
        (f"leak_rate@{k}", f"Leak rate@{k}"),
        ("source_coverage", "Source Recall Coverage"),
        ("latency_ms_p95", "Latency p95 (ms)"),
    ):
        if name.startswith("leak_rate") and not leak_measured(result):
            out.append((label, "not measured", "—"))
        elif metrics.get(name) is not None:
            out.append((label, fmt(metrics[name], 1 if name.startswith("latency") else 3), fmt_ci(ci.get(name))))
        elif errors is not None and not errors.get("answered") and not name.startswith("source"):
            out.append((label, "not measured", "—"))
    return out


# --- failures first, honest oracles, unmapped results --------------------------------------------------

ERROR_HEADER = ["Error kind", "Queries", "Share", "Meaning", "Sample message"]


def is_failed(result: Mapping[str, Any]) -> bool:
    """The run failed, or is partial (stopped early): either way not a success, and shown as such."""
    return (result.get("status") or {}).get("state") == "failed" or bool(result.get("partial"))


def status_line(result: Mapping[str, Any]) -> str:
    """The first line of every report: the run's state and its error count and rate."""
    errors = result.get("errors")
    status = result.get("status") or {}
    if errors is None:  # an older metrics.json
        counts = result.get("counts") or {}
        return f"errors {counts.get('errors', 0)} of {counts.get('queries', '?')} queries (older metrics file)"
    state = status.get("state")
    head = "RUN FAILED" if state == "failed" else "RUN PARTIAL" if state == "partial" else "Run ok"
    if state == "gates_failed":  # the run counts, but its verdict failed: never "ok"
        head = "Run completed, a gate FAILED (see the verdict)"
    if result.get("partial") and state == "failed":
        head += " (PARTIAL)"
    line = (
        f"{head}: {errors.get('failed', 0)} of {errors.get('queries', 0)} queries failed "
        f"(error rate {fmt(float(errors.get('rate') or 0.0))}); {errors.get('answered', 0)} answered"
    )
    done = result.get("completion") or {}
    if result.get("partial"):  # stopped early: how much of the eval set was asked comes first
        line = (
            f"{head}: {done.get('answered', '?')} of {done.get('queries', '?')} queries asked before the run was "
            f"stopped; {errors.get('failed', 0)} of them failed (error rate {fmt(float(errors.get('rate') or 0.0))})"
        )
    if status.get("reason") and is_failed(result):
        line += f". {status['reason']}"
    return line


def error_rows(result: Mapping[str, Any]) -> list[list[str]]:
    errors = result.get("errors") or {}
    n = errors.get("queries") or 0
    return [
        [
            kind,
            str(e.get("count", 0)),
            fmt((e.get("count", 0) / n) if n else None),
            e.get("meaning", ""),
            str(e.get("sample", ""))[:160],
        ]
        for kind, e in (errors.get("by_kind") or {}).items()
    ]


def oracle_text(result: Mapping[str, Any], name: str = "leak") -> str:
    """What the ``name`` oracle was, or ``not measured: <why>``."""
    entry = (result.get("oracles") or {}).get(name)
    if entry is None:  # older metrics.json: only the bool
        if name == "leak":
            return "yes" if (result.get("config") or {}).get("oracle") else "not measured: no oracle"
        return "—"
    if entry.get("measured"):
        return str(entry.get("source", "yes"))
    return f"not measured: {entry.get('reason', 'no oracle')}"


def leak_measured(result: Mapping[str, Any]) -> bool:
    entry = (result.get("oracles") or {}).get("leak")
    if entry is None:
        return result.get("leaks") is not None
    return bool(entry.get("measured"))


def bound_text(upper: float | None, level: str = "95 %") -> str:
    """``<= 1.5 % (95 %)``: a leak proportion's upper confidence bound (``metrics.leak_bound``), rounded *up* at the
    shown precision (an upper bound printed lower than it is would promise more than was measured)."""
    if upper is None:
        return "not measured"
    pct = 100.0 * upper
    decimals = 0 if pct >= 10 else 1 if pct >= 1 else 2
    shown = math.ceil(pct * 10**decimals - 1e-9) / 10**decimals
    return f"<= {shown:.{decimals}f} % ({level})"


def leaked_of(leaking: int, judged: int | None, upper: float | None, what: str) -> str:
    """``0 of 200 answered queries leaked (<= 1.5 %, 95 %)``: a leak count, never bare, with its bound."""
    text = f"{leaking} of {judged if judged is not None else '?'} {what}"
    if upper is None:
        return text
    return text + f" ({bound_text(upper).replace(' (95 %)', ', 95 %')})"


def leak_sentence(result: Mapping[str, Any]) -> str:
    """``3 of 37 answered queries leaked (<= 18.2 %, 95 %) (oracle: ...)`` or ``not measured: <why>``; never a
    bare 0."""
    if not leak_measured(result):
        return f"Permission leaks: {oracle_text(result, 'leak')}"
    leaks = result.get("leaks") or {}
    counts = result.get("counts") or {}
    errors = result.get("errors") or {}
    answered = errors.get("answered", counts.get("queries", "?"))
    failed = errors.get("failed", 0)
    leaking = leaks.get("queries_with_leak", counts.get("queries_with_leak", 0))
    upper = leaks.get("upper_bound_95")  # None in a file written before the bound was
    text = (
        f"Permission leaks: {leaked_of(leaking, answered, upper, 'answered queries leaked')} "
        f"(oracle: {oracle_text(result, 'leak')})"
    )
    if failed:
        text += f"; {failed} failed queries could not be checked"
    unmapped = (result.get("unmapped") or {}).get("results", 0)
    if unmapped:
        text += f"; {unmapped} unmapped results were not judged"
    return text


ANSWER_LEAK_HEADER = ["Query", "Fact stated", "Owner document", "Why its asker may not know it"]
ANSWER_LEAK_NOTE = (
    "An answer leak is a fact of a document the asker may not preview, stated in the answer whatever it cites: the "
    "corpus's facts (facts.jsonl) matched after normalisation, judged by the leak oracle."
)


def answer_leak_measured(result: Mapping[str, Any]) -> bool:
    return bool(((result.get("oracles") or {}).get("answer_leak") or {}).get("measured"))


def answer_leak_sentence(result: Mapping[str, Any]) -> str | None:
    """``Answer leaks: 2 of 40 answers stated a fact their asker may not know (<= 14 %, 95 %); rate 0.050`` or
    ``Answer leaks: not measured (the corpus has no facts)``; None for a file written before answer leaks were."""
    entry = (result.get("oracles") or {}).get("answer_leak")
    if not isinstance(entry, Mapping):
        return None
    if not entry.get("measured"):
        return f"Answer leaks: not measured ({entry.get('reason', 'no facts')})"
    section = result.get("answer_leaks") or {}
    leaking = int(section.get("queries_with_answer_leak") or 0)
    text = leaked_of(
        leaking,
        section.get("queries_judged"),
        section.get("upper_bound_95"),
        "answers stated a fact their asker may not know",
    )
    rate = (result.get("metrics") or {}).get("answer_leak_rate")
    return f"Answer leaks: {text}; answer_leak_rate {fmt(rate)}" + (
        f"; {section.get('facts_leaked', 0)} facts leaked" if leaking else ""
    )


def answer_leak_rows(result: Mapping[str, Any], limit: int | None = 50) -> list[list[str]]:
    """One row per (query, leaked fact): the query, the fact, its owner document by name, why it is forbidden."""
    rows = []
    for row in result.get("per_query") or []:
        for leak in row.get("answer_leaked") or []:
            rows.append([str(row.get("query_id")), str(leak.get("text")), _doc_label(leak), leak_why(leak)])
    return rows[:limit]


OVER_RESTRICTED_HEADER = ["Document", "Path", "Secret level", "Queries that withheld it", "Id"]


def over_restriction_sentence(result: Mapping[str, Any]) -> str | None:
    """``Over-restriction: 3 of 40 judged queries withheld a document their asker may see (...)`` or ``not
    measured: <why>``; ``None`` for a file written before over-restriction was measured."""
    section = result.get("over_restriction")
    if not isinstance(section, Mapping):
        return None
    if not section.get("measured"):
        return f"Over-restriction: not measured: {section.get('reason', 'no oracle')}"
    n, judged = section.get("queries_over_restricted", 0), section.get("queries_judged", 0)
    return (
        f"Over-restriction: {n} of {judged} judged queries withheld a document their asker may see "
        f"({section.get('queries_not_judged', 0)} answered queries not judged; definition: {section.get('definition')})"
    )


def under_fill_sentence(result: Mapping[str, Any]) -> str | None:
    """``Under-fill: 5 of 55 answered queries (0.091) got fewer than top_k results although ...`` or ``not measured:
    <why>``; ``None`` for a file written before under-fill was measured."""
    section = result.get("under_fill")
    if not isinstance(section, Mapping):
        return None
    if not section.get("measured"):
        return f"Under-fill: not measured: {section.get('reason', 'no oracle')}"
    n, judged = section.get("queries_under_filled", 0), section.get("queries_judged", 0)
    text = (
        f"Under-fill: {n} of {judged} answered queries ({fmt(section.get('under_fill_rate'))}"
        + (f", {bound_text(section['upper_bound_95'])}" if section.get("upper_bound_95") is not None else "")
        + ") got fewer results than their asker may preview among the documents matching the query "
        f"(up to top_k={section.get('top_k')})"
    )
    if n:
        text += " (a permission filter applied after a fixed top-k: see the rate by visible share below)"
    if section.get("note"):
        text += f"; {section['note']}"
    return text


UNDER_FILL_HEADER = ["Asker's visible share", "Queries", "Under-fill rate"]


def under_fill_rows(result: Mapping[str, Any]) -> list[list[str]]:
    """Under-fill by the asker's visible share of the corpus, low to high (none when it was not measured)."""
    if not (result.get("under_fill") or {}).get("measured"):
        return []
    groups = (result.get("strata") or {}).get("visible_share") or {}
    return [
        [value, str(groups[value].get("n", "—")), fmt(groups[value].get("under_fill_rate"))]
        for value in stratum_values(result, "visible_share")
    ]


def over_restricted_rows(result: Mapping[str, Any], limit: int | None = 50) -> list[list[str]]:
    """One row per withheld document, most withheld first."""
    docs = (result.get("over_restriction") or {}).get("documents") or []
    return [
        [
            str(d.get("name") or d.get("doc_id")),
            str(d.get("path") or "—"),
            str(d.get("secret_level") or "unknown"),
            str(d.get("queries", 0)),
            str(d.get("doc_id")),
        ]
        for d in docs[:limit]
    ]


UNMAPPED_HEADER = ["Foreign id", "Results"]


def unmapped_line(result: Mapping[str, Any]) -> str | None:
    u = result.get("unmapped") or {}
    if not u.get("results"):
        mapping = u.get("mapping")
        if not mapping or not mapping.get("results"):
            return None
        return f"Id mapping: {mapping['describe']}; all {mapping['results']} results mapped."
    reasons = "; ".join(f"{r}: {n}" for r, n in (u.get("reasons") or {}).items())
    return (
        f"Unmapped results: {u['results']} result(s) in {u.get('queries', 0)} queries map to no document of the "
        f"corpus ({reasons}): never hits, not judged for leaks."
    )


def unmapped_rows(result: Mapping[str, Any], limit: int = 20) -> list[list[str]]:
    return [[str(s.get("id")), str(s.get("results"))] for s in ((result.get("unmapped") or {}).get("samples") or [])][
        :limit
    ]


FAILED_LIMIT = 50  # rows in the reports; the full list is failed_queries.jsonl beside metrics.json
FAILED_HEADER = [
    "Query",
    "Asked by",
    "Problem",
    "Question",
    "Expected (gold)",
    "Top results",
    "Leaked (why it must not be seen)",
]


def leaked_label(d: Mapping[str, Any]) -> str:
    """A leaked document by name, with the reasons its asker may not see it (the grant chain) when known."""
    why = [str(x) for x in d.get("why") or []]
    return _doc_label(d) + (f" (why: {'; '.join(why)})" if why else "")


def _doc_label(d: Mapping[str, Any]) -> str:
    """``name (path)`` when the catalog knew the document, else its id."""
    name, path = d.get("name"), d.get("path")
    if not name:
        return str(d.get("doc_id"))
    return f"{name} ({path})" if path and path not in (name, f"/{name}") else str(name)


def failed_section(result: Mapping[str, Any]) -> Mapping[str, Any] | None:
    section = result.get("failed_queries")
    return section if isinstance(section, Mapping) else None


_PROBLEM_LABEL = {"miss": "no gold in top {k}", "leak": "leak", "answer_leak": "answer leak"}


def failed_rows(result: Mapping[str, Any], limit: int | None = FAILED_LIMIT) -> list[list[str]]:
    section = failed_section(result) or {}
    out: list[list[str]] = []
    for row in list(section.get("rows") or [])[:limit]:
        top = [f"{t.get('rank')}. {_doc_label(t)} [{fmt(t.get('score'))}]" for t in row.get("top") or []]
        problems = row.get("problems") or []
        out.append(
            [
                str(row.get("query_id")),
                str(row.get("asker") or ""),
                " + ".join(_PROBLEM_LABEL.get(p, p).format(k=row.get("k")) for p in problems),
                str(row.get("question") or ""),
                "; ".join(_doc_label(d) for d in row.get("gold") or []) or "(no gold)",
                "; ".join(top) or "(nothing returned)",
                " | ".join(
                    [
                        *(leaked_label(d) for d in row.get("leaked") or []),
                        *(
                            f'answer states "{d.get("text")}" of {leaked_label(d)}'
                            for d in row.get("answer_leaked") or []
                        ),
                    ]
                ),
            ]
        )
    return out


def failed_sentences(result: Mapping[str, Any], limit: int = FAILED_LIMIT) -> list[str]:
    """What the table holds: how many queries missed or leaked, how many more are in the JSONL file, and
    whether the documents are named."""
    section = failed_section(result)
    if section is None:
        return ["This metrics file predates the list of missed and leaking queries."]
    total = int(section.get("total") or 0)
    k = section.get("k")
    if total == 0:
        return [f"Every answered query had a gold document in the top {k} and no leak."]
    out = [f"{total} answered {'query' if total == 1 else 'queries'} had no gold document in the top {k} or leaked."]
    if total > limit:
        out.append(
            f"The first {limit} are shown; {total - limit} more are in {section.get('file') or 'failed_queries.jsonl'}"
            " beside metrics.json (the full list)."
        )
    if not section.get("catalog"):
        out.append("Documents are shown by id: give --corpus (the document catalog) for their names and paths.")
    return out


# --- the missed and leaking queries in several orders (the HTML report's sortable table) ------------------

_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """``q2`` before ``q10``: digit runs compare as numbers."""
    return tuple((0, int(p)) if p.isdigit() else (1, p.casefold()) for p in _DIGITS.split(text) if p)


def _leak_rank(row: Mapping[str, Any]) -> int:
    """The best rank at which a leaked document of ``row`` came back among its shown top results (a leak at rank
    1 is the worst); a large number when the leak was further down or the row did not leak."""
    leaked = {str(d.get("doc_id")) for d in row.get("leaked") or [] if isinstance(d, Mapping)}
    ranks = [int(t.get("rank") or 0) for t in row.get("top") or [] if str(t.get("doc_id")) in leaked]
    return min(ranks) if ranks else (1 << 20 if leaked else 1 << 30)


FAILED_ORDERS: tuple[tuple[str, str], ...] = (
    ("query", "Query id"),
    ("leaks", "Leaks first (highest-ranked leak first)"),
    ("asker", "Who asked"),
)


def failed_orders(
    result: Mapping[str, Any], limit: int | None = FAILED_LIMIT
) -> list[tuple[str, str, list[list[str]]]]:
    """The rows of ``failed_rows`` in each order of ``FAILED_ORDERS``: ``(key, label, rows)``. The same (capped)
    rows each time, only the order differs."""
    raw = list((failed_section(result) or {}).get("rows") or [])[:limit]
    shown = failed_rows(result, limit)
    pairs = list(zip(raw, shown, strict=True))

    def qid(pair: tuple[Mapping[str, Any], list[str]]) -> tuple[tuple[int, int | str], ...]:
        return natural_key(str(pair[0].get("query_id")))

    orders = {
        "query": sorted(pairs, key=qid),
        "leaks": sorted(
            pairs,
            key=lambda p: (not p[0].get("leaked"), _leak_rank(p[0]), -len(p[0].get("leaked") or []), qid(p)),
        ),
        "asker": sorted(pairs, key=lambda p: (natural_key(str(p[0].get("asker") or "")), qid(p))),
    }
    return [(key, label, [row for _, row in orders[key]]) for key, label in FAILED_ORDERS]
