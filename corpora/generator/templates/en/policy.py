"""English templates: company-wide policies and announcements, and personal work notes."""

from __future__ import annotations

from typing import Any

from drivebench.corpora.render.spec import DocSpec, Section

NOTE_TOPICS = (
    "quarterly goal breakdown",
    "supplier visit",
    "system launch retrospective",
    "customer requirements call",
    "annual training schedule",
    "office move preparation",
)
ADDRESSES = (
    "400 Innovation Way, Boston, MA 02210",
    "75 Harbor Street, Boston, MA 02110",
    "1200 Technology Drive, Cambridge, MA 02142",
)

ATTRS: dict[str, str] = {
    "handbook.leave": "annual leave after one year of service",
    "handbook.probation": "probation period",
    "handbook.hours": "working hours",
    "expense_policy.hotel": "hotel limit in tier-1 cities",
    "expense_policy.per_diem": "daily meal allowance",
    "expense_policy.threshold": "claim amount that needs CEO approval",
    "it_security.length": "minimum password length",
    "it_security.rotation": "password rotation period",
    "it_security.contact": "security contact",
    "announcement.address": "new office address",
    "announcement.move_date": "move date",
    "note.contact": "person contacted",
    "note.due": "agreed submission date",
}
SUBJECTS: dict[str, str] = {
    "handbook": "employee handbook",
    "expense_policy": "travel expense policy",
    "it_security": "information security policy",
    "announcement": "headquarters office move notice",
    "note": "{owner}'s notes on the {topic}",
}


def handbook(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="pdf",
        sections=[
            Section(
                "Chapter 1 General",
                [
                    "This handbook applies to all Acme Technologies employees; HR interprets it.",
                    f"Policy owner: {f['author']}",
                ],
            ),
            Section(
                "Chapter 2 Working hours", [f"Standard working hours are {f['hours']} with a one-hour lunch break."]
            ),
            Section(
                "Chapter 3 Probation",
                [
                    f"New employees serve a probation period of {f['probation']}; strong "
                    "performers may apply to end it early."
                ],
            ),
            Section(
                "Chapter 4 Leave",
                [
                    f"After one year of service employees receive {f['leave']} of paid annual leave, "
                    "which may be carried over until the end of March of the next year.",
                    "Sick, wedding and parental leave follow the law.",
                ],
            ),
        ],
    )


def expense_policy(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="pdf",
        sections=[
            Section("1. Scope", ["This policy covers transport, lodging and meals on business travel."]),
            Section(
                "2. Hotel limits",
                [],
                table=[
                    ["City tier", "Limit per night (USD)"],
                    ["Tier-1 cities", f["hotel"]],
                    ["State capitals", f["hotel2"]],
                    ["Other cities", f["hotel3"]],
                ],
            ),
            Section("3. Meals", [f"The meal allowance is ${f['per_diem']} per calendar day of travel."]),
            Section(
                "4. Approvals",
                [
                    f"Any single claim above ${f['threshold']} needs CEO approval.",
                    f"Finance owns this policy; contact: {f['author']}.",
                ],
            ),
        ],
    )


def it_security(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="md",
        sections=[
            Section(
                "Accounts and passwords",
                [
                    f"Passwords must be at least {f['length']} long and mix upper and lower case, digits and symbols.",
                    f"Passwords must be changed every {f['rotation']}; the last 5 may not be reused.",
                ],
            ),
            Section(
                "Remote access", ["Remote work goes through the company VPN; personal cloud drives are not allowed."]
            ),
            Section("Contact", [f"Security contact: {f['contact']}"]),
        ],
    )


def announcement(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="txt",
        sections=[
            Section(
                "Notice",
                [
                    "Dear colleagues,",
                    f"Headquarters moves on {f['move_date']} to {f['address']}.",
                    "Please pack personal items ahead of the move and keep valuables with you.",
                    f"Questions: {f['author']}",
                ],
            ),
        ],
    )


def note(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type=f["ftype"],
        sections=[
            Section(
                "Notes",
                [
                    f"Date: {f['date']}",
                    f"Topic: {f['topic']}",
                    f"Talked with {f['contact']} about the {f['topic']}.",
                    f"We agreed to send a first proposal by {f['due']}.",
                ],
            ),
            Section("To do", ["Send the meeting notes to the team", "Update the project plan"]),
        ],
    )


SUBJECT_ALIASES: dict[str, str] = {
    "handbook": "staff rulebook",
    "expense_policy": "business travel reimbursement rules",
    "it_security": "cybersecurity rules",
    "announcement": "notice about moving headquarters",
    "note": "{owner}'s jottings about the {topic}",
}
ATTR_ALIASES: dict[str, str] = {
    "handbook.leave": "paid vacation per year after the first year",
    "handbook.probation": "trial period",
    "handbook.hours": "office hours",
    "expense_policy.hotel": "hotel cap in the biggest cities",
    "expense_policy.per_diem": "food allowance per day",
    "expense_policy.threshold": "claim size that needs the CEO's signature",
    "it_security.length": "shortest password allowed",
    "it_security.rotation": "password change interval",
    "it_security.contact": "person to call about security",
    "announcement.address": "destination address",
    "announcement.move_date": "moving day",
    "note.contact": "person spoken to",
    "note.due": "proposal due date",
}
