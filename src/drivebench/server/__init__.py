"""The simulator over the network: the FastAPI app and its routers (``server.api``), the MCP server
(``server.mcp``) and the processes that serve them (``server.process``). Routers only translate HTTP."""
