"""The acme@3 world: every fact is drawn once, owned by one document, and rendered from the same numbers.

Python decides the structure (who works where, which document owns which fact, which identifier links
which documents, what changes between versions); every word comes from ``scenario/<lang>/world.toml`` and
the templates ``scenario/<lang>/world/<kind>.j2``. The zh and en corpora of one seed share one world.

Ownership and links (a fact is stated by its owner; other documents name only identifiers)::

    charter   (project code, name)      owns leader, sponsor, kickoff, planned end; names model M, budget no B
    budget    (budget no B)             owns line amounts and their total (the rows add up); no project name
    kickoff   (project code)            owns the meeting's room, host, attendance, milestones
    weekly    (project code, week)      owns progress, reporter, the risk and its owner
    review    (review no, project code) owns chair, conclusion, review date
    minutes   (project code)            owns the decision's owner and due date
    assembly  (model M)                 owns overall dimensions, designer; lists part numbers P
    part      (part no P, drawing no D) owns material, finish, thickness, supplier S
    bom       (model M)                 owns quantities, unit costs, their total
    contract  (PO no, supplier S, D)    owns quantity, unit price, total (= quantity x price), signer, dates
    acceptance(IQC no, PO no)           owns inspector, result, acceptance date (zip: report + packing list)
    payment   (payment no, PO no)       owns approver, payment date; pays the contract's total
    offer, training, policy, notice, event, press: people, HR, policy, IT and marketing facts

Dates are causal: filed before approved, planned before held, drawn before ordered, delivered before
accepted, accepted before paid. Nothing is created after ``LATEST``.
"""

from __future__ import annotations

from drivebench.corpora.acme3.company import CompanyDocs
from drivebench.corpora.acme3.model import SCALES, Chain, Fact, World, described, project_count
from drivebench.corpora.acme3.products import ProductDocs
from drivebench.corpora.acme3.projects import ProjectDocs
from drivebench.corpora.common.grants import structural
from drivebench.corpora.common.model import sub_rng

__all__ = ["SCALES", "Chain", "Fact", "World", "build_world", "described", "project_count"]


class Builder(ProjectDocs, ProductDocs, CompanyDocs):
    def build(self) -> World:
        s = self.s
        projects_root = f"/{s.name('projects')}"
        for i in range(self.n):
            self.project(i, projects_root, sub_rng(self.seed, f"v3:project:{i}"))
        self.people_docs(sub_rng(self.seed, "v3:people"))
        self.policies(sub_rng(self.seed, "v3:policies"))
        self.notices(sub_rng(self.seed, "v3:notices"))
        self.events(sub_rng(self.seed, "v3:events"))
        self.lifecycle(sub_rng(self.seed, "v3:lifecycle"))
        structural(s)  # creates the folders version 1's structural grants name (the grants come later)
        return self.w


def build_world(lang: str, seed: int, scale: str | int) -> World:
    return Builder(lang, seed, project_count(scale)).build()
