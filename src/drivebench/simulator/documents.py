"""One document as a caller may read it as of an instant, for the MCP server's ``get_document`` and
``list_versions`` tools and its ``drive://documents/{id}`` resource (``server/mcp/server.py`` translates).

Who asks is resolved as for recall (``recall.principal_of``); the document is looked up under the point-in-time
rule (``pointintime.document_as_of``): one the principal may not preview as of then answers exactly like an
unknown one (404), and a permission check that cannot be made fails closed (503)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from drivebench.drive.errors import InvalidRequest, NotFound, PermissionCheckFailed
from drivebench.drive.permissions import pointintime
from drivebench.extract import ExtractionError, extract
from drivebench.simulator.recall import RecallHost, RecallQuery, principal_of

if TYPE_CHECKING:
    from drivebench.drive.model import DocumentRec
    from drivebench.drive.tokens import TokenInfo
    from drivebench.simulator.config import SimConfig


class DocumentHost(RecallHost, Protocol):
    """What reading a document reads: what recall reads, plus the extraction configuration."""

    config: SimConfig


def resolve_document(
    host: DocumentHost, token: TokenInfo, doc_id: str, who: RecallQuery
) -> tuple[DocumentRec, datetime, datetime | None]:
    """(document, instant, instant for names/paths: None for now) for ``who`` (its principal fields and
    ``as_of``; the query text is not read)."""
    principal = principal_of(host, token, who)
    now = host.drive.clock.now()
    at = pointintime.resolve_as_of(host.policies, who.as_of)
    try:
        doc = pointintime.document_as_of(host, principal, doc_id, at, now)
    except NotFound:
        raise
    except Exception as exc:  # fail closed
        raise PermissionCheckFailed(f"permission check failed: {exc}") from exc
    return doc, at, (None if who.as_of is None else at)


def document_text(
    host: DocumentHost, token: TokenInfo, doc_id: str, who: RecallQuery, version_id: str | None, max_chars: int
) -> dict[str, Any]:
    """The extracted text (at most ``max_chars`` characters) of the version current at ``who.as_of``, or of
    ``version_id`` when it existed then."""
    doc, at, when = resolve_document(host, token, doc_id, who)
    if version_id is None:
        version = doc.version_at(at)
    else:
        version = next((v for v in doc.versions if v.version_id == version_id and v.created_at <= at), None)
    if version is None:
        raise NotFound(f"document {doc_id} has no version {version_id or 'at that time'}")
    config = host.faults.extract_config(host.config.extract)
    try:
        extraction = extract(host.drive.blob(version.blob), doc.name, config)
        text, parts = extraction.text, [p.label for p in extraction.parts]
    except ExtractionError as exc:
        raise InvalidRequest(f"document {doc_id} cannot be extracted ({exc.reason})") from None
    return {
        "doc_id": doc.doc_id,
        "version_id": version.version_id,
        "version": version.version,
        "name": doc.placement_at(when)[1],
        "path": host.drive.doc_path_at(doc, when),
        "file_type": doc.file_type,
        "title": doc.title,
        "created_at": version.created_at.isoformat(),
        "parts": parts,
        "text": text[:max_chars],
        "truncated": len(text) > max_chars,
    }


def document_versions(host: DocumentHost, token: TokenInfo, doc_id: str, who: RecallQuery) -> dict[str, Any]:
    """The versions of the document that existed at ``who.as_of``, the one current then marked."""
    doc, at, when = resolve_document(host, token, doc_id, who)
    current = doc.version_at(at)
    rows = [
        {
            "version_id": v.version_id,
            "version": v.version,
            "created_at": v.created_at.isoformat(),
            "author": v.author,
            "size": v.size,
            "note": v.note,
            "restored_from": v.restored_from,
            "current": current is not None and v.version_id == current.version_id,
        }
        for v in doc.versions
        if v.created_at <= at
    ]
    name, path = host.drive.doc_name_path_at(doc, when)
    return {"doc_id": doc.doc_id, "name": name, "path": path, "versions": rows}
