"""Does an eval set fit a corpus? Checked before a run sends anything, and before a run file is scored.

Every document an eval set names (gold, hops, forbidden, allowed) must be a document of the corpus, and every
gold ``version_id`` a version of its document: an eval set written for another corpus (or another version of
it) would otherwise be scored as misses and judged against documents that do not exist. When it does not fit,
``evalset_misfit`` says which ids are unknown (the first few and how many) and which built-in corpora the eval
set does fit, looking only at built-ins already in the cache (and the seed corpus, built in a second): the
check never builds a large corpus.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from drivebench.corpora import builtin
from drivebench.errors import DrivebenchError
from drivebench.formats.corpus import MANIFEST_NAME, Manifest
from drivebench.formats.evalset import EvalQuery

SHOWN = 5  # unknown ids named in the message; the rest are counted
CHEAP_BUILTINS = ("seed@1",)  # built on demand by the check itself: a second, a few dozen files


class EvalsetMismatchError(DrivebenchError, ValueError):
    """The eval set names documents (or gold versions) the corpus does not have: it was written for another corpus
    or another version of it. ``unknown``: every unknown id, in file order; ``corpus``: the corpus checked
    (``acme-zh@2``); ``fits``: the built-in corpora the eval set does fit (``[]`` when none is known). Raised before
    any query is sent (``drivebench.api.evaluate``, ``eval run``, ``eval score``)."""

    def __init__(self, message: str, *, hint: str, unknown: list[str], corpus: str, fits: list[str]) -> None:
        super().__init__(message, hint=hint)
        self.unknown = unknown
        self.corpus = corpus
        self.fits = fits

    def __str__(self) -> str:
        return f"{self.message} (hint: {self.hint})" if self.hint else self.message


@dataclass(frozen=True)
class CorpusIds:
    """The document ids of a corpus and each one's version ids (read from its manifest)."""

    versions: dict[str, frozenset[str]]

    @classmethod
    def read(cls, corpus_dir: Path) -> CorpusIds:
        # the ids only: the raw JSON, not the validated model (a tenth of the time on acme's manifests)
        data = json.loads((Path(corpus_dir) / MANIFEST_NAME).read_text(encoding="utf-8"))
        return cls(
            {
                str(d["doc_id"]): frozenset(str(v["version_id"]) for v in d.get("versions") or () if "version_id" in v)
                for d in data.get("documents") or ()
            }
        )

    @classmethod
    def from_manifest(cls, manifest: Manifest) -> CorpusIds:
        return cls({d.doc_id: frozenset(v.version_id for v in d.versions) for d in manifest.documents})

    def unknown(self, queries: Iterable[EvalQuery]) -> list[str]:
        """The ids the eval set names that the corpus lacks, in file order, each once; an unknown gold version
        reads ``d0014-v2 (a version of d0014)``."""
        out: dict[str, None] = {}
        for q in queries:
            for g in q.gold:
                known = self.versions.get(g.doc_id)
                if known is None:
                    out[g.doc_id] = None
                elif g.version_id is not None and g.version_id not in known:
                    out[f"{g.version_id} (a version of {g.doc_id})"] = None
            for doc_id in (*(q.hops or ()), *q.forbidden, *(q.allowed or ())):
                if doc_id not in self.versions:
                    out[doc_id] = None
        return list(out)


def cached_builtin_dir(label: str) -> Path | None:
    """The cached build of built-in ``label`` (default seed and scale, the sources as they are now), None when
    it is not built. The directory ``resolve_corpus`` would return, without building it."""
    return builtin.cached_build(label)


def _spelled(label: str) -> str:
    """``seed`` for a built-in with one version, ``acme-zh@2`` otherwise (a bare name means the newest)."""
    name = label.partition("@")[0]
    return name if len(builtin.VERSIONS.get(name, {})) == 1 else label


def fitting_builtins(queries: Sequence[EvalQuery]) -> list[str]:
    """The built-in corpora (``seed``, ``acme-zh@2``) the eval set fits, among those built already or cheap to
    build."""
    fits: list[str] = []
    for label in builtin.builtin_labels():
        path = cached_builtin_dir(label)
        if path is None and label in CHEAP_BUILTINS:
            path = builtin.resolve_corpus(label)
        if path is not None and not CorpusIds.read(path).unknown(queries):
            fits.append(_spelled(label))
    return fits


def evalset_misfit(queries: Sequence[EvalQuery], corpus_dir: Path, corpus_name: str) -> tuple[str, str] | None:
    """None when every id of the eval set is in the corpus; else (the error, the hint)."""
    try:
        check_evalset_fits(queries, corpus_dir, corpus_name)
    except EvalsetMismatchError as exc:
        return exc.message, exc.hint or ""
    return None


def check_evalset_fits(
    queries: Sequence[EvalQuery], corpus_dir: Path, corpus_name: str, manifest: Manifest | None = None
) -> None:
    """Raise ``EvalsetMismatchError`` naming the first unknown ids (and how many more) and the built-in corpora the
    eval set fits, when it names ids ``corpus_dir`` does not have (``manifest``: its corpus.json already read)."""
    ids = CorpusIds.read(corpus_dir) if manifest is None else CorpusIds.from_manifest(manifest)
    unknown = ids.unknown(queries)
    if not unknown:
        return
    version = builtin.corpus_version(corpus_dir) if manifest is None else builtin.manifest_version(manifest)
    label = version or corpus_name
    shown = ", ".join(unknown[:SHOWN]) + (f" and {len(unknown) - SHOWN} more" if len(unknown) > SHOWN else "")
    n = len(unknown)
    message = f"the eval set names {n} id{'s' if n != 1 else ''} that corpus {label} does not have: {shown}"
    fits = fitting_builtins(queries)
    if fits:
        message += f"; this eval set fits {' and '.join(fits)}"
        hint = f"give --corpus {fits[0]} (the corpus the eval set was written for), or an eval set of {label}"
    else:
        hint = f"give the --corpus the eval set was written for, or an eval set of {label}"
    raise EvalsetMismatchError(message, hint=hint, unknown=unknown, corpus=str(label), fits=fits)
