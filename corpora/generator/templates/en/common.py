"""English: formatting, folder names, question phrasing."""

from __future__ import annotations

import random
from datetime import datetime

FOLDERS: dict[str, str] = {
    "public": "Public",
    "policies": "Policies",
    "news": "Newsroom",
    "depts": "Departments",
    "projects": "Projects",
    "archive": "Archive",
    "closed": "Closed-Projects",
    "drafts": "Old-Drafts",
    "personal": "Personal",
    "weekly": "Weekly-Reports",
    "reviews": "Design-Reviews",
    "drawings": "Drawings",
    "released": "Released",
    "inspections": "Inspection-Reports",
    "budgets": "Budgets",
    "reports": "Financial-Reports",
    "requests": "Expense-Requests",
    "contracts": "Purchase-Contracts",
    "notices": "Finance-Notices",
    "recruiting": "Recruiting",
    "training": "Training",
    "payroll": "Payroll",
    "legal_contracts": "Contracts",
    "signed": "Signed-Archive",
    "legal_review": "Contract-Reviews",
    "compliance": "Compliance",
    "events": "Events",
    "brand": "Brand",
    "research": "Market-Research",
    "p_docs": "Documents",
    "p_meetings": "Meeting-Minutes",
    "p_delivery": "Delivery",
    "p_finance": "Project-Finance",
    "roadmap": "Roadmap",
}
LONG_CONTEXTS = (
    "I'm putting together the slides for next week's department meeting",
    "I just joined the team and I'm still getting up to speed on our documents",
    "While closing the books this month I found a few numbers I need to double-check",
    "A customer called asking about this and I want to give them an accurate answer",
    "I'm writing up this quarter's retrospective",
    "My manager asked me to confirm this before the end of the day",
)
_LEAD = {
    "who": "Who is",
    "amount": "What is",
    "date": "What is",
    "what": "What is",
    "number": "What is",
    "org": "Which company is",
}
_LEAD_PAST = {
    "who": "who was",
    "amount": "what was",
    "date": "what was",
    "what": "what was",
    "number": "what was",
    "org": "which company was",
}
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def fmt_date(d: datetime) -> str:
    return f"{_MONTHS[d.month - 1]} {d.day}, {d.year}"


def fmt_money(amount: int) -> str:
    return f"{amount:,}"


def money(amount: int) -> str:
    return f"${amount:,}"


def pct(value: float) -> str:
    return f"{value:.1f}%"


def join_names(names: list[str]) -> str:
    return ", ".join(names)


def single_question(
    rng: random.Random, style: str, subject: str, attr: str, answer: str, mode: str, when: str = ""
) -> str:
    """A question about one document. ``mode``: ``plain``, ``latest``, ``original`` or ``as_of`` (``when``)."""
    lead = _LEAD[answer]
    if style == "short":
        tail = {"plain": "", "latest": " latest", "original": " first version", "as_of": f" {when}"}[mode]
        return f"{subject} {attr}{tail}"
    if style == "medium":
        if mode == "as_of":
            return f"As of {when}, {_LEAD_PAST[answer]} the {attr} in the {subject}?"
        if mode == "original":
            return f"In the first version of the {subject}, {_LEAD_PAST[answer]} the {attr}?"
        if mode == "latest":
            return f"In the latest version of the {subject}, {lead.lower()} the {attr}?"
        return rng.choice(
            [
                f"{lead} the {attr} in the {subject}?",
                f"{lead} the {attr} stated in the {subject}?",
                f"According to the {subject}, {lead.lower()} the {attr}?",
            ]
        )
    ctx = rng.choice(LONG_CONTEXTS)
    if mode == "as_of":
        return (
            f"{ctx}, and I need the picture as it stood on {when}: back then, {_LEAD_PAST[answer]} the {attr} "
            f"in the {subject}? Please go by the version that was current at the time."
        )
    if mode == "original":
        return (
            f"{ctx}, and I want to compare against the very first draft: in version 1 of the {subject}, "
            f"{_LEAD_PAST[answer]} the {attr}?"
        )
    if mode == "latest":
        return (
            f"{ctx}. I heard the {subject} went through several revisions, so going by the latest one, "
            f"{lead.lower()} the {attr}?"
        )
    return rng.choice(
        [
            f"{ctx}, and I need to confirm the {attr} recorded in the {subject}. {lead} it? Please check the source.",
            f"{ctx}. Could you open the {subject} and find the {attr} for me?",
            f"{ctx}, so I need the exact {attr} from the {subject}. What does it say?",
        ]
    )


