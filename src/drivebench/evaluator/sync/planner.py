"""Concrete changes of each class, chosen from the drive's own state (``DriveView``): which grant to remove,
which user to move, which document to trash, and who should be affected. The prediction only picks what to
probe; who was affected is read back from the drive after the change (``/access`` before and after).

Each planner avoids documents an earlier change of the run used (``used``), so changes do not mask each
other, and returns None when the drive offers no such change (the class is then "not measured").

Where the drive holds no natural case (no user's own grant to remove, say), the planner plants one: a setup
change that the target must reflect before the measured change is made. A setup ends by touching the
document (trash, untrash: its modification time moves, nothing else) so that even a crawler that trusts
modification times indexes the planted ACL; the measured change is then the only thing it can miss."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from drivebench.evaluator.sync.drive_client import DriveClient
from drivebench.evaluator.sync.scenario import Kind
from drivebench.evaluator.sync.view import DriveView, under
from drivebench.formats.corpus import SECRET_LEVELS

MAX_USERS = 3  # principals probed per change
MAX_DOCS = 2  # documents probed per change
TEXT_TYPES = ("md", "txt")


@dataclass
class Plan:
    cls: str
    kind: Kind
    docs: list[str]
    users: list[str]
    detail: str
    apply: Callable[[DriveClient], dict[str, Any]]
    setup: Callable[[DriveClient], None] | None = None  # a change to sync BEFORE the measured one
    new_text: str | None = None  # content changes: a sentence only the new text holds
    setup_docs: list[str] = field(default_factory=list)


def _op(method: str, *args: Any, **kw: Any) -> Callable[[DriveClient], dict[str, Any]]:
    """A drive call bound to its arguments now (a plan is applied later)."""

    def apply(drive: DriveClient) -> dict[str, Any]:
        out = getattr(drive, method)(*args, **kw)
        return out if isinstance(out, dict) else {}

    return apply


def _user_subject(user_id: str) -> dict[str, str]:
    return {"kind": "user", "id": user_id}


def _candidates(view: DriveView, used: set[str]) -> list[str]:
    return [d for d in sorted(view.files) if d not in used and view.access.get(d)]


def _only_via(view: DriveView, user: str, doc: str, grant: dict[str, Any]) -> bool:
    """The grant is the user's only way to the document (so removing it should take the document away)."""
    return [g["grant_id"] for g in view.allowing(user, doc)] == [grant["grant_id"]]


def _grant_removal(view: DriveView, used: set[str], *, on_ancestor: bool, user_subjects: bool) -> Plan | None:
    for g in sorted(view.grants, key=lambda g: g["grant_id"]):
        if (
            g["effect"] != "allow"
            or g["valid_until"] is not None
            or not {"preview", "download", "edit"} & set(g["actions"])
        ):
            continue
        if user_subjects != g["subject"].startswith("user:"):
            continue
        if on_ancestor and g["doc_id"] is not None:
            continue
        pairs: list[tuple[str, str]] = []
        for d in _candidates(view, used):
            if not view.reaches(g, d) or (on_ancestor and view.files[d]["folder"] == g["path"]):
                continue
            pairs += [(u, d) for u in sorted(view.access[d]) if u in view.users and _only_via(view, u, d, g)]
        docs = list(dict.fromkeys(d for _, d in pairs))[:MAX_DOCS]
        users = list(dict.fromkeys(u for u, d in pairs if d in docs))[:MAX_USERS]
        if docs and users:
            gid = g["grant_id"]
            return Plan(
                "parent-acl-changed" if on_ancestor else "grant-removed",
                "revoke",
                docs,
                users,
                f"remove grant {gid} ({g['subject']} {'/'.join(g['actions'])} on {g['path']})",
                _op("remove_grant", gid),
            )
    return None


