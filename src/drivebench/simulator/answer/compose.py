"""A deterministic extractive answer built from recall's permitted hits, citing every source it quotes.

``compose_answer(sources, outcome, query, style)``:

1. Only ``outcome.hits`` are read (recall's results: documents the principal may preview, each at the
   version current at the query's time), and of each hit only the chunks of that same version. No
   other document is ever quoted or cited.
2. The text of the top ``max_docs`` hits is split into sentences (a sentence that only repeats the
   document's title or name is skipped); each sentence is scored by the query tokens it contains
   (jieba words for Chinese, lower-cased words with plurals folded otherwise, stopwords ignored):
   every distinct token counts ``min(len, 4) * idf``, idf taken over the candidate sentences, so a
   query word found in every sentence weighs little.
3. The top hit contributes its best sentence (its first one when nothing matches); each further hit
   contributes its best sentence when that scores at least half of the top hit's best. The top hit
   adds up to two more sentences scoring at least half its best. Sentences keep the hit order (and,
   within a document, the document's order) and are cut at 240 characters.
4. Each sentence is followed by its document's marker: ``brackets`` ``[file name]`` (a name holding
   brackets falls back to ``[[doc id]]``), ``ids`` ``[[doc id]]`` or ``footnotes`` ``[^n]`` with a
   reference list ``[^n]: /folder/file name`` at the end.

Levers (``levers.AnswerLevers``, the server's ``answer_citation`` / ``answer_length`` / ``answer_passages``):
``max_docs`` above is ``passages``; ``length`` > 0 replaces the sentence rule of step 3; ``citation`` ``some``
leaves some documents' statements uncited, ``wrong`` points each at another recalled document. The
defaults give the answers described above, byte for byte.

Fault hooks (no-ops on a clean server): ``citation-drop`` removes a document's markers (and its
reference-list entry) while keeping its sentences; ``wrong-citation`` points a document's markers at
another document the principal may preview and that recall did not return; under
``answer-unfiltered-context`` the hits read are an unfiltered search's (``recall.answer_context``) and
only the documents recall returned are cited (``citable``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from drivebench.search.index.tokenize import tokenize
from drivebench.simulator.answer.levers import AnswerLevers
from drivebench.simulator.faults.faultset import unit

if TYPE_CHECKING:
    from drivebench.simulator.ports import AnswerSources
    from drivebench.simulator.recall import RecallHit, RecallOutcome

CITATION_STYLES: tuple[str, ...] = ("brackets", "ids", "footnotes")
MAX_SENTENCE_CHARS = 240
TOP_HIT_SENTENCES = 3
_SPLIT = re.compile(r"(?<=[。！？；!?;])|(?<=[.])\s+|\n+")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_STOP_WORDS = (
    "的 了 是 在 和 与 及 或 有 为 吗 呢 吧 啊 么 什么 怎么 如何 哪些 哪个 哪 谁 多少 几 是否 请问 一下 这个 那个 我 你 我们 "
    "the a an of to in on for and or is are was were be been what which who whom whose when where why how "
    "does do did can could should would will with by from at as that this these those it its there their "
    "any all about into than then"
)
_STOP = frozenset(_STOP_WORDS.split(" "))


@dataclass(frozen=True)
class CitationRec:
    doc_id: str
    version_id: str
    name: str
    marker: str


@dataclass
class AnswerResult:
    text: str
    citations: list[CitationRec] = field(default_factory=list)
    quoted: list[tuple[str, str]] = field(default_factory=list)  # (doc_id, sentence) actually used


@dataclass
class _Pick:
    hit: RecallHit
    sentences: list[str]


def _stem(token: str) -> str:
    """A light plural fold for Latin words (``passwords`` -> ``password``); Chinese is left alone."""
    if len(token) > 4 and token.isascii() and token.isalpha() and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def terms_of(text: str) -> set[str]:
    return {_stem(t) for t in tokenize(text)}


def query_terms(query: str) -> set[str]:
    return {_stem(t) for t in tokenize(query) if t not in _STOP and (len(t) > 1 or _CJK.match(t) is None)}


def split_sentences(text: str) -> list[str]:
    out = []
    for raw in _SPLIT.split(text):
        s = " ".join(raw.split())
        if len(s) >= 4 and re.search(r"\w", s):
            out.append(s if len(s) <= MAX_SENTENCE_CHARS else s[: MAX_SENTENCE_CHARS - 1] + "…")
    return out


def _hit_sentences(sources: AnswerSources, hit: RecallHit) -> list[str]:
    """Sentences of the hit's version, its best chunk first, header lines (title · name) removed."""
    ids = [hit.chunk_id, *(i for i in sources.store.by_version.get(hit.version_id, []) if i != hit.chunk_id)]
    doc = sources.drive.documents.get(hit.doc_id)
    names = {hit.name, hit.name.rsplit(".", 1)[0], *([doc.title] if doc is not None and doc.title else [])}
    seen: dict[str, None] = dict.fromkeys(n.strip() for n in names)
    skip = len(seen)
    for cid in ids[:64]:
        if not sources.store.alive[cid] or sources.store.doc_ids[cid] != hit.doc_id:
            continue
        text = sources.store.texts[cid]
        body = text.split("\n", 1)[1] if "\n" in text else ""
        for s in split_sentences(body):
            seen.setdefault(s, None)
    return list(seen)[skip:]


