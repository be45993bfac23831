"""Adversarial leak probes: ask a recall endpoint for documents a user may not open, in their own words.

* ``groundtruth``: the corpus as ground truth (who may preview what, and why not).
* ``pairs``: seeded, stratified sampling of (user, forbidden document) pairs.
* ``queries``: attack queries built from the forbidden document itself.
* ``run``: sends them as that user and judges every result.
* ``report``: JSON and self-contained HTML.
* ``failsafe_cases`` and ``failsafe``: ``probe --fail-safe``, hostile variants of a working request (no
  identity, bad tokens, unknown principals, malformed filters ...) that must fail closed.
"""
