"""The simulator's MCP server (official ``mcp`` SDK), mounted on the same app at ``/mcp``."""

from drivebench.server.mcp.server import DriveMCPServer, SimTokenVerifier, build_mcp_server, mount_mcp

__all__ = ["DriveMCPServer", "SimTokenVerifier", "build_mcp_server", "mount_mcp"]
