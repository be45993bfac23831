"""Point-in-time helpers shared by the security and index tests: the query whose answer a revoked grant changes,
a grant that lives for one day, and a random history of changes to a drive (hypothesis)."""

from __future__ import annotations

from datetime import datetime, timedelta

from hypothesis import strategies as st

from drivebench.drive.errors import DriveError
from drivebench.drive.model import GrantRec
from drivebench.drive.state import Drive
from drivebench.simulator.backend import Simulator

Q = "项目X的技术方案审批人"
ACTS = (["preview"], ["list"], ["download"], ["edit"])


def revoke_after_a_day(sim: Simulator) -> str:
    """u012 previews /projects for one day through a grant that is then revoked; returns an instant inside."""
    sim.drive.set_clearance("u012", 1)  # internal, so the grant is the only thing in the way
    sim.drive.clock.advance(timedelta(days=1))
    t_add = sim.drive.clock.now()
    folder = sim.drive.folder_by_path("/projects").folder_id
    sim.drive.add_grant(GrantRec("g-temp", "user:u012", ["preview", "list"], "allow", folder_id=folder))
    sim.drive.clock.advance(timedelta(days=1))
    sim.drive.remove_grant("g-temp")
    sim.drive.clock.advance(timedelta(hours=1))
    return (t_add + timedelta(hours=12)).isoformat()


def history(drive: Drive, data: st.DataObject) -> list[datetime]:
    """Apply 1-12 random changes, the clock moving 0-5 hours before each; returns the instants seen."""
    instants = [drive.clock.now()]
    folders = sorted(drive.folders)
    docs = sorted(drive.documents)
    subjects = [f"user:{u}" for u in sorted(drive.users)] + [f"dept:{d}" for d in sorted(drive.departments)]
    subjects += [f"role:{r}" for r in sorted(drive.roles)] + ["everyone"]
    for i in range(data.draw(st.integers(1, 12), label="changes")):
        drive.clock.advance(timedelta(minutes=data.draw(st.integers(0, 300))))
        op = data.draw(st.sampled_from(["grant", "grant", "revoke", "move-folder", "move-doc", "trash"]))
        try:
            if op == "grant":
                minutes = data.draw(st.one_of(st.none(), st.integers(1, 600)))
                until = None if minutes is None else drive.clock.now() + timedelta(minutes=minutes)
                on_doc = data.draw(st.booleans())
                drive.add_grant(
                    GrantRec(
                        f"h{i}",
                        data.draw(st.sampled_from(subjects)),
                        data.draw(st.sampled_from(ACTS)),
                        data.draw(st.sampled_from(["allow", "allow", "allow", "deny"])),
                        folder_id=None if on_doc else data.draw(st.sampled_from(folders)),
                        doc_id=data.draw(st.sampled_from(docs)) if on_doc else None,
                        valid_until=until,
                    )
                )
            elif op == "revoke" and drive.grants:
                drive.remove_grant(data.draw(st.sampled_from(sorted(drive.grants))))
            elif op == "move-folder":
                drive.move_folder(data.draw(st.sampled_from(folders)), data.draw(st.sampled_from(folders)))
            elif op == "move-doc":
                drive.move_document(data.draw(st.sampled_from(docs)), data.draw(st.sampled_from(folders)))
            elif op == "trash":
                doc_id = data.draw(st.sampled_from(docs))
                (drive.untrash if drive.documents[doc_id].trashed_at else drive.trash)(doc_id)
        except DriveError:
            pass  # a change the drive refuses (a cycle, the root, a name clash) changes nothing
        instants.append(drive.clock.now())
    return instants
