"""Request and response models at the HTTP boundary (recall API v1)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, StringConstraints

from drivebench.drive.clock import checked_utc

API_VERSION = "1"
MAX_TOP_K = 100
MAX_QUERY_CHARS = 2000

MAX_NAME_CHARS = 256  # user ids, roles, departments
MAX_PATH_CHARS = 4096

QueryText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_QUERY_CHARS)]
NameText = Annotated[str, StringConstraints(max_length=MAX_NAME_CHARS)]
PathText = Annotated[str, StringConstraints(min_length=1, max_length=MAX_PATH_CHARS)]


_DATE_AND_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}")


def _iso_text(value: object) -> object:
    """Only ISO 8601 date-time text (or a datetime from Python callers): pydantic would read ``0`` or ``"-1"``
    as a Unix timestamp (so a number, a numeric string or a bool silently became 1970) and a bare date as
    midnight, none of which is the documented ``format: date-time``."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not _DATE_AND_TIME.match(value.strip()):
        raise ValueError("give an ISO 8601 date and time, e.g. 2026-06-01T12:00:00Z")
    return value


def _in_range(value: datetime) -> datetime:
    """Outside 1900..8999 (or not convertible to UTC): the drive's own 400 (``checked_utc`` raises
    ``InvalidRequest``, which pydantic does not catch), the same answer as an ``as_of`` after the clock, rather
    than a 422 for one bound and a 400 for the other."""
    checked_utc(value, "time")
    return value


BoundedDatetime = Annotated[datetime, BeforeValidator(_iso_text), AfterValidator(_in_range)]


def whole_number(value: object) -> object:
    """A JSON integer, or a number with no fraction (JSON Schema's ``integer`` admits ``10.0``); never a bool or a
    string (pydantic's lax mode would take ``"10"`` and ``true``)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


WholeNumber = Annotated[StrictInt, BeforeValidator(whole_number)]


def not_bool(value: object) -> object:
    if isinstance(value, bool | str):
        raise ValueError("give a number")
    return value


Number = Annotated[float, BeforeValidator(not_bool)]  # a JSON number: pydantic's lax mode took true and "1"


class RecallFilters(BaseModel):
    """Optional filters. An unknown filter key is a 400 (a filter that cannot be applied is never ignored)."""

    model_config = ConfigDict(extra="forbid")
    file_types: list[Annotated[str, StringConstraints(max_length=16)]] | None = Field(
        default=None, max_length=16, description="Keep only these file types (pdf, docx, ...)."
    )
    folder: PathText | None = Field(
        default=None,
        pattern=r"^/",
        description="Keep only documents under this folder path (as the tree stood at as_of). A folder you "
        "may not list answers exactly like a missing one (400).",
    )


class RecallRequest(BaseModel):
    """The vendor's recall request. Unknown fields are ignored and listed in ``warnings``."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={"examples": [{"query": "项目X的技术方案审批人", "user_role": "engineer", "top_k": 10}]},
    )
    query: QueryText = Field(description="The question, 1 to 2,000 characters.")
    top_k: WholeNumber = Field(default=10, ge=1, le=MAX_TOP_K, description="Documents to return, 1 to 100.")
    user_role: NameText | None = Field(
        default=None, description="A role the token's user holds (or, with evaluate-as, any role)."
    )
    user_id: NameText | None = Field(
        default=None, description="Evaluate as this user (evaluate-as scope, or your own id)."
    )
    department: NameText | None = Field(
        default=None, description="With user_role: evaluate as the role in this department."
    )
    as_of: BoundedDatetime | None = Field(
        default=None,
        description="Ask the drive as it stood at this time (ISO 8601), not after its clock (400). A user's "
        "own token gets what it could preview then and still may now; the evaluation token gets what the "
        "named principal could preview then.",
    )
    filters: RecallFilters | None = None


class PrincipalOut(BaseModel):
    user_id: str | None
    roles: list[str]
    department: str | None
    clearance: str
    evaluated_as: bool
    caller: str | None = None


class RecallResultOut(BaseModel):
    rank: int
    doc_id: str
    version_id: str
    name: str
    path: str
    file_type: str
    score: float
    chunk_id: int = Field(
        description="The chunk's id: the index's row for a service token; for a user token a stable number of "
        "its own (the same chunk, the same number) that says nothing about how many chunks there are."
    )
    snippet: str
    part: str
    secret_level: str


class RecallResponse(BaseModel):
    api_version: str = API_VERSION
    query: str
    top_k: int
    as_of: datetime
    principal: PrincipalOut
    results: list[RecallResultOut]
    snapshot: str | None = Field(
        description="Fingerprint of the drive state (documents, versions, grants, index) searched; null for a "
        "user token (it changes with what the user cannot see)."
    )
    policy_version: int | None = Field(
        description="The policy version the request was judged under; null for a user token (it counts every "
        "permission change, hidden ones included)."
    )
    warnings: list[str] = Field(default_factory=list)


class ErrorBody(BaseModel):
    code: str
    message: str
    fields: list[str] = Field(default_factory=list)


class ErrorResponse(BaseModel):
    error: ErrorBody


CitationStyle = Literal["brackets", "ids", "footnotes"]


class AnswerRequest(RecallRequest):
    """The recall request plus how the answer cites its sources."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "examples": [
                {"query": "项目X的技术方案审批人", "user_role": "engineer", "top_k": 10, "citation_style": "brackets"}
            ]
        },
    )
    citation_style: CitationStyle = Field(
        default="brackets",
        description="`brackets`: [file name]; `ids`: [[doc-id]]; `footnotes`: [^n] with a reference list.",
    )


class CitationOut(BaseModel):
    doc_id: str
    version_id: str
    name: str
    marker: str = Field(description="The text that cites this document in the answer, e.g. `[报价单.pdf]`.")


class AnswerResponse(RecallResponse):
    citation_style: CitationStyle
    answer: str = Field(
        description="Extractive answer: sentences of the permitted results, each followed by its marker."
    )
    citations: list[CitationOut]
