"""How long a query is, in English-word equivalents, and the eval set's ``length`` tag that follows from it.

``latin_words + cjk_chars / 2``: ``cjk_chars`` counts Han, kana and hangul characters, ``latin_words`` runs of
ASCII letters/digits; ``short`` <= 6, ``medium`` <= 15, ``long`` above. So a purely Chinese query is short up to
12 characters and medium up to 30; a purely English one is short up to 6 words and medium up to 15. Corpus
generators tag their questions with it and the evaluator's strata fall back to it.
"""

from __future__ import annotations

import re

SHORT_MAX = 6.0
MEDIUM_MAX = 15.0

# one pass: an ASCII word matches group 1, a CJK character matches with group 1 empty
_UNITS = re.compile(r"([A-Za-z0-9]+)|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def query_length(text: str) -> float:
    """Length in English-word equivalents: ASCII words + CJK characters / 2."""
    units = _UNITS.findall(text)
    cjk = units.count("")
    return (len(units) - cjk) + cjk / 2.0


def length_bucket(text: str) -> str:
    n = query_length(text)
    return "short" if n <= SHORT_MAX else "medium" if n <= MEDIUM_MAX else "long"
