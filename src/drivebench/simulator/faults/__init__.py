"""Fault profiles: seeded, reproducible damage the evaluator must catch.

``sim.faults`` (a ``FaultSet``) is switched at start (``drivebench serve --fault NAME[,NAME]``), at
runtime (``GET/PUT /_sim/faults`` with the admin token) or in tests (the ``drivebench_faults``
fixture). See ``catalog.FAULT_DEFS`` for the profiles and ``faultset`` for how each one acts.
"""

from drivebench.simulator.faults.catalog import (
    FAULT_DEFS,
    FAULT_NAMES,
    Fault,
    FaultDef,
    FaultSpecError,
    fault_from_json,
    parse_fault_spec,
    parse_fault_specs,
)
from drivebench.simulator.faults.faultset import FaultSet, RequestFault, reingest_file_type, request_key, unit

__all__ = [
    "FAULT_DEFS",
    "FAULT_NAMES",
    "Fault",
    "FaultDef",
    "FaultSet",
    "FaultSpecError",
    "RequestFault",
    "fault_from_json",
    "parse_fault_spec",
    "parse_fault_specs",
    "reingest_file_type",
    "request_key",
    "unit",
]
