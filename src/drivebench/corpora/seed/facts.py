"""The facts the seed documents own, for ``facts.jsonl`` (``formats.facts``), from the data file ``facts.toml``.

The seed documents are written by hand, so their facts are too: ``facts.toml`` names each document's
distinctive values (amounts, codes, dates tied to an entity, a named person in a role) and the other documents
that state the same value. This module turns them into records and checks them against what the documents'
files hold (the text extracted from the rendered bytes, as the simulator indexes it, which carries a file's
author too): the versions of an owner that state a value are its owner versions, and an owner stating it in
none is a ``ValueError`` naming the fact. That no other document states a value is what
``tests/corpora/test_seed_facts.py`` checks, after the evaluator's normalisation (which this layer may not
import: it tells ``350万元`` from ``2,350万元`` and equates ``320万元`` with ``3,200,000``); the answer-leak
oracle trusts the owners, and a missing one would count a permitted answer as a leak.
"""

from __future__ import annotations

import tomllib
import unicodedata
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from drivebench.formats.facts import CorpusFact, FactOwner

FACTS_DATA = Path(__file__).with_name("facts.toml")


@cache
def facts_data() -> dict[str, Any]:
    """``facts.toml``: document id -> its ``kind``, ``entity`` and ``facts``."""
    with FACTS_DATA.open("rb") as fh:
        return tomllib.load(fh)


def _norm(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


def seed_facts(version_texts: Mapping[str, str]) -> list[CorpusFact]:
    """The facts of ``facts.toml`` in its order, owners checked against ``version_texts`` (version id, as
    ``d0013-v2``, -> that version's extracted text; every version of every document, oldest first)."""
    by_doc: dict[str, list[tuple[str, str]]] = {}
    for version_id, text in version_texts.items():
        by_doc.setdefault(version_id.rsplit("-v", 1)[0], []).append((version_id, _norm(text)))
    facts: list[CorpusFact] = []
    for doc_id, table in facts_data().items():
        if doc_id not in by_doc:
            raise ValueError(f"facts.toml: [{doc_id}] is no seed document")
        for entry in table["facts"]:
            value = _norm(entry["text"])
            where = f"facts.toml [{doc_id}] {entry['key']} = {entry['text']!r}"
            owner_ids = [doc_id, *entry.get("also", [])]
            stating = {d: [vid for vid, text in by_doc.get(d, []) if value in text] for d in owner_ids}
            silent = [d for d, vids in stating.items() if not vids]
            if silent:
                raise ValueError(f"{where}: not stated by its owner(s) {', '.join(silent)}")
            facts.append(
                CorpusFact(
                    fact_id=f"f{len(facts) + 1:05d}",
                    text=entry["text"],
                    entity=table["entity"],
                    attribute=f"{table['kind']}.{entry['key']}",
                    owners=[FactOwner(doc_id=d, version_ids=stating[d]) for d in owner_ids],
                    current=by_doc[doc_id][-1][0] in stating[doc_id],  # its head version states it
                )
            )
    return facts
