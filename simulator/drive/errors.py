"""Errors the drive raises; the HTTP layer maps each to a status code."""


class DriveError(Exception):
    """Base class: ``code`` is a stable machine-readable name."""

    code = "drive-error"


class NotFound(DriveError):
    code = "not-found"


class UnknownPrincipal(DriveError):
    """An unknown user, role or department named in a request (HTTP 400)."""

    code = "unknown-principal"


class Forbidden(DriveError):
    code = "forbidden"


class Conflict(DriveError):
    code = "conflict"


class InvalidRequest(DriveError):
    code = "invalid-request"