def grant_removed(view: DriveView, used: set[str], run: str, i: int) -> Plan | None:
    """A user's own grant removed: one the drive holds when it is the user's only way to a document, else one
    planted on a document the user cannot see (a setup change the target must sync first)."""
    natural = _grant_removal(view, used, on_ancestor=False, user_subjects=True)
    if natural is not None:
        return natural
    pair = _unseen_pair(view, used)
    if pair is None:
        return None
    u, d = pair
    path, gid = view.path_of(d), f"g-sync-{run}-{i}"

    def setup(drive: DriveClient) -> None:
        drive.add_grant(path, _user_subject(u), ["preview"], grant_id=gid)
        drive.touch(d)

    return Plan(
        "grant-removed",
        "revoke",
        [d],
        [u],
        f"remove grant {gid} (user {u} preview on {path}; planted and synced first)",
        _op("remove_grant", gid),
        setup=setup,
    )


def parent_acl_changed(view: DriveView, used: set[str], run: str, i: int) -> Plan | None:
    """A grant on an ancestor of the document's folder removed. When the drive has none that is someone's only
    way to a document, one is planted first (a setup change the target must sync): a user's grant on the
    parent of a document's folder."""
    natural = _grant_removal(view, used, on_ancestor=True, user_subjects=False) or _grant_removal(
        view, used, on_ancestor=True, user_subjects=True
    )
    if natural is not None:
        return natural
    pair = _unseen_pair(view, used, nested=True)
    if pair is None:
        return None
    u, d = pair
    folder = view.files[d]["folder"]
    parent = _parent(folder)
    gid = f"g-sync-{run}-{i}"

    def setup(drive: DriveClient) -> None:
        drive.add_grant(parent, _user_subject(u), ["preview"], grant_id=gid)
        drive.touch(d)

    return Plan(
        "parent-acl-changed",
        "revoke",
        [d],
        [u],
        f"remove grant {gid} (user {u} preview on {parent}, the parent of {folder}; planted and synced first)",
        _op("remove_grant", gid),
        setup=setup,
    )


def _group_only_pair(view: DriveView, used: set[str]) -> tuple[str, str, dict[str, Any]] | None:
    """(user, document, a grant) where the user sees the document only through groups' grants (department,
    role, project): a deny on the user alone takes it away."""
    for d in _candidates(view, used):
        for u in sorted(view.access[d]):
            if u not in view.users:
                continue
            via = view.allowing(u, d)
            if via and all(not g["subject"].startswith("user:") for g in via):
                return u, d, via[0]
    return None


def deny_added(view: DriveView, used: set[str], run: str, i: int) -> Plan | None:
    return _deny_alone(view, used, "deny-added")


def answer_cache(view: DriveView, used: set[str], run: str, i: int) -> Plan | None:
    """The answer endpoint after a revocation: the user is answered from the document (asked through the
    answer endpoint, so a cache would hold the answer), then denied it alone (an explicit deny, as
    ``deny-added``); the answer must stop citing it, stating its facts or returning it."""
    return _deny_alone(view, used, "answer-cache", answered_first=True)


def _deny_alone(view: DriveView, used: set[str], kind: str, *, answered_first: bool = False) -> Plan | None:
    """An explicit deny to one user on a document a group grant lets them preview."""
    found = _group_only_pair(view, used)
    if found is None:
        return None
    u, d, via = found
    said = f"deny preview to user {u} on {view.path_of(d)} (allowed through {via['subject']})"
    if answered_first:
        said += f", after {u} was answered from it"
    return Plan(
        kind, "revoke", [d], [u], said, _op("add_grant", view.path_of(d), _user_subject(u), ["preview"], effect="deny")
    )


def member_removed(view: DriveView, used: set[str], run: str, i: int) -> Plan | None:
    for d in _candidates(view, used):
        for u in sorted(view.access[d]):
            if u not in view.users:
                continue
            via = view.allowing(u, d)
            if not via or not all(g["subject"].startswith("dept:") for g in via):
                continue
            granted = {g["subject"][5:] for g in via}
            mine = view.departments_of(u)
            # a department that is not the user's or above it, and below none of the granted ones. (Sharing an
            # ancestor with the user's department is fine: in a company with one root department every
            # department does, and excluding those left no destination at all on acme-zh.)
            others = [x for x in sorted(view.departments) if x not in mine and not (granted & _line(view, x))]
            if not others:
                continue
            dest, was = others[0], view.users[u]["department"]
            return Plan(
                "member-removed",
                "revoke",
                [d],
                [u],
                f"user {u} leaves department {was} for {dest}",
                _op("patch_user", u, department=dest),
            )
    return None


