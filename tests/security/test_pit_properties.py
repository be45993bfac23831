"""Property: point-in-time recall over random grant histories never widens access and never under-fills.

A random organisation (``tests.support.perm_org``) lives through a random history on the simulated
clock: grants added (some expiring), grants revoked, folders and documents moved, documents trashed and
restored. Then, for a random ``as_of`` T not after the clock, for every user:

* the user's own token gets exactly the documents it could preview at T **and** may preview now (that
  existed, had a version and were not in the trash at T), up to ``top_k``, never fewer;
* the evaluation token, naming that user, gets exactly what the user could preview at T.

The oracle below decides from the drive's records (current and removed grants with their lifetimes, the
folder tree at T), without Casbin, the compiler or the point-in-time module.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from drivebench.drive.model import GrantRec
from drivebench.drive.permissions import Principal
from drivebench.drive.state import Drive
from tests.support.perm_org import IMPLIES, US, WORDS, _subject_matches, _valid, build_sim, examples, orgs
from tests.support.pit import history


# ---------------------------------------------------------------------------- the oracle
def _in_drive(lo: datetime | None, hi: datetime | None, t: datetime) -> bool:
    return (lo is None or lo <= t) and (hi is None or t < hi)


def _reaches_at(drive: Drive, grant: GrantRec, doc_id: str, t: datetime) -> bool:
    if grant.doc_id is not None:
        return grant.doc_id == doc_id
    node: str | None = drive.documents[doc_id].placement_at(t)[0]
    seen: set[str] = set()
    while node is not None and node not in seen:
        seen.add(node)
        if node == grant.folder_id:
            return True
        folder = drive.folders[node]
        if folder.break_inheritance:
            return False
        node = folder.parent_at(t)
    return False


def ref_preview_at(drive: Drive, p: Principal, doc_id: str, t: datetime) -> bool:
    """May ``p`` preview ``doc_id`` at ``t``, by the grants in the drive at ``t`` and the tree at ``t``?"""
    level = drive.documents[doc_id].secret_level
    allow = deny = False
    for g in [*drive.grants.values(), *drive.removed_grants]:
        if not _in_drive(g.created_at, g.removed_at, t) or not _valid(g.valid_from, g.valid_until, t):
            continue
        if not _reaches_at(drive, g, doc_id, t) or not _subject_matches(drive, p, g.subject, t):
            continue
        if g.effect == "allow" and any("preview" in IMPLIES[a] for a in g.actions):
            allow = True
        if g.effect == "deny" and any(a in IMPLIES["preview"] for a in g.actions):
            deny = True
    return allow and not deny and p.clearance >= level


def existed_at(drive: Drive, doc_id: str, t: datetime) -> bool:
    doc = drive.documents[doc_id]
    return doc.version_at(t) is not None and not doc.trashed_at_time(t)


@examples(120)
@given(org=orgs(), data=st.data())
def test_point_in_time_recall_never_widens_access_and_never_under_fills(org, data: st.DataObject) -> None:
    sim = build_sim(org)
    drive = sim.drive
    instants = history(drive, data)
    now = drive.clock.now()
    candidates = sorted({t + d for t in instants for d in (-US, timedelta(0)) if t + d <= now})
    at = data.draw(st.sampled_from(candidates), label="as_of")
    query = " ".join(data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)))
    n_docs = len(drive.documents)
    for user in sorted(drive.users):
        me = sim.engine.user_principal(user)
        then = {d for d in drive.documents if existed_at(drive, d, at) and ref_preview_at(drive, me, d, at)}
        still = {d for d in then if ref_preview_at(drive, me, d, now)}
        for who, expected in (
            (sim.principal_for(sim.tokens.for_subject(user)), still),
            (sim.principal_for(sim.tokens.for_subject("svc:evaluator"), user_id=user), then),
        ):
            top_k = data.draw(st.integers(1, n_docs + 1), label="top_k")
            got = [h.doc_id for h in sim.recall(who, query, top_k, as_of=at).hits]
            assert set(got) <= expected, (user, who.evaluated_as, at, sorted(set(got) - expected))
            assert len(got) == min(top_k, len(expected)), (user, who.evaluated_as, top_k, got, sorted(expected))
            full = {h.doc_id for h in sim.recall(who, query, n_docs + 1, as_of=at).hits}
            assert full == expected, (user, who.evaluated_as, at, sorted(full ^ expected))
