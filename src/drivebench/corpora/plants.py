"""Plant a documented set of overshares into a corpus manifest (``planted_overshares.json``).

``apply_plants(manifest)`` returns a modified copy and the list of plants applied, each with the
document it picked and the finding the oversharing audit must report for it. Documents are picked by
fixed rules (sorted doc ids, a level, not trashed, an owning department, no document picked twice;
``outsiders: 0``: nobody outside the owning department may preview it before the plant), so the same
corpus always gets the same plants. Placeholders: ``$root_department`` (the department without a parent,
i.e. the whole company), ``$cleared_outsider`` (the first user by
id outside the owning department cleared for the document's level after the plant).

acme@2 (``corpora/acme2/build.py``) applies them while it is generated, before its eval set is drawn; a
corpus that already carries them (grant ids ``planted-*``) is refused, never planted twice.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from drivebench.drive.permissions import PermissionEngine
from drivebench.drive.permissions.compiler import doc_obj
from drivebench.drive.state import Drive
from drivebench.formats.corpus import Grant, Manifest, Project, ProjectMember, Subject, level_rank
from drivebench.resources import package_dir

SPEC_PATH = package_dir("drivebench.corpora") / "planted_overshares.json"


def load_spec(path: Path = SPEC_PATH) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _owner(m: Manifest, folder: str) -> str | None:
    owners = {f.path: f.owner_department for f in m.folders}
    path = folder
    while True:
        if owners.get(path):
            return owners[path]
        if path == "/":
            return None
        path = path.rsplit("/", 1)[0] or "/"


def _dept_chain(m: Manifest, dept: str) -> list[str]:
    parents = {d.id: d.parent for d in m.departments}
    out = []
    cur: str | None = dept
    while cur is not None and cur not in out:
        out.append(cur)
        cur = parents.get(cur)
    return out


def _outsiders_who_preview(m: Manifest, doc_id: str, owner: str | None) -> int:
    drive = Drive.from_manifest(m, None)
    engine = PermissionEngine(drive)
    now = drive.clock.now()
    obj, level = doc_obj(doc_id), drive.doc(doc_id).secret_level
    return sum(
        1
        for u in m.users
        if owner not in _dept_chain(m, u.department)
        and engine.enforce(engine.user_principal(u.user_id), obj, "preview", now, level)
    )


def apply_plants(manifest: Manifest, spec: dict[str, Any] | None = None) -> tuple[Manifest, list[dict[str, Any]]]:
    spec = spec or load_spec()
    already = sorted(g.grant_id for g in manifest.grants if g.grant_id.startswith("planted-"))
    if already:  # acme@2 plants them when it is generated
        raise ValueError(f"the corpus already carries planted overshares ({', '.join(already)})")
    m = manifest.model_copy(deep=True)
    now = m.clock.now
    used: set[str] = set()
    applied: list[dict[str, Any]] = []
    for plant in spec["plants"]:
        pick = plant["pick"]
        candidates = [
            d
            for d in sorted(m.documents, key=lambda d: d.doc_id)
            if d.secret_level == pick["secret_level"]
            and d.trashed_at is None
            and d.doc_id not in used
            and _owner(m, d.folder) is not None
        ]
        if "outsiders" in pick:
            candidates = [
                d for d in candidates if _outsiders_who_preview(m, d.doc_id, _owner(m, d.folder)) == pick["outsiders"]
            ]
        if len(candidates) <= pick["nth"]:
            raise ValueError(f"plant {plant['id']}: the corpus has no document #{pick['nth']} matching {pick}")
        doc = candidates[pick["nth"]]
        used.add(doc.doc_id)
        owner = _owner(m, doc.folder)
        if "raise_to" in plant:
            doc.tags["level_was"] = doc.secret_level
            doc.tags["level_raised_at"] = (now - timedelta(days=plant["raised_days_ago"])).isoformat()
            doc.secret_level = plant["raise_to"]
        outsiders = [u for u in sorted(m.users, key=lambda u: u.user_id) if owner not in _dept_chain(m, u.department)]
        subject = dict(plant["grant"]["subject"])
        sid = subject.get("id")
        if sid == "$root_department":
            subject["id"] = sorted(d.id for d in m.departments if d.parent is None)[0]
        elif sid == "$cleared_outsider":
            subject["id"] = next(
                u.user_id for u in outsiders if level_rank(u.clearance) >= level_rank(doc.secret_level)
            )
        if "project" in plant:
            p = plant["project"]
            member = next(u.user_id for u in outsiders if level_rank(u.clearance) >= level_rank(doc.secret_level))
            m.projects.append(
                Project(id=p["id"], name=p["name"], members=[ProjectMember(user_id=member, role=p["role"])])
            )
        grant_id = f"planted-{plant['id']}"
        m.grants.append(
            Grant(
                grant_id=grant_id,
                doc_id=doc.doc_id,
                subject=Subject(**subject),
                actions=plant["grant"]["actions"],
                note=plant["story"],
            )
        )
        applied.append(
            {
                "plant": plant["id"],
                "doc_id": doc.doc_id,
                "grant_id": grant_id,
                "subject": subject,
                "expect": plant["expect"],
            }
        )
    return m, applied


def write_planted_corpus(src: Path, dst: Path, spec: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Copy corpus ``src`` to ``dst`` (files linked, not copied when possible) with the plants applied."""
    import shutil

    from drivebench.formats.corpus import MANIFEST_NAME, load_manifest, write_manifest

    manifest, applied = apply_plants(load_manifest(src), spec)
    shutil.copytree(src, dst, dirs_exist_ok=True, ignore=shutil.ignore_patterns(MANIFEST_NAME))
    write_manifest(manifest, dst)
    (dst / "planted_overshares.json").write_text(json.dumps(applied, ensure_ascii=False, indent=1), encoding="utf-8")
    return applied
