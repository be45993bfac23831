"""The HTTP front door: thin FastAPI routers over a ``Simulator``."""

from drivebench.server.api.app import create_app

__all__ = ["create_app"]
