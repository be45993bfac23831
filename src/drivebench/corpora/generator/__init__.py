"""Deterministic enterprise corpus generator: ``build_acme`` writes ``acme-zh`` or ``acme-en``.

Modules: ``organisation`` (departments, users), ``folders`` (the tree), ``documents`` (units that write
linked documents; every word from the data in ``scenario/<lang>``, rendered by ``content``), ``versions`` (moves and trash), ``grants``,
``access`` (the ground truth of who may preview what), ``evalset`` (queries), ``build``.
"""

from drivebench.corpora.generator.build import SCALES, build_acme

__all__ = ["SCALES", "build_acme"]
