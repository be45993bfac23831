"""Tokenisation for lexical retrieval: the shared tokenizer of ``formats.tokens`` (the evaluator uses it too)."""

from __future__ import annotations

from drivebench.formats.tokens import tokenize

__all__ = ["tokenize"]
