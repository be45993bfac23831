"""What every acme generator shares (versions 1, 2 and 3): change it and every version's checksum test says
whether its bytes moved (each version's sources in ``builtin.py`` include this package).

``model`` (plans of documents and versions, seeded random streams, the clock), ``content`` (the scenario's data
files and their templates), ``names`` (name pools), ``organisation`` (departments, people, roles, clearances),
``scenario`` (the state a builder writes into), ``folders`` (the base folder tree), ``grants`` (the grant rules),
``access`` (the ground truth of who may preview what), ``assemble`` (plans to manifest, rendered files) and
``lexical`` (BM25 over the plans' text). What is one version's own stays in its package: version 1's story in
``generator/``, version 2's distractors and questions in ``acme2/``, version 3's world in ``acme3/``.
"""
