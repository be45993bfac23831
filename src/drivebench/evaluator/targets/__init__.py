"""Targets the evaluator can run an eval set against: anything with an async ``recall``."""

from drivebench.evaluator.targets.http import HttpTarget, ResponseMapping
from drivebench.formats.target import Target, TargetResponse

__all__ = ["HttpTarget", "ResponseMapping", "Target", "TargetResponse"]
