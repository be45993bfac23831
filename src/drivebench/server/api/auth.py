"""Bearer-token authentication: the principal comes from the token, never from the body alone."""

from __future__ import annotations

from fastapi import Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from drivebench.drive.tokens import TokenInfo

bearer = HTTPBearer(auto_error=False, description="A corpus user's token, the evaluation token or the admin token.")


class Unauthorized(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)


class NotAdmin(Exception):
    pass


def current_token(request: Request, credentials: HTTPAuthorizationCredentials | None) -> TokenInfo:
    if credentials is None or credentials.scheme.lower() != "bearer" or not credentials.credentials:
        raise Unauthorized("missing bearer token: send Authorization: Bearer <token>")
    info = request.app.state.sim.tokens.resolve(credentials.credentials)
    if info is None:
        raise Unauthorized("invalid bearer token")
    return info
