"""The console tests' users and documents, and what the permission engine (not the console) says they may see."""

from __future__ import annotations

from datetime import datetime

from drivebench.simulator.backend import Simulator
from tests.support.decisions import previewable_docs

USER_A, USER_B = "u001", "u004"  # 张伟 (R&D engineer, internal) and 陈静 (finance manager, secret)
DENIED_USER, DENIED_DOC = "u010", "d0009"  # Emily Carter: an explicit deny on d0009 in /rd/platform


def token(sim: Simulator, subject: str) -> str:
    return sim.tokens.for_subject(subject).token


def previewable(sim: Simulator, user_id: str, at: datetime | None = None) -> set[str]:
    """Documents ``user_id`` may preview now, asked of the permission engine directly (not of the console)."""
    return previewable_docs(sim.engine, user_id, at or sim.drive.clock.now())


def forbidden_names(sim: Simulator, user_id: str) -> set[str]:
    """Names of the documents ``user_id`` may not preview that cannot be mistaken for something it may see (a
    name that is part of an allowed document's name or path is left out: its presence would prove nothing)."""
    allowed = previewable(sim, user_id)
    seen = " ".join(f"{d.name} {sim.drive.doc_path(d)}" for d in sim.drive.documents.values() if d.doc_id in allowed)
    return {d.name for d in sim.drive.documents.values() if d.doc_id not in allowed and d.name not in seen}