def _line(view: DriveView, dept: str) -> set[str]:
    out: set[str] = set()
    x: str | None = dept
    while x is not None and x not in out:
        out.add(x)
        x = (view.departments.get(x) or {}).get("parent")
    return out


def inheritance_broken(view: DriveView, used: set[str], run: str, i: int) -> Plan | None:
    for path, folder in sorted(view.folders.items()):
        if path == "/" or folder["break_inheritance"]:
            continue
        docs = [d for d in view.docs_in(path, direct=True) if d not in used and view.access.get(d)]
        pairs = []
        for d in docs:
            for u in sorted(view.access[d]):
                via = view.allowing(u, d) if u in view.users else []
                if via and all(g["doc_id"] is None and g["path"] != path and under(path, g["path"]) for g in via):
                    pairs.append((u, d))
        if pairs:
            ds = list(dict.fromkeys(d for _, d in pairs))[:MAX_DOCS]
            us = list(dict.fromkeys(u for u, d in pairs if d in ds))[:MAX_USERS]
            return Plan(
                "inheritance-broken",
                "revoke",
                ds,
                us,
                f"folder {path} stops inheriting from its parent",
                _op("set_inheritance", path, True),
            )
    return None


def moved_out(view: DriveView, used: set[str], run: str, i: int) -> Plan | None:
    for d in _candidates(view, used):
        for u in sorted(view.access[d]):
            if u not in view.users or any(g["doc_id"] == d for g in view.allowing(u, d)):
                continue
            for path in sorted(view.folders):
                here = view.docs_in(path, direct=True)
                if (
                    path == view.files[d]["folder"]
                    or not here
                    or any(view.sees(u, x) for x in view.docs_in(path))
                    or not view.access.get(here[0])
                ):
                    continue
                return Plan(
                    "moved-out",
                    "revoke",
                    [d],
                    [u],
                    f"move {view.path_of(d)} into {path} (where {u} sees nothing)",
                    _op("move", d, path),
                )
    return None


def trashed(view: DriveView, used: set[str], run: str, i: int) -> Plan | None:
    for d in _candidates(view, used):
        users = [u for u in sorted(view.access[d]) if u in view.users][:MAX_USERS]
        if users:
            return Plan("trashed", "revoke", [d], users, f"trash {view.path_of(d)}", _op("trash", d))
    return None


def purged(view: DriveView, used: set[str], run: str, i: int) -> Plan | None:
    """Permanent deletion straight from the folder: this drive needs no trash first, and trashing first would
    let a target that handles only the trash pass without ever seeing the purge."""
    for d in _candidates(view, used):
        users = [u for u in sorted(view.access[d]) if u in view.users][:MAX_USERS]
        if users:
            return Plan("purged", "revoke", [d], users, f"purge {view.path_of(d)}", _op("purge", d))
    return None


def _parent(folder: str) -> str:
    return folder.rsplit("/", 1)[0] or "/"


def _reached_from_parent(view: DriveView, d: str) -> bool:
    """The document's folder is below another folder than the root and inherits from its parent."""
    folder = view.files[d]["folder"]
    probe = {"doc_id": None, "path": _parent(folder)}
    return folder.count("/") >= 2 and view.reaches(probe, d)


def _unseen_pair(view: DriveView, used: set[str], nested: bool = False) -> tuple[str, str] | None:
    """A (user, document) the user may not preview now but could with a grant (clearance suffices); with
    ``nested``, a document a grant on its folder's parent (not the root) reaches."""
    for d in sorted(view.files):
        if d in used or (nested and not _reached_from_parent(view, d)):
            continue
        for u in sorted(view.users):
            if not view.sees(u, d) and view.clearance(u) >= view.level(d):
                return u, d
    return None


