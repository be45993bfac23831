"""Version 1's document helpers: render a kind's template, build a versioned document, attach question hooks.
The state the units write into (``Scenario``) is ``corpora/common/scenario.py``."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from drivebench.corpora.common.model import Chain, DocPlan, Hook, VersionPlan, office_time
from drivebench.corpora.common.organisation import Person
from drivebench.corpora.common.scenario import LATEST, Scenario
from drivebench.corpora.render.spec import DocSpec


@dataclass
class UnitOutput:
    """What a unit of version 1's story writes: its documents and the hop chains among them."""

    docs: list[DocPlan] = field(default_factory=list)
    chains: list[Chain] = field(default_factory=list)


def spec(s: Scenario, kind: str, module: str, f: dict[str, Any]) -> DocSpec:
    """Render the template ``kind`` of ``module`` in the scenario's language with facts ``f``."""
    out: DocSpec = getattr(s.t(module), kind)(f)
    out.language = s.lang
    return out


def new_doc(
    s: Scenario,
    *,
    key: str,
    kind: str,
    module: str,
    file_type: str,
    folder: str,
    title: str,
    level: str,
    owner: Person,
    created: datetime,
    rng: random.Random,
    facts: list[dict[str, Any]],
    notes: list[str] | None = None,
    gap: tuple[int, int] = (9, 40),
) -> DocPlan:
    """A document whose version ``i`` renders ``facts[i]``; later versions ``gap`` days apart (fewer if
    the clock runs out: a version never lands after ``LATEST``). ``title`` is also the subject of its
    questions; the stored title and file name start with a capital letter."""
    shown = title[:1].upper() + title[1:]
    doc = DocPlan(
        key=key,
        kind=kind,
        file_type=file_type,
        folder=folder,
        name=f"{shown}.{file_type}".replace("/", "-"),
        title=shown,
        secret_level=level,
        owner=owner.user_id,
        department=owner.department,
        subject=title,
    )
    when = min(office_time(rng, created), LATEST)
    for i, f in enumerate(facts):
        if i > 0:
            when = office_time(rng, when + timedelta(days=rng.randint(*gap)))
            if when > LATEST:
                break
        f = {**f, "title": shown, "author": owner.name}
        note = (notes[i - 1] if notes and i - 1 < len(notes) else s.common.VERSION_NOTES["edit"]) if i else ""
        sp = spec(s, kind, module, f)
        sp.file_type = file_type
        sp.author = owner.name
        doc.versions.append(
            VersionPlan(
                spec=sp,
                created_at=when,
                author=owner.user_id,
                note=note,
                facts={k: v for k, v in f.items() if isinstance(v, str)},
            )
        )
    return doc


def hook(s: Scenario, module: str, doc: DocPlan, fact: str, answer: str) -> None:
    """Attach a question hook: the attribute name is the module's ``ATTRS[<kind>.<fact>]``; the subject is
    ``doc.subject``, or, for kinds in the module's ``CONTENT_SUBJECTS`` (drawings), a phrase naming what
    the document says (a content hook: its questions never use the title or the file name)."""
    facts = doc.versions[-1].facts
    if fact not in facts:
        raise KeyError(f"{doc.kind}: hook on unknown fact {fact!r}")
    T = s.t(module)
    key = f"{doc.kind}.{fact}"
    attr = T.ATTRS[key].format(**facts)
    alias_attr = T.ATTR_ALIASES.get(key)
    alias_subject = T.SUBJECT_ALIASES.get(doc.kind)
    content = getattr(T, "CONTENT_SUBJECTS", {}).get(doc.kind)
    doc.hooks.append(
        Hook(
            fact=fact,
            subject=content.format(**facts) if content else doc.subject,
            attr=attr,
            answer=answer,  # type: ignore[arg-type]  # the scenario's strings are AnswerKind values
            alias_subject=alias_subject.format(**facts) if alias_subject else None,
            alias_attr=alias_attr.format(**facts) if alias_attr else None,
            content=content is not None,
        )
    )


def subject(s: Scenario, module: str, kind: str, facts: dict[str, Any]) -> str:
    """The noun phrase naming a document in questions, from the module's ``SUBJECTS``."""
    return str(s.t(module).SUBJECTS[kind].format(**facts))


VERSIONING = 1.35  # scales every unit's chance of revising a document (keeps >= 20% versioned for any seed)


def n_versions(rng: random.Random, p: float) -> int:
    """1 with probability ``1 - VERSIONING * p``, else 2 to 5 (2 most likely)."""
    if rng.random() >= min(0.9, VERSIONING * p):
        return 1
    return rng.choices([2, 3, 4, 5], weights=[5, 3, 2, 1])[0]
