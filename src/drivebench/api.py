"""The Python API: load a simulator, serve it, evaluate a target.

from drivebench.api import load_simulator
sim = load_simulator("seed")
outcome = sim.recall(sim.engine.user_principal("u01"), "项目X的技术方案审批人", top_k=5)
"""

from __future__ import annotations

from drivebench.simulator.loader import load_simulator

__all__ = ["load_simulator"]
