"""acme version 2: version 1's story plus distractors, and an eval set asked the way people ask.

A small engine (``build``, ``distractors``, ``questions``, ``lexical``) over data files
(``scenario/<lang>.toml``: question templates, descriptions of documents by kind, typos, distractor
wording, rationales). Version 1 (``corpora/generator``) is frozen and only imported.
"""

from drivebench.corpora.acme2.build import build_acme2

__all__ = ["build_acme2"]
