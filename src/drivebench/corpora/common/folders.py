"""The folder tree every corpus starts from (units add project, product and event folders).

::

    /                          root
    /<public>                  shared; everyone may preview; policies, newsroom, finance notices
    /<depts>/<dept>/<sub>      one space per department; finance, audit and payroll break inheritance
    /<projects>/<project>      one per project, breaking inheritance (added by the project unit)
    /<archive>                 breaks inheritance: managers and auditors; closed projects, old drafts
    /<personal>/<name>         one per user, breaking inheritance: only its owner
"""

from __future__ import annotations

from drivebench.corpora.common.scenario import Scenario


def base_tree(s: Scenario) -> None:
    public = s.folder(f"/{s.name('public')}", kind="shared")
    for key in ("policies", "news", "notices"):
        s.folder(f"{public}/{s.name(key)}", kind="shared")
    for d in s.org.departments:
        if d.parent is not None:
            s.dept_path(d.id)
    s.folders[s.dept_path("finance")].break_inheritance = True
    s.folders[s.dept_path("audit")].break_inheritance = True
    s.sub("hr", "payroll", break_inheritance=True)
    for team in ("rd-platform", "rd-product"):
        s.sub(team, "reviews")
        s.sub(team, "weekly")
    s.folder(f"/{s.name('projects')}", kind="project")
    archive = s.folder(f"/{s.name('archive')}", kind="archive", break_inheritance=True)
    s.special["archive"] = archive
    s.special["closed"] = s.folder(f"{archive}/{s.name('closed')}", kind="archive")
    s.special["drafts"] = s.folder(f"{archive}/{s.name('drafts')}", kind="archive")
    personal = s.folder(f"/{s.name('personal')}", kind="personal")
    for p in s.org.people:
        s.special[f"personal:{p.user_id}"] = s.folder(
            f"{personal}/{p.name}", kind="personal", owner=p.department, break_inheritance=True
        )
