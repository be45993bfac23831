"""Per-document diagnosis of retrieval vs generation: where each gold document got lost.

For every gold document of a query (``retrieved`` = anywhere in the returned list, the context the
generator saw; ``cited`` = resolved citations of the answer):

* ``retrieved_cited``: found and cited (success);
* ``retrieved_not_cited``: found but not cited (**generation gap**);
* ``cited_not_retrieved``: cited without having been retrieved (from memory, or another turn);
* ``neither``: never retrieved, not cited (**retrieval gap**).

For every citation that is not gold: ``wrong`` (resolves to a non-gold document) or
``unresolvable`` (looks like a citation, names nothing known).

Edge cases: errored / missing queries retrieved nothing and cite nothing (every gold doc is
``neither``); no gold: only ``wrong`` / ``unresolvable`` apply; duplicates count once; ranks and ties
are irrelevant. Only computed when the run has answers.

``larger_gap(totals)`` applies the article's rule to the run's totals: more gold documents ``retrieved_not_cited``
than ``neither`` -> ``"generation"`` (fix the prompt: make it cite), more ``neither`` -> ``"retrieval"`` (fix
recall), equal and non-zero -> ``"both"``, none lost -> ``"none"``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

CATEGORIES: tuple[str, ...] = ("retrieved_cited", "retrieved_not_cited", "cited_not_retrieved", "neither")
NON_GOLD: tuple[str, ...] = ("wrong", "unresolvable")


def diagnose(
    gold: Iterable[str], retrieved: Collection[str], cited: Iterable[str], unresolvable: Iterable[str] = ()
) -> dict[str, list[str]]:
    """Lists of doc ids (or citation texts for ``unresolvable``) per category, in gold / citation order."""
    gold_ids = list(dict.fromkeys(gold))
    cited_ids = list(dict.fromkeys(cited))
    cited_set, gold_set = set(cited_ids), set(gold_ids)
    out: dict[str, list[str]] = {name: [] for name in CATEGORIES + NON_GOLD}
    for g in gold_ids:
        found, named = g in retrieved, g in cited_set
        key = (
            ("retrieved_cited" if named else "retrieved_not_cited")
            if found
            else ("cited_not_retrieved" if named else "neither")
        )
        out[key].append(g)
    out["wrong"] = [c for c in cited_ids if c not in gold_set]
    out["unresolvable"] = list(dict.fromkeys(unresolvable))
    return out


def larger_gap(totals: dict[str, int]) -> str:
    """``generation`` / ``retrieval`` / ``both`` / ``none``: where more gold documents got lost (see above)."""
    generation, retrieval = int(totals.get("retrieved_not_cited", 0)), int(totals.get("neither", 0))
    if generation == retrieval:
        return "none" if generation == 0 else "both"
    return "generation" if generation > retrieval else "retrieval"