def grant_expired(view: DriveView, used: set[str], run: str, i: int) -> Plan | None:
    pair = _unseen_pair(view, used)
    if pair is None:
        return None
    u, d = pair
    path = view.path_of(d)
    ends = datetime.fromisoformat(view.now) + timedelta(minutes=10)

    def setup(drive: DriveClient) -> None:
        drive.add_grant(path, _user_subject(u), ["preview"], valid_until=ends.isoformat())
        drive.touch(d)

    return Plan(
        "grant-expired",
        "revoke",
        [d],
        [u],
        f"a grant of preview to {u} on {path} ends at {ends.isoformat()}; the drive's clock passes it",
        lambda drive: {"now": drive.advance_clock(11).isoformat()},
        setup=setup,
    )


def clearance_lowered(view: DriveView, used: set[str], run: str, i: int) -> Plan | None:
    for d in _candidates(view, used):
        level = view.level(d)
        if level == 0:
            continue
        for u in sorted(view.access[d]):
            if u in view.users and view.clearance(u) >= level:
                lower = SECRET_LEVELS[level - 1]
                return Plan(
                    "clearance-lowered",
                    "revoke",
                    [d],
                    [u],
                    f"clearance of {u} lowered to {lower} (below {SECRET_LEVELS[level]} of {view.path_of(d)})",
                    _op("patch_user", u, clearance=lower),
                )
    return None


def new_version(view: DriveView, used: set[str], run: str, i: int) -> Plan | None:
    for d in _candidates(view, used):
        f = view.files[d]
        if f["file_type"] not in TEXT_TYPES:
            continue
        users = [u for u in sorted(view.access[d]) if u in view.users][:MAX_USERS]
        text = f"zqsync{run}v{i} the revised figures replace every earlier statement"
        data = f"# {f['name'].rsplit('.', 1)[0]}\n\n{text}\n".encode()
        name = f["name"]
        return Plan(
            "new-version",
            "content",
            [d],
            users,
            f"new version of {f['path']}",
            _op("new_version", d, name, data),
            new_text=text,
        )
    return None


def grant_added(view: DriveView, used: set[str], run: str, i: int) -> Plan | None:
    pair = _unseen_pair(view, used)
    if pair is None:
        return None
    u, d = pair
    path = view.path_of(d)
    return Plan(
        "grant-added",
        "grant",
        [d],
        [u],
        f"grant preview to {u} on {path}",
        _op("add_grant", path, _user_subject(u), ["preview"]),
    )


def new_document(view: DriveView, used: set[str], run: str, i: int) -> Plan | None:
    for path in sorted(view.folders):
        docs = view.docs_in(path, direct=True)
        seen = [u for u in sorted(view.access.get(docs[0], set())) if u in view.users] if docs else []
        if not seen or view.level(docs[0]) > 1:
            continue
        text = f"zqsync{run}n{i} a fresh note on the quarterly plan"
        name = f"sync-note-{run}-{i}.md"
        return Plan(
            "new-document",
            "grant",
            [],
            seen[:MAX_USERS],
            f"upload {path.rstrip('/')}/{name}",
            _op("upload", path, name, f"# sync note {run} {i}\n\n{text}\n".encode()),
            new_text=text,
        )
    return None


PLANNERS: dict[str, Callable[[DriveView, set[str], str, int], Plan | None]] = {
    "grant-removed": grant_removed,
    "member-removed": member_removed,
    "deny-added": deny_added,
    "inheritance-broken": inheritance_broken,
    "moved-out": moved_out,
    "trashed": trashed,
    "purged": purged,
    "grant-expired": grant_expired,
    "parent-acl-changed": parent_acl_changed,
    "clearance-lowered": clearance_lowered,
    "answer-cache": answer_cache,
    "new-version": new_version,
    "grant-added": grant_added,
    "new-document": new_document,
}
