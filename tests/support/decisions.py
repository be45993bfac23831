"""Per-document permission decisions for tests, spelled with the engine's kept verbs.

``enforce_doc`` is ``PermissionEngine.enforce`` on ``doc_obj(doc_id)`` with the document's secret level as
the engine's drive records it (the reference decision); ``previewable_docs`` reads the fast path
(``allowed_mask`` with ``preview``) as a set of document ids.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np

from drivebench.drive.permissions import PermissionEngine, Principal
from drivebench.drive.permissions.compiler import doc_obj


def enforce_doc(engine: PermissionEngine, principal: Principal, doc_id: str, act: str, at: datetime) -> bool:
    """Casbin's decision on one document, at the document's secret level."""
    return engine.enforce(principal, doc_obj(doc_id), act, at, engine.drive.doc(doc_id).secret_level)


def user_may_preview(engine: PermissionEngine, user_id: str, doc_id: str, at: datetime) -> bool:
    """``enforce_doc`` for ``user_id`` and ``preview``."""
    return enforce_doc(engine, engine.user_principal(user_id), doc_id, "preview", at)


def previewable_docs(engine: PermissionEngine, user_id: str, at: datetime) -> set[str]:
    """The documents ``user_id`` may preview at ``at``, from the fast path."""
    mask = engine.allowed_mask(engine.user_principal(user_id), "preview", at)
    return {engine.doc_ids[i] for i in np.flatnonzero(mask)}
