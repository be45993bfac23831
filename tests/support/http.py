"""HTTP helpers shared by the API, MCP and CLI tests."""

from __future__ import annotations


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
