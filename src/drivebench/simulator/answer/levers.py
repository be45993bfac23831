"""The answer generator's levers: how it cites, how much it says, how many passages it reads.

The article names these on the generation side ("Source Coverage 低: 检查生成提示词是否明确要求引用原文"):
a generator that cites only some of what it quotes lowers Source Coverage while recall stays where it
was (the diagnosis says *generation*); one that cites the wrong passage lowers citation precision.

* ``citation``: ``always`` (every quoted document is cited: today's behaviour), ``some`` or ``some:F``
  (each quoted document is cited with probability ``F``, default 0.5, decided by a hash of the query and
  the document id: deterministic, the same on every run and process) or ``wrong`` (each statement cites
  another recalled document than the one it came from: the next distinct document of the recall, in
  recall order, wrapping round; with a single recalled document there is nothing to cite wrongly, so the
  statement is left uncited rather than cited rightly).
* ``length``: the most sentences the answer states; 0 = the built-in rule (the top passage's best
  sentence plus up to two more scoring at least half of it, and one sentence from each further passage
  scoring that much). With ``N`` > 0 every passage may give up to ``N`` sentences scoring at least half of
  the best one; the answer keeps the top passage's best sentence and then the highest scoring others, ``N``
  in all, printed in recall order.
* ``passages``: how many of the recall's top documents are read (default 3).
"""

from __future__ import annotations

from dataclasses import dataclass

CITATION_MODES: tuple[str, ...] = ("always", "some", "wrong")
DEFAULT_CITE_SHARE = 0.5
DEFAULT_PASSAGES = 3
MAX_PASSAGES = 50
MAX_LENGTH = 50


@dataclass(frozen=True)
class AnswerLevers:
    citation: str = "always"  # always | some | wrong
    cite_share: float = DEFAULT_CITE_SHARE  # with "some": the share of quoted documents cited
    length: int = 0  # 0: the built-in rule; N: at most N sentences
    passages: int = DEFAULT_PASSAGES

    @property
    def is_default(self) -> bool:
        return self.citation == "always" and self.length == 0 and self.passages == DEFAULT_PASSAGES

    @classmethod
    def from_settings(cls, citation: str = "always", length: int = 0, passages: int = DEFAULT_PASSAGES) -> AnswerLevers:
        """Checked levers from the config's ``answer_citation`` / ``answer_length`` / ``answer_passages``;
        a bad value is a ValueError naming what is accepted."""
        mode, share = parse_citation(citation)
        if not isinstance(length, int) or not 0 <= length <= MAX_LENGTH:
            raise ValueError(f"answer_length must be an integer from 0 (built-in rule) to {MAX_LENGTH}, got {length!r}")
        if not isinstance(passages, int) or not 1 <= passages <= MAX_PASSAGES:
            raise ValueError(f"answer_passages must be an integer from 1 to {MAX_PASSAGES}, got {passages!r}")
        return cls(mode, share, length, passages)


def levers_of(config: object) -> AnswerLevers:
    """The levers a ``SimConfig`` (its ``answer_citation`` / ``answer_length`` / ``answer_passages``) sets."""
    return AnswerLevers.from_settings(
        str(getattr(config, "answer_citation", "always")),
        int(getattr(config, "answer_length", 0)),
        int(getattr(config, "answer_passages", DEFAULT_PASSAGES)),
    )


def parse_citation(spec: str) -> tuple[str, float]:
    """``"always"`` / ``"some"`` / ``"some:0.3"`` / ``"wrong"`` -> ``(mode, share)``; ValueError when bad."""
    text = str(spec).strip().lower()
    mode, sep, rest = text.partition(":")
    hint = "use always, some, some:F (0 <= F <= 1) or wrong"
    if mode not in CITATION_MODES or (sep and mode != "some"):
        raise ValueError(f"unknown answer citation {spec!r}: {hint}")
    if not sep:
        return mode, DEFAULT_CITE_SHARE if mode == "some" else 1.0
    try:
        share = float(rest)
    except ValueError:
        raise ValueError(f"bad share in answer citation {spec!r}: {hint}") from None
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"bad share in answer citation {spec!r}: {hint}")
    return mode, share
