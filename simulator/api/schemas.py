"""Request and response models at the HTTP boundary (recall API v1)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StringConstraints

API_VERSION = "1"
MAX_TOP_K = 100
MAX_QUERY_CHARS = 2000

QueryText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_QUERY_CHARS)]


class RecallFilters(BaseModel):
    """Optional filters. An unknown filter key is a 400 (a filter that cannot be applied is never ignored)."""

    model_config = ConfigDict(extra="forbid")
    file_types: list[str] | None = Field(default=None, description="Keep only these file types (pdf, docx, ...).")
    folder: str | None = Field(default=None, description="Keep only documents under this folder path.")


class RecallRequest(BaseModel):
    """The vendor's recall request. Unknown fields are ignored and listed in ``warnings``."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={"examples": [{"query": "项目X的技术方案审批人", "user_role": "engineer", "top_k": 10}]},
    )
    query: QueryText = Field(description="The question, 1 to 2,000 characters.")
    top_k: StrictInt = Field(default=10, ge=1, le=MAX_TOP_K, description="Documents to return, 1 to 100.")
    user_role: str | None = Field(
        default=None, description="A role the token's user holds (or, with evaluate-as, any role)."
    )
    user_id: str | None = Field(default=None, description="Evaluate as this user (evaluate-as scope, or your own id).")
    department: str | None = Field(default=None, description="With user_role: evaluate as the role in this department.")
    as_of: datetime | None = Field(default=None, description="Ask the drive as it stood at this time (ISO 8601).")
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
    chunk_id: int
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
    snapshot: str = Field(description="Fingerprint of the drive state (documents, versions, grants, index) searched.")
    policy_version: int
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
