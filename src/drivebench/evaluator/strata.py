"""Strata: which group each query falls in, per attribute, so metrics can be broken down.

Every query gets exactly one value per stratum (``"unknown"`` when nothing says):

==============  =================================================================================
stratum         value
==============  =================================================================================
department      ``tags.department``; else the catalog department shared by all gold docs
                (``"mixed"`` if they differ); else ``"unknown"``
file_type       ``tags.file_type``; else the gold docs' catalog file type (``"mixed"`` if they
                differ); else ``"unknown"``
length          ``tags.length``; else computed from the query text by ``length_bucket``
hops            ``tags.hops``; else the number of distinct ``hops``; ``"none"`` without a chain
role            ``user_role``; else ``tags.role``; else ``"unknown"`` (a ``user_id`` alone
                names a person, not a role)
kind            ``tags.kind``; else ``"unknown"``
secret_level    the highest catalog secret level among the gold docs (for a query without gold:
                among its ``forbidden`` docs, the refusal case); else ``tags.secret_level``;
                ``"none"`` when the query names no document at all
visible_share   the share of the corpus's documents (existing at the query's time) its principal may
                preview then, bucketed by ``share_bucket``; ``"unknown"`` without a corpus oracle
==============  =================================================================================

Visible-share buckets (``share_bucket``): ``<10 %``, ``10-25 %``, ``25-50 %``, ``>=50 %``. Post-filtering targets
(a fixed top-k, then the permission filter) fail the askers who see little of the corpus: this stratum shows it.
The edges fit the built-in corpora, so that every bucket has queries (measured over their eval sets: seed 2 / 7 /
20 / 26 of 55 queries; acme-zh@3 12 / 48 / 221 / 59 of 340; acme-en@3 11 / 50 / 218 / 61 of 340; the shares run
from 7 % to 84 %).

Length buckets (``length_bucket``): the length of a query in *English-word equivalents* is
``latin_words + cjk_chars / 2`` where ``cjk_chars`` counts Han, kana and hangul characters and
``latin_words`` counts runs of ASCII letters/digits. ``short`` ≤ 6, ``medium`` ≤ 15, ``long`` above.
So a purely Chinese query is short up to 12 characters and medium up to 30; a purely English one is
short up to 6 words and medium up to 15.

Tag strata: besides the built-in ones, metrics are broken down by eval-set tags, a stratum per tag whose
value is the query's ``tags[TAG]`` (``"unknown"`` when the query has none):

* ``DEFAULT_TAGS`` (``phrasing``, ``style``, ``noise``) whenever some query of the eval set carries them.
  They are the axes along which a retriever fails rather than the ones the corpus happens to have:
  ``phrasing`` separates known-item lookups from paraphrases, vague and ``cross_language`` questions,
  ``style`` says whether the question names a code, names the entity or only describes it, and
  ``noise=typo`` isolates misspelt questions. Each has a handful of values, so the cost is a few rows, and
  a set that lacks them shows nothing. In the built-in sets only some queries carry ``style`` and
  ``noise``: a clean question has no ``noise`` tag, so there ``noise=unknown`` means "no noise was added".
* any other tag the caller names (``--by TAG``, ``by=[TAG]``); a tag no query carries is an error
  (``UnknownTagError``) naming the tags the eval set has, never an empty table.

Groups of fewer than ``SMALL_GROUP`` queries are too small to read: ``metrics.json`` marks them
``"small": true`` and every report shows them marked and greyed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from drivebench.evaluator.catalog import Catalog, CatalogDoc
from drivebench.formats.evalset import EvalQuery
from drivebench.formats.query_length import length_bucket

STRATA: tuple[str, ...] = (
    "department",
    "file_type",
    "length",
    "hops",
    "role",
    "kind",
    "secret_level",
    "visible_share",
)
#: (upper bound, label) of each visible-share bucket, lowest first; the last takes every share above.
SHARE_BUCKETS: tuple[tuple[float, str], ...] = ((0.10, "<10 %"), (0.25, "10-25 %"), (0.50, "25-50 %"))
SHARE_TOP = ">=50 %"
#: Tags broken down by whenever the eval set carries them (see the module docs for why these).
DEFAULT_TAGS: tuple[str, ...] = ("phrasing", "style", "noise")
#: A group with fewer queries than this is flagged ``small``: its figures are too noisy to read.
SMALL_GROUP = 5


class UnknownTagError(ValueError):
    """A tag to break down by that no query of the eval set carries."""


_SECRET_ORDER = ("public", "internal", "confidential", "secret")


def _shared(values: Sequence[str | None]) -> str | None:
    if not values:
        return None
    known = {v for v in values if v}
    if not known:
        return None
    return known.pop() if len(known) == 1 else "mixed"


def _highest_level(levels: Sequence[str | None]) -> str | None:
    ranked = [lv for lv in levels if lv]
    if not ranked:
        return None
    return max(ranked, key=lambda lv: _SECRET_ORDER.index(lv) if lv in _SECRET_ORDER else -1)


def _docs(doc_ids: Sequence[str], catalog: Catalog | None) -> list[CatalogDoc]:
    if catalog is None or not doc_ids:
        return []
    return [d for d in (catalog.get(i) for i in doc_ids) if d is not None]


def _secret_level(q: EvalQuery, catalog: Catalog | None) -> str:
    if not q.gold and not q.forbidden:
        return "none"
    if catalog is None:
        return q.tags.get("secret_level") or "unknown"
    named = _docs([g.doc_id for g in q.gold] if q.gold else q.forbidden, catalog)
    return _highest_level([d.secret_level for d in named]) or q.tags.get("secret_level") or "unknown"


def _from_gold(q: EvalQuery, catalog: Catalog | None, attribute: str) -> str:
    """A tag, else the attribute shared by the gold docs in the catalog."""
    tagged = q.tags.get(attribute)
    if tagged:
        return tagged
    if catalog is None or not q.gold:
        return "unknown"
    docs = _docs([g.doc_id for g in q.gold], catalog)
    return _shared([getattr(d, attribute) for d in docs]) or "unknown"


def _hops(q: EvalQuery) -> str:
    return q.tags.get("hops") or (str(len(dict.fromkeys(q.hops))) if q.hops else "none")


def share_bucket(share: float | None) -> str:
    """The visible-share bucket of a share in [0, 1] (``"unknown"`` for ``None``)."""
    if share is None:
        return "unknown"
    return next((label for bound, label in SHARE_BUCKETS if share < bound), SHARE_TOP)


def evalset_tags(queries: Iterable[EvalQuery]) -> list[str]:
    """Every tag name some query of the eval set carries, sorted."""
    return sorted({name for q in queries for name in q.tags})


def tag_strata(queries: Sequence[EvalQuery], by: Iterable[str] = ()) -> list[str]:
    """The tag strata to add to the built-in ones: the ``DEFAULT_TAGS`` the eval set carries, then ``by`` in order
    (a built-in stratum's name or a repeat adds nothing). A tag of ``by`` that no query carries raises
    ``UnknownTagError`` naming the eval set's tags."""
    carried = evalset_tags(queries)
    wanted = [by.strip()] if isinstance(by, str) else [t.strip() for t in by]  # one name is not its letters
    unknown = [t for t in dict.fromkeys(wanted) if t not in STRATA and t not in carried]
    if unknown:
        have = ", ".join(carried) if carried else "none (no query has tags)"
        raise UnknownTagError(
            f"cannot break down by {', '.join(map(repr, unknown))}: no query of the eval set has "
            f"{'that tag' if len(unknown) == 1 else 'those tags'}; the eval set's tags: {have} "
            f"(built-in strata: {', '.join(STRATA)})"
        )
    return [t for t in dict.fromkeys([*(t for t in DEFAULT_TAGS if t in carried), *wanted]) if t not in STRATA]


def strata_table(
    queries: Sequence[EvalQuery],
    catalog: Catalog | None = None,
    tags: Sequence[str] = (),
    visible_shares: Sequence[float | None] | None = None,
) -> dict[str, list[str]]:
    """Stratum name -> the value of every query, in eval-set order (computed column by column): the built-in
    strata, then a stratum per tag of ``tags`` (``tags[TAG]``, ``"unknown"`` when absent; see ``tag_strata``).
    ``visible_shares``: each query's visible share of the corpus (the leak oracle's; ``None``: unknown)."""
    shares = visible_shares if visible_shares is not None else [None] * len(queries)
    builtin = {
        "department": [_from_gold(q, catalog, "department") for q in queries],
        "file_type": [_from_gold(q, catalog, "file_type") for q in queries],
        "length": [q.tags.get("length") or length_bucket(q.query) for q in queries],
        "hops": [_hops(q) for q in queries],
        "role": [q.user_role or q.tags.get("role") or "unknown" for q in queries],
        "kind": [q.tags.get("kind") or "unknown" for q in queries],
        "secret_level": [_secret_level(q, catalog) for q in queries],
        "visible_share": [share_bucket(share) for share in shares],
    }
    return builtin | {tag: [q.tags.get(tag) or "unknown" for q in queries] for tag in tags if tag not in builtin}


def query_strata(q: EvalQuery, catalog: Catalog | None = None, tags: Sequence[str] = ()) -> dict[str, str]:
    """The stratum values of one query."""
    return {name: values[0] for name, values in strata_table([q], catalog, tags).items()}
