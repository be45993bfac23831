"""Tokenisation of text into terms: jieba for Chinese runs, lower-cased words for the rest.

Shared by lexical retrieval (``search``) and the evaluator (which may not import ``search``: its under-fill
metric asks which documents share a term with a query, in the terms BM25 matches on)."""

from __future__ import annotations

import logging
import os
import re
import tempfile
from functools import cache
from typing import Any

_RUN = re.compile(r"[\u4e00-\u9fff]+|[A-Za-z0-9][A-Za-z0-9_.\-]*")


@cache
def _jieba() -> Any:  # the jieba module (untyped), configured once
    import jieba

    jieba.setLogLevel(logging.CRITICAL)
    jieba.dt.tmp_dir = os.environ.get("DRIVEBENCH_CACHE", tempfile.gettempdir())
    jieba.initialize()
    return jieba


def tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    for run in _RUN.findall(text):
        if "\u4e00" <= run[0] <= "\u9fff":
            tokens.extend(t for t in _jieba().lcut(run) if t.strip())
        else:
            word = run.lower().strip(".-")
            if word:
                tokens.append(word)
    return tokens
