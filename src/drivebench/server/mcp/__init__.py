"""The simulator's MCP server (official ``mcp`` SDK), mounted on the same app at ``/mcp``.

``mount_mcp`` does not import the SDK (it builds the server on the first ``/mcp`` request, ``mount.py``); the
server's names are imported from ``server.py`` on first use, so importing this package stays cheap."""

from typing import TYPE_CHECKING, Any

from drivebench.server.mcp.mount import mount_mcp

if TYPE_CHECKING:
    from drivebench.server.mcp.server import DriveMCPServer, SimTokenVerifier, build_mcp_server

__all__ = ["DriveMCPServer", "SimTokenVerifier", "build_mcp_server", "mount_mcp"]


def __getattr__(name: str) -> Any:
    if name in ("DriveMCPServer", "SimTokenVerifier", "build_mcp_server"):
        from drivebench.server.mcp import server

        return getattr(server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
