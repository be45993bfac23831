"""The HTTP front door: thin FastAPI routers over a ``Simulator``."""

from drivebench.simulator.api.app import create_app

__all__ = ["create_app"]
