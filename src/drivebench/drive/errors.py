"""Errors the drive raises; the HTTP layer maps each to a status code (``status``)."""


class DriveError(Exception):
    """Base class: ``code`` is a stable machine-readable name, ``status`` the HTTP status."""

    code = "drive-error"
    status = 400


class NotFound(DriveError):
    code = "not-found"
    status = 404


class UnknownPrincipal(DriveError):
    """An unknown user, role or department named in a request (HTTP 400)."""

    code = "unknown-principal"
    status = 400


class Forbidden(DriveError):
    code = "forbidden"
    status = 403


class Conflict(DriveError):
    code = "conflict"
    status = 409


class ResyncRequired(DriveError):
    """A change-feed cursor from another history of the drive (it was reset or reseeded, or restarted without
    a data directory since the cursor was given): nothing after it can be trusted, so the client starts over
    from a full read (HTTP 410, as other drives' change APIs answer)."""

    code = "resync-required"
    status = 410


class InvalidRequest(DriveError):
    code = "invalid-request"
    status = 400


class PayloadTooLarge(DriveError):
    code = "too-large"
    status = 413


class Unprocessable(DriveError):
    """The request is well-formed but its content cannot be used (e.g. a file no extractor can read)."""

    code = "unprocessable"
    status = 422

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        if reason is not None:
            self.code = reason


class Unavailable(DriveError):
    """The drive cannot take writes (a write could not be made durable): answer 503."""

    code = "unavailable"
    status = 503


class PermissionCheckFailed(RuntimeError):
    """The permission fast path and the enforcer disagree, or a check raised: answer 503, never results."""


class IndexUnavailable(DriveError):
    """The external vector index (a Milvus server) did not answer in time or refused the call: a recall answers
    503 and returns nothing (it fails closed); a write already committed to the drive still succeeds and the index
    catches up when it answers again."""

    code = "index-unavailable"
    status = 503
