"""Scenario units: each writes a group of linked documents (and the chains between them) into the scenario.

``plan_units(n)`` decides which units make up a corpus of exactly ``n`` documents: the company
policies first, then the six business units in a fixed cycle while they fit, then personal notes.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime

from drivebench.corpora.common.scenario import Scenario
from drivebench.corpora.generator.documents.base import UnitOutput
from drivebench.corpora.generator.documents.business import finance_unit, marketing_unit
from drivebench.corpora.generator.documents.design import design_unit
from drivebench.corpora.generator.documents.people import hr_unit, legal_unit
from drivebench.corpora.generator.documents.policy import note_unit, policy_unit
from drivebench.corpora.generator.documents.project import project_unit

Unit = Callable[[Scenario, random.Random, datetime], UnitOutput]
# name -> (builder, number of documents it writes)
UNITS: dict[str, tuple[Unit, int]] = {
    "policy": (policy_unit, 4),
    "project": (project_unit, 8),
    "design": (design_unit, 8),
    "marketing": (marketing_unit, 5),
    "hr": (hr_unit, 5),
    "finance": (finance_unit, 4),
    "legal": (legal_unit, 4),
    "note": (note_unit, 1),
}
CYCLE: tuple[str, ...] = ("project", "design", "marketing", "hr", "finance", "legal")


def plan_units(n_docs: int) -> list[str]:
    """Unit names, in build order, whose document counts add up to exactly ``n_docs``."""
    plan: list[str] = []
    left = n_docs
    if left >= UNITS["policy"][1]:
        plan.append("policy")
        left -= UNITS["policy"][1]
    i = 0
    while UNITS[CYCLE[i % len(CYCLE)]][1] <= left:
        unit = CYCLE[i % len(CYCLE)]
        plan.append(unit)
        left -= UNITS[unit][1]
        i += 1
    plan += ["note"] * left
    return plan
