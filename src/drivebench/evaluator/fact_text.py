"""Normalising answer facts and answer text so the same fact written two ways compares equal (pure, no I/O).

``normalise(text)`` rewrites, in this order:

1. Unicode NFKC (full-width digits, letters and punctuation -> half-width: ``１２０万元`` -> ``120万元``),
   then case folding.
2. **Dates** -> a delimited token: ``2026-03-05`` / ``2026/3/5`` / ``2026.03.05`` / ``2026年3月5日`` (or
   ``号``) / ``March 5, 2026`` / ``5 March 2026`` / ``05/03/2026`` (day first) -> ``⟦d2026-03-05⟧``;
   the same without a year (``3月5日``, ``March 5``, ``5 March``, ``05/03``, day first) -> ``⟦d03-05⟧``;
   ``2026年3月`` / ``March 2026`` -> ``⟦d2026-03⟧``.
3. **Numbers** that stand alone (not inside a code such as ``TP-2026-004`` or ``v2``) -> their value:
   thousands separators dropped (``1,200,000``), a trailing ``万`` / ``亿`` multiplied out (``120万``),
   leading zeros and a decimal's trailing zeros dropped -> ``⟦n1200000⟧``;
   a percentage keeps its sign: ``15%`` / ``15 %`` / ``15 percent`` / ``百分之15`` -> ``⟦n15⟧%``.
4. **Currency** words and signs are dropped (``元 ¥ ￥ rmb cny $ usd``): amounts compare by value, so
   ``1,200,000元``, ``¥1,200,000``, ``RMB 1,200,000`` and ``120万元`` are one fact. (A dollar and a
   yuan amount of the same value compare equal: the eval sets' facts do not mix currencies.)
5. Whitespace is removed, so ``王 芳`` = ``王芳`` and ``SPCC  冷轧钢板`` = ``spcc冷轧钢板``.

``stated(fact, answer_norm)``: the fact's normal form is a substring of the answer's; a fact holding a
full date also matches the same date written without a year. Delimiters keep ``120`` from matching
``1200`` and ``2026-03-05`` from matching ``2027-03-05``. A fact that normalises to nothing is never stated.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation
from functools import partial

_MONTHS = {
    name: i
    for i, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        1,
    )
    for name in names
}
_MONTH = r"(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_NB = r"(?<![A-Za-z0-9_.-])"  # not glued to a code before (a Chinese character before is fine)

_DATE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<![\d])(?P<y>\d{4})年(?P<m>\d{1,2})月(?P<d>\d{1,2})[日号]?"), "ymd"),
    (re.compile(_NB + r"(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?![\d-])"), "ymd"),
    (re.compile(_NB + r"(?P<d>\d{1,2})/(?P<m>\d{1,2})/(?P<y>\d{4})(?![\d/])"), "ymd"),
    (re.compile(r"\b" + _MONTH + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y>\d{4})\b"), "ymd"),
    (re.compile(r"\b(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+" + _MONTH + r",?\s+(?P<y>\d{4})\b"), "ymd"),
    (re.compile(r"(?<![\d])(?P<y>\d{4})年(?P<m>\d{1,2})月(?![\d])"), "ym"),
    (re.compile(r"\b" + _MONTH + r",?\s+(?P<y>\d{4})\b"), "ym"),
    (re.compile(r"(?<![\d年])(?P<m>\d{1,2})月(?P<d>\d{1,2})[日号]"), "md"),
    (re.compile(r"\b" + _MONTH + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?\b(?![,/]?\s*\d)"), "md"),
    (re.compile(r"\b(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+" + _MONTH + r"\b"), "md"),
    (re.compile(_NB + r"(?P<d>\d{1,2})/(?P<m>\d{1,2})(?![\d/])"), "md"),
)
_NUMBER = re.compile(
    _NB + r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?P<unit>万|亿)?(?![A-Za-z_-])(?!\d)"
    r"(?:\s*(?P<pct>%|percent\b))?"
)
_PERCENT_ZH = re.compile(r"百分之\s*(\d+(?:\.\d+)?)")
_CURRENCY = re.compile(r"人民币|rmb|cny|usd|us\$|[¥￥$]|元")
_SPACE = re.compile(r"\s+")
_FULL_DATE = re.compile(r"⟦d\d{4}-(\d{2}-\d{2})⟧")


def _month(m: re.Match[str]) -> int:
    return _MONTHS[m.group("mon").lower()] if "mon" in m.groupdict() and m.group("mon") else int(m.group("m"))


def _date(m: re.Match[str], kind: str) -> str:
    month = _month(m)
    day = int(m.group("d")) if kind != "ym" else 1
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return m.group(0)
    if kind == "ymd":
        return f"⟦d{int(m.group('y')):04d}-{month:02d}-{day:02d}⟧"
    if kind == "ym":
        return f"⟦d{int(m.group('y')):04d}-{month:02d}⟧"
    return f"⟦d{month:02d}-{day:02d}⟧"


def _number(m: re.Match[str]) -> str:
    try:
        value = Decimal(m.group("num").replace(",", ""))
    except InvalidOperation:  # pragma: no cover - the pattern only matches digits
        return m.group(0)
    if m.group("unit") == "万":
        value *= 10_000
    elif m.group("unit") == "亿":
        value *= 100_000_000
    text = format(value.normalize(), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"⟦n{text}⟧" + ("%" if m.group("pct") else "")


def normalise(text: str) -> str:
    """The comparable form of ``text`` (see the module docstring)."""
    out = unicodedata.normalize("NFKC", text).casefold()
    out = _PERCENT_ZH.sub(r"\1%", out)
    for pattern, kind in _DATE_PATTERNS:
        out = pattern.sub(partial(_date, kind=kind), out)
    out = _NUMBER.sub(_number, out)
    out = _CURRENCY.sub("", out)
    return _SPACE.sub("", out)


def fact_forms(fact: str) -> list[str]:
    """Every normal form that counts as stating ``fact`` (a full date also without its year)."""
    base = normalise(fact)
    if not base:
        return []
    forms = [base]
    yearless = _FULL_DATE.sub(r"⟦d\1⟧", base)
    if yearless != base:
        forms.append(yearless)
    return forms


def stated(fact: str, answer_norm: str) -> bool:
    """Whether ``answer_norm`` (an already ``normalise``-d answer or statement) states ``fact``."""
    return any(form in answer_norm for form in fact_forms(fact))
