"""Metric functions, one metric per module (pure functions over plain lists/dicts of ids).

Each module documents its formula, its edge cases and the reference implementation it equals.
The conventions they share are in ``drivebench.evaluator.metrics._common``.
"""