def content_question(
    rng: random.Random, style: str, subject: str, attr: str, answer: str, mode: str, when: str = ""
) -> str:
    """A question about a drawing that names what it is about (``subject``: ``part no. 41001-8423-1``, ``the
    product measuring 220 × 160 × 48 mm overall``), never the drawing's title or number. Same styles and
    modes as ``single_question``."""
    lead = _LEAD[answer]
    if style == "short":
        tail = {"plain": "", "latest": " latest", "original": " first revision", "as_of": f" {when}"}[mode]
        return f"{subject} {attr}{tail}"
    if style == "medium":
        if mode == "as_of":
            return f"As of {when}, {_LEAD_PAST[answer]} the {attr} for {subject}?"
        if mode == "original":
            return f"In the first revision, {_LEAD_PAST[answer]} the {attr} for {subject}?"
        if mode == "latest":
            return f"In the latest revision, {lead.lower()} the {attr} for {subject}?"
        return rng.choice(
            [
                f"{lead} the {attr} for {subject}?",
                f"{lead} the {attr} given for {subject}?",
                f"For {subject}, {lead.lower()} the {attr}?",
            ]
        )
    ctx = rng.choice(LONG_CONTEXTS)
    if mode == "as_of":
        return (
            f"{ctx}, and I need the picture as it stood on {when}: back then, {_LEAD_PAST[answer]} the {attr} "
            f"for {subject}? Please go by the revision that was current at the time."
        )
    if mode == "original":
        return (
            f"{ctx}, and I want to compare against the very first revision: back then, {_LEAD_PAST[answer]} "
            f"the {attr} for {subject}?"
        )
    if mode == "latest":
        return (
            f"{ctx}. I heard the specs for {subject} went through several revisions, so going by the latest "
            f"one, {lead.lower()} the {attr}?"
        )
    return rng.choice(
        [
            f"{ctx}, and I need to confirm the {attr} on record for {subject}. {lead} it? Please check the source.",
            f"{ctx}. Could you look up {subject} and find the {attr} for me?",
            f"{ctx}, so I need the exact {attr} for {subject}. What does it say?",
        ]
    )


def style_of(text: str) -> str:
    """The length bucket of a question: short <= 7 words, medium <= 20, long above."""
    n = len(text.split())
    return "short" if n <= 7 else "medium" if n <= 20 else "long"


VERSION_NOTES: dict[str, str] = {
    "budget": "Budget revised after review",
    "end": "Project end date moved",
    "qps": "Performance targets updated",
    "approver": "Approval routing changed, new approver",
    "material": "Material changed",
    "thickness": "Wall thickness adjusted",
    "approver_dwg": "Re-approved",
    "price": "Unit prices updated",
    "amount": "Amendment signed, contract value changed",
    "venue": "Venue changed",
    "kpi": "Targets adjusted",
    "total": "Mid-year budget adjustment",
    "leave": "Annual leave rules revised",
    "hotel": "Hotel limits revised",
    "password": "Password policy revised",
    "salary": "Salary figures confirmed",
    "deadline": "Remediation deadline extended",
    "term": "Agreement term changed",
    "milestone": "Milestones rescheduled",
    "score": "Passing score changed",
    "data": "Market data updated",
    "approved": "Approved amount revised",
    "edit": "Wording revised",
}