def _pick(sources: AnswerSources, hits: list[RecallHit], query: str, max_docs: int, length: int = 0) -> list[_Pick]:
    terms = query_terms(query)
    per_hit = [(hit, _hit_sentences(sources, hit)) for hit in hits[:max_docs]]
    tokens = {s: terms_of(s) & terms for _, sentences in per_hit for s in sentences}
    n = max(1, len(tokens))
    df = {t: sum(1 for found in tokens.values() if t in found) for t in terms}
    weight = {t: min(len(t), 4) * math.log(1.0 + n / df[t]) for t in terms if df[t]}
    scored: list[tuple[RecallHit, list[tuple[float, int, str]]]] = []
    for hit, sentences in per_hit:
        values = [(round(sum(weight[t] for t in tokens[s]), 9), i, s) for i, s in enumerate(sentences)]
        scored.append((hit, sorted(values, key=lambda x: (-x[0], x[1]))))
    picks: list[_Pick] = []
    if not scored:
        return picks
    if length > 0:
        return _pick_length(scored, length)
    top_hit, top_ranked = scored[0]
    best = top_ranked[0][0] if top_ranked else 0.0
    if top_ranked:
        chosen = [top_ranked[0], *(r for r in top_ranked[1:TOP_HIT_SENTENCES] if best > 0 and r[0] >= best * 0.5)]
        picks.append(_Pick(top_hit, [s for _, _, s in sorted(chosen, key=lambda x: x[1])]))
    else:  # nothing extractable: quote the snippet
        picks.append(_Pick(top_hit, [s for s in split_sentences(top_hit.snippet)[:1]] or [top_hit.name]))
    for hit, ranked in scored[1:]:
        if ranked and best > 0 and ranked[0][0] >= best * 0.5:
            picks.append(_Pick(hit, [ranked[0][2]]))
    return picks


def _pick_length(scored: list[tuple[RecallHit, list[tuple[float, int, str]]]], length: int) -> list[_Pick]:
    """``length`` > 0: the top passage's best sentence, then the best-scoring others (each at least half the
    best, up to ``length`` per passage), ``length`` sentences in all, in recall and document order."""
    top_hit, top_ranked = scored[0]
    if not top_ranked:
        return [_Pick(top_hit, [s for s in split_sentences(top_hit.snippet)[:1]] or [top_hit.name])]
    best = top_ranked[0][0]
    pool = [
        (r[0], hi, r[1], r[2])
        for hi, (_, ranked) in enumerate(scored)
        for r in ranked[:length]
        if (hi, r[1]) != (0, top_ranked[0][1]) and best > 0 and r[0] >= best * 0.5
    ]
    pool.sort(key=lambda x: (-x[0], x[1], x[2]))
    chosen = [(0, top_ranked[0][1], top_ranked[0][2]), *((hi, i, s) for _, hi, i, s in pool[: length - 1])]
    picks: list[_Pick] = []
    for hi, (hit, _) in enumerate(scored):
        sentences = [s for h, _, s in sorted(c for c in chosen if c[0] == hi)]
        if sentences:
            picks.append(_Pick(hit, sentences))
    return picks


