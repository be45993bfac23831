"""Extract the documents an answer cites, and resolve them to doc ids through a catalog.

The answer is first NFKC-normalised (so ``［报价单.pdf］`` reads as ``[报价单.pdf]`` and ``［＾１］`` as
``[^1]``); fenced and inline code is ignored. Recognised syntaxes:

=====================  ===========================================  ==========================
syntax                 example                                      unresolved ->
=====================  ===========================================  ==========================
``wiki``               ``[[d0007]]``, ``[[报价单.pdf|报价]]``           unresolvable
``bracket``            ``[报价单.pdf]``, ``[a.pdf, b.docx]``          unresolvable if it has a
                                                                    document extension, else
                                                                    ignored (prose brackets)
``lenticular``         ``【报价单.pdf】``, ``【二季度报价】``               same as ``bracket``
``footnote``           ``[^1]`` / ``[1]`` + reference list entry     unresolvable (entry text)
``link``               ``[报价单.pdf](https://drive/x/d0007)``         ignored (never counted)
=====================  ===========================================  ==========================

Reference lists: lines ``[^1]: name.pdf`` anywhere (markdown footnote definitions), and the block
of lines ``[1] name.pdf`` / ``[1]: name.pdf`` / ``- [1] name.pdf`` at the end of the answer (blank
lines and a heading line such as ``参考资料:`` or ``Sources`` may precede it). Every entry of a
reference list counts as a citation, whether or not its marker appears in the text. A ``[^x]``
marker without an entry is unresolvable; a ``[n]`` marker without an entry is ordinary prose.

A citation "looks like a citation" (and is reported ``unresolvable`` when it does not resolve) when
it uses explicit syntax (``[[...]]``, a footnote, a reference-list entry) or its text ends with a
document extension (``DOC_EXTENSIONS``). Markdown links and ordinary brackets in prose count only
when they resolve.

Resolution (``resolve_key``): the catalog is asked for the key (doc id, file name, name without
extension, path, title; all folded), then for the last path segment of the key. A key naming several
documents is *ambiguous*: the candidate the query actually retrieved wins (``prefer``), else the
first in catalog order; the citation is flagged ``ambiguous``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from drivebench.evaluator.catalog import Catalog

_EXTENSION_WORDS = (
    "pdf doc docx xls xlsx xlsm csv ppt pptx dxf dwg zip rar 7z tar gz md markdown txt rtf odt ods odp "
    "html htm json xml yaml yml log eml msg png jpg jpeg gif svg wps et dps"
)
DOC_EXTENSIONS: frozenset[str] = frozenset(_EXTENSION_WORDS.split())

_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.S)
_TOKEN = re.compile(
    r"""\[\[(?P<wiki>[^\[\]\n]+?)\]\]
      | \[(?P<link_text>[^\[\]\n]*)\]\((?P<link_url>[^)\s]*)(?:\s+"[^"]*")?\)
      | \[\^(?P<foot>[^\[\]\s]+)\]
      | \[(?P<bracket>[^\[\]\n]+)\]
      | 【(?P<lent>[^【】\n]+)】""",
    re.X,
)
_FOOT_DEF = re.compile(r"^[ \t]*\[\^(?P<label>[^\[\]\s]+)\]:[ \t]*(?P<entry>.+?)[ \t]*$", re.M)
_REF_LINE = re.compile(r"^\s*(?:[-*+]\s+)?\[(?P<label>\d{1,3})\]:?\s*(?P<entry>.+?)\s*$")
_HEADING = re.compile(
    r"^\s*(?:#+\s*)?[*_]*(?:参考资料|参考文献|参考|引用|来源|出处|资料来源|references?|sources?|citations?)[*_]*\s*:?\s*$",
    re.I,
)
_SEPARATORS = re.compile(r"\s*[,;，；、]\s*")
_FILENAME = re.compile(r"[^\s\[\]【】()（）<>\"'，,;；:：|]+\.([A-Za-z0-9]{1,8})(?![A-Za-z0-9])")


def has_doc_extension(text: str) -> bool:
    m = re.search(r"\.([A-Za-z0-9]{1,8})\s*$", text)
    return m is not None and m.group(1).lower() in DOC_EXTENSIONS


@dataclass(frozen=True)
class Citation:
    raw: str  # the cited text as written (after NFKC)
    syntax: str  # wiki | bracket | lenticular | footnote | link
    doc_id: str | None
    ambiguous: bool = False


@dataclass
class Citations:
    items: list[Citation] = field(default_factory=list)

    @property
    def cited(self) -> list[str]:
        """Distinct resolved doc ids, in order of first citation."""
        return list(dict.fromkeys(c.doc_id for c in self.items if c.doc_id is not None))

    @property
    def unresolvable(self) -> list[str]:
        """Distinct citation texts that look like citations but name no known document."""
        return list(dict.fromkeys(c.raw.strip() for c in self.items if c.doc_id is None))

    @property
    def ambiguous(self) -> int:
        return sum(c.ambiguous for c in self.items)


def resolve_key(key: str, catalog: Catalog, prefer: Collection[str] = ()) -> tuple[str | None, bool]:
    """``(doc_id, ambiguous)`` for a cited name, path, title or id; ``(None, False)`` when unknown."""
    key = key.strip().strip("\"'“”‘’「」《》").strip()
    if not key:
        return None, False
    for attempt in dict.fromkeys((key, key.rstrip("/").rsplit("/", 1)[-1])):
        ids = catalog.lookup(attempt)
        if len(ids) == 1:
            return ids[0], False
        if ids:
            preferred = [d for d in ids if d in prefer]
            return (preferred or ids)[0], True
    return None, False


def _split_reference_lines(text: str) -> tuple[str, dict[str, str]]:
    """Remove reference-list lines from ``text``; return the body and ``{label: entry}``."""
    refs = {"^" + m.group("label"): m.group("entry") for m in reversed(list(_FOOT_DEF.finditer(text)))}
    lines = _FOOT_DEF.sub("", text).split("\n")
    start = len(lines)
    block: list[tuple[str, str]] = []
    while start > 0:
        m = _REF_LINE.match(lines[start - 1])
        if m:
            block.append((m.group("label"), m.group("entry")))
        elif lines[start - 1].strip():
            break
        start -= 1
    if not block:
        return "\n".join(lines), refs
    if start > 0 and _HEADING.match(lines[start - 1]):
        start -= 1
    for label, entry in reversed(block):
        refs.setdefault(label, entry)
    return "\n".join(lines[:start]), refs


def _entry_keys(entry: str) -> list[str]:
    """Candidate keys inside a reference-list entry, most specific last-resort ordering."""
    keys = [entry]
    for m in _TOKEN.finditer(entry):
        keys += [v for k, v in m.groupdict().items() if v and k != "foot"]
        if m.group("link_url"):
            keys.append(_url_key(m.group("link_url")))
    keys += [m.group(0) for m in _FILENAME.finditer(entry)]
    keys += [re.split(r"\s+[-—–]\s+|[（(]|，|,", entry)[0]]
    return [k for k in dict.fromkeys(k.strip() for k in keys) if k]


def _url_key(url: str) -> str:
    path = urlsplit(url).path or url
    return unquote(path.rstrip("/").rsplit("/", 1)[-1])


class _Resolver:
    def __init__(self, catalog: Catalog, prefer: Collection[str]) -> None:
        self.catalog, self.prefer = catalog, prefer
        self.out: list[Citation] = []

    def first(self, keys: list[str]) -> tuple[str | None, bool]:
        for key in keys:
            doc, ambiguous = resolve_key(key, self.catalog, self.prefer)
            if doc is not None:
                return doc, ambiguous
        return None, False

    def add(self, raw: str, syntax: str, keys: list[str], strong: bool) -> None:
        doc, ambiguous = self.first(keys)
        if doc is not None or strong:
            self.out.append(Citation(raw, syntax, doc, ambiguous))

    def add_listed(self, text: str, syntax: str, strong: bool | None) -> None:
        """A bracketed text that may list several names (``a.pdf, b.pdf``)."""
        doc, _ = self.first([text])
        parts = _SEPARATORS.split(text) if doc is None else [text]
        for part in parts if len(parts) > 1 else [text]:
            if part.strip():
                self.add(part, syntax, [part], has_doc_extension(part) if strong is None else strong)


def extract_citations(answer: str | None, catalog: Catalog, prefer: Collection[str] = ()) -> Citations:
    """Every citation of ``answer``; ``prefer`` = the doc ids the query retrieved (breaks name ties)."""
    if not answer:
        return Citations()
    text = _CODE.sub(" ", unicodedata.normalize("NFKC", answer))
    body, refs = _split_reference_lines(text)
    r = _Resolver(catalog, prefer)
    for m in _TOKEN.finditer(body):
        _marker(m, refs, r)
    for entry in refs.values():
        r.add(entry, "footnote", _entry_keys(entry), strong=True)
    return Citations(r.out)


def _marker(m: re.Match[str], refs: dict[str, str], r: _Resolver) -> None:
    """Add the citation(s) one marker of the body makes (a footnote's entry is added by the caller)."""
    if m.group("wiki") is not None:
        r.add(m.group("wiki"), "wiki", [m.group("wiki").split("|", 1)[0]], strong=True)
    elif m.group("link_url") is not None:
        r.add(m.group("link_text"), "link", [m.group("link_text"), _url_key(m.group("link_url"))], strong=False)
    elif m.group("foot") is not None:
        if "^" + m.group("foot") not in refs:
            r.add("[^" + m.group("foot") + "]", "footnote", [], strong=True)
    elif m.group("bracket") is not None:
        inner = m.group("bracket")
        if not (inner.isdigit() and inner in refs):  # a [n] marker: its entry is counted below
            r.add_listed(inner, "bracket", None)
    else:
        r.add_listed(m.group("lent"), "lenticular", None)


@dataclass(frozen=True)
class Statement:
    text: str  # the statement as written (NFKC, markers removed)
    cited: tuple[str, ...]  # doc ids its markers resolve to (empty: uncited)


def cited_statements(answer: str | None, catalog: Catalog, prefer: Collection[str] = ()) -> list[Statement]:
    """The answer cut into statements, each with the documents its own markers cite.

    A statement is the text of one line up to a group of citation markers (the markers cite the text
    before them, back to the previous group or the line's start); text after a line's last marker group,
    or on a line without markers, is an uncited statement. A footnote marker (``[^1]``, ``[1]``) cites
    its reference-list entry; the reference list itself is not a statement. Code is ignored."""
    if not answer:
        return []
    text = _CODE.sub(" ", unicodedata.normalize("NFKC", answer))
    body, refs = _split_reference_lines(text)
    out: list[Statement] = []
    for line in body.split("\n"):
        start, pending = 0, ""
        cites: list[str] = []
        for m in _TOKEN.finditer(line):
            gap = line[start : m.start()]
            if gap.strip() and cites:  # new text after a marker group: the group closes its statement
                out.append(Statement(pending, tuple(d for d in dict.fromkeys(cites) if d)))
                pending, cites = "", []
            pending += gap
            r = _Resolver(catalog, prefer)
            _marker(m, refs, r)
            label = ("^" + m.group("foot")) if m.group("foot") is not None else m.group("bracket")
            entry = refs.get(label or "")
            if entry is not None and (m.group("foot") is not None or (label or "").isdigit()):
                r.add(entry, "footnote", _entry_keys(entry), strong=True)
            found = [c.doc_id for c in r.out if c.doc_id is not None]
            if found or r.out:
                cites += found
                if not found:
                    cites.append("")  # a marker that resolves to nothing still closes the statement
            else:
                pending += m.group(0)  # prose brackets stay text
            start = m.end()
        rest = line[start:]
        if cites and rest.strip():  # text after the line's last marker group: a statement of its own
            out.append(Statement(pending, tuple(d for d in dict.fromkeys(cites) if d)))
            pending, cites = "", []
        pending += rest
        if pending.strip() or cites:
            out.append(Statement(pending, tuple(d for d in dict.fromkeys(cites) if d)))
    return out
