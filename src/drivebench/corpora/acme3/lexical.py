"""An independent lexical check: jieba words and bm25s over every live document's head text, the whole drive
(no permission filter, not the simulator's tokenizer). The generator rejects chains whose later hop this
finds from the question alone, and keeps permission questions only where it ranks the forbidden document
near the top."""

from __future__ import annotations

import re
from collections.abc import Callable

import jieba

from drivebench.corpora.common.lexical import TextIndex
from drivebench.corpora.common.model import DocPlan

_WORD = re.compile(r"\w")
jieba.setLogLevel(60)


def words(text: str) -> list[str]:
    """jieba's search-mode words, lower-cased, without spaces and punctuation."""
    return [t.lower() for t in jieba.lcut_for_search(text) if _WORD.search(t)]


def whole_drive_bm25(docs: list[DocPlan], tokenizer: Callable[[str], list[str]] = words) -> TextIndex:
    """BM25 over every live document's head text, the whole drive (jieba words unless told otherwise)."""
    return TextIndex(docs, tokenizer)