def _lever_targets(
    picks: list[_Pick], outcome: RecallOutcome, query: str, levers: AnswerLevers
) -> dict[str, RecallHit | None]:
    """Which recalled hit each quoted document's statements cite under the citation lever (None: uncited)."""
    out: dict[str, RecallHit | None] = {}
    if levers.citation == "some":
        for p in picks:
            keep = unit("answer-citation", query, p.hit.doc_id) < levers.cite_share
            out[p.hit.doc_id] = p.hit if keep else None
    elif levers.citation == "wrong":
        first: dict[str, RecallHit] = {}
        for h in outcome.hits:
            first.setdefault(h.doc_id, h)  # each document's best hit, in recall order
        recalled = list(first.values())
        order = [h.doc_id for h in recalled]
        for p in picks:
            if len(order) < 2:
                out[p.hit.doc_id] = None
                continue
            i = order.index(p.hit.doc_id) if p.hit.doc_id in order else -1
            out[p.hit.doc_id] = recalled[(i + 1) % len(order)]
    return out


def _bracket_safe(name: str) -> bool:
    return not re.search(r"[\[\]\n【】]", name)


def compose_answer(
    sources: AnswerSources,
    outcome: RecallOutcome,
    query: str,
    style: str = "brackets",
    *,
    max_docs: int | None = None,
    levers: AnswerLevers | None = None,
    citable: frozenset[str] | None = None,
) -> AnswerResult:
    """``levers``: the generator's knobs (``levers.AnswerLevers``; default: cite always, the built-in
    length, 3 passages); ``max_docs`` overrides ``levers.passages``. ``citable`` is only ever given under the
    answer-unfiltered-context fault (``recall.answer_context``): statements of other documents stay uncited."""
    if style not in CITATION_STYLES:
        raise ValueError(f"unknown citation_style {style!r}; use one of {', '.join(CITATION_STYLES)}")
    levers = levers or AnswerLevers()
    zh = bool(_CJK.search(query))
    picks = _pick(sources, outcome.hits, query, max_docs or levers.passages, levers.length)
    if not picks:
        none = "没有找到你有权查看的相关文档。" if zh else "No document you may see answers this question."
        return AnswerResult(none)
    faults = sources.faults
    replacements: dict[str, str] = {}
    if faults.get("wrong-citation") is not None:
        returned = {h.doc_id for h in outcome.hits}
        mask = sources.engine.allowed_mask(outcome.principal, "preview", outcome.at)
        candidates = sorted(
            d
            for d in (sources.engine.doc_ids[i] for i in np.flatnonzero(mask))
            if d not in returned and d in sources.drive.documents and sources.drive.documents[d].trashed_at is None
        )
        for p in picks:
            other = faults.misattribute(query, p.hit.doc_id, candidates)  # FAULT wrong-citation
            if other is not None:
                replacements[p.hit.doc_id] = other

    targets = _lever_targets(picks, outcome, query, levers)
    citations: dict[str, CitationRec] = {}
    lines: list[str] = []
    quoted: list[tuple[str, str]] = []
    for p in picks:
        drop = faults.drop_citation(query, p.hit.doc_id)  # FAULT citation-drop
        drop = drop or (citable is not None and p.hit.doc_id not in citable)  # FAULT answer-unfiltered-context
        cited_hit = targets.get(p.hit.doc_id, p.hit)  # the citation lever: the right hit, another one, or none
        drop = drop or cited_hit is None
        cited_hit = cited_hit or p.hit
        cited_id = replacements.get(p.hit.doc_id, cited_hit.doc_id)
        marker = ""
        if not drop:
            rec = citations.get(cited_id) or _citation(sources, outcome, cited_hit, cited_id, style, len(citations) + 1)
            citations[cited_id] = rec
            marker = rec.marker
        for s in p.sentences:
            quoted.append((p.hit.doc_id, s))
            lines.append(f"{s} {marker}".rstrip() if style != "footnotes" else f"{s}{marker}")
    text = "\n".join(lines)
    if style == "footnotes" and citations:
        refs = [f"{c.marker}: {sources.drive.doc_path(sources.drive.documents[c.doc_id])}" for c in citations.values()]
        text += "\n\n" + "\n".join(refs)
    return AnswerResult(text, list(citations.values()), quoted)


def _citation(
    sources: AnswerSources, outcome: RecallOutcome, hit: RecallHit, doc_id: str, style: str, n: int
) -> CitationRec:
    if doc_id == hit.doc_id:
        version_id, name = hit.version_id, hit.name
    else:  # only under wrong-citation: another previewable document, at its version current then
        doc = sources.drive.documents[doc_id]
        version = doc.version_at(outcome.at) or doc.head
        version_id, name = version.version_id, doc.name
    if style == "footnotes":
        marker = f"[^{n}]"
    elif style == "brackets" and _bracket_safe(name):
        marker = f"[{name}]"
    else:
        marker = f"[[{doc_id}]]"
    return CitationRec(doc_id, version_id, name, marker)
