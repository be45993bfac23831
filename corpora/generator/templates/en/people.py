"""English templates: HR (offer letters, onboarding guide, training plan, salary adjustments) and legal
(NDA, compliance memo, legal opinion, signed-contract archive)."""

from __future__ import annotations

from typing import Any

from drivebench.corpora.render.spec import DocSpec, Section, ZipMember

RISK_LEVELS = ("Low", "Medium", "High")
PURPOSES = (
    "jointly develop an industrial IoT solution",
    "bid together for a smart-campus project",
    "evaluate a data-platform technology partnership",
    "set up a channel reseller partnership",
)

ATTRS: dict[str, str] = {
    "offer.salary": "monthly salary",
    "offer.position": "position offered",
    "offer.start": "start date",
    "onboarding.report": "first day",
    "onboarding.site": "reporting location",
    "onboarding.it_contact": "IT account contact",
    "training.pass_score": "passing score",
    "training.trainer": 'trainer of the "{course}" course',
    "salary.new_salary": "new monthly salary of {employee}",
    "salary.approver": "approver",
    "nda.term": "confidentiality term",
    "nda.arbitration": "arbitration body",
    "nda.signatory": "signatory for Acme",
    "compliance.owner": "owner",
    "compliance.deadline": "deadline",
    "opinion.risk": "risk level",
    "opinion.author": "issuing lawyer",
    "archive.seal_approver": "seal approver",
    "archive.seal_date": "sealing date",
}
SUBJECTS: dict[str, str] = {
    "offer": "offer letter for {candidate}",
    "onboarding": "onboarding guide for new-hire cohort {batch}",
    "training": "training plan for new-hire cohort {batch}",
    "salary": "salary adjustment sheet {year}-{batch}",
    "nda": "NDA with {partner}",
    "compliance": "compliance memo {cm_no}",
    "opinion": "legal opinion {lo_no}",
    "archive": "{partner} signed agreement archive",
}
CHAINS: dict[str, dict[str, str]] = {
    "onboarding_training": {
        "short": "cohort {batch} training {course} trainer",
        "medium": "In the training plan named by the onboarding guide for new-hire cohort {batch}, who teaches "
        '"{course}"?',
        "long": "I'm joining with new-hire cohort {batch} and the onboarding guide gives a training plan number. Who "
        'will teach the "{course}" course?',
    },
    "offer_onboarding_training": {
        "short": "{candidate} cohort training passing score",
        "medium": "What passing score does the training plan of {candidate}'s new-hire cohort set?",
        "long": "We just sent {candidate} an offer letter that names the new-hire cohort. What passing score does "
        "that cohort's training plan require?",
    },
    "opinion_nda": {
        "short": "{lo_no} NDA term",
        "medium": "What confidentiality term does the NDA behind legal opinion {lo_no} set?",
        "long": "Legal opinion {lo_no} rests on a non-disclosure agreement. How long is the confidentiality term in "
        "that NDA?",
    },
    "memo_opinion_nda": {
        "short": "{cm_no} opinion NDA signatory",
        "medium": "Compliance memo {cm_no} cites a legal opinion about an NDA; who signed that NDA for Acme?",
        "long": "Compliance memo {cm_no} cites a legal opinion, and the opinion concerns a non-disclosure agreement. "
        "I need to know who signed that NDA on Acme's side.",
    },
}


def offer(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="docx",
        sections=[
            Section(
                "Offer of employment",
                [
                    f"Dear {f['candidate']},",
                    f"We are pleased to offer you the position of {f['position']} in {f['dept']} at Acme Technologies.",
                    f"Your monthly base salary is ${f['salary']}, with a probation period of {f['probation']} months.",
                    f"Please report to {f['site']} on {f['start']} and join new-hire cohort {f['batch']} for orientation.",
                ],
            ),
            Section(
                "Details",
                [
                    f"Offer number: {f['offer_no']}",
                    f"HR contact: {f['hr_contact']}",
                    "This offer is valid for 7 business days.",
                ],
            ),
        ],
    )


def onboarding(f: dict[str, Any]) -> DocSpec:
    mentors = [["New hire", "Department", "Mentor"], *[list(r) for r in f["mentors"]]]
    return DocSpec(
        title=f["title"],
        file_type="md",
        sections=[
            Section(
                "Your first day",
                [f"First day: {f['report']}, 9:00 am", f"Location: {f['site']}", "Bring your ID and signed paperwork."],
            ),
            Section(
                "First week",
                [
                    f"Orientation follows training plan {f['tr_no']}.",
                    f"IT account contact: {f['it_contact']}",
                    "Badges and laptops are handed out on the afternoon of day one.",
                ],
            ),
            Section("Mentors", [], table=mentors),
        ],
    )


def training(f: dict[str, Any]) -> DocSpec:
    rows = [["Course", "Trainer", "Date", "Hours"], *[list(r) for r in f["courses"]]]
    return DocSpec(
        title=f["title"],
        file_type="pptx",
        sections=[
            Section(
                "Overview",
                [
                    f"Training plan: {f['tr_no']}",
                    f"Organizer: {f['organizer']}",
                    f"Audience: new-hire cohort {f['batch']}",
                ],
                notes="Remind attendees to install the meeting app beforehand.",
            ),
            Section("Courses", [], table=rows),
            Section(
                "Assessment",
                [
                    "A closed-book exam follows the training.",
                    f"Passing score: {f['pass_score']}; anyone below retakes the exam.",
                ],
            ),
        ],
    )


def salary(f: dict[str, Any]) -> DocSpec:
    rows = [
        ["Name", "Department", "Monthly salary before (USD)", "Monthly salary after (USD)"],
        *[list(r) for r in f["rows"]],
    ]
    return DocSpec(
        title=f["title"],
        file_type="xlsx",
        sections=[
            Section(
                "Salary adjustments",
                [
                    f"Cycle: {f['year']}-{f['batch']}",
                    f"Approver: {f['approver']}",
                    "Strictly confidential. Do not forward.",
                ],
                table=rows,
            )
        ],
    )


def nda(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="docx",
        sections=[
            Section(
                "Parties",
                [f"Agreement number: {f['nda_no']}", "Party A: Acme Technologies Inc.", f"Party B: {f['partner']}"],
            ),
            Section("Purpose", [f"The parties will exchange confidential information to {f['purpose']}."]),
            Section("Term", [f"The confidentiality term is {f['term']} from {f['effective']}."]),
            Section("Disputes", [f"Disputes go to arbitration before {f['arbitration']}."]),
            Section("Signatures", [f"Signed for Acme: {f['signatory']}", f"Signed for Party B: {f['partner_rep']}"]),
        ],
    )


def compliance(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="md",
        sections=[
            Section(
                "Background",
                [
                    f"Memo number: {f['cm_no']}",
                    f"Topic: {f['topic']}",
                    f"Our work with {f['partner']} raises {f['topic']} requirements; the legal analysis "
                    f"is in legal opinion {f['lo_no']}.",
                ],
            ),
            Section(
                "Requirements",
                [
                    "1. Process only the data the partnership strictly needs.",
                    "2. Add compliance clauses to the related contracts.",
                ],
            ),
            Section("Follow-up", [f"Owner: {f['owner']}", f"Deadline: {f['deadline']}"]),
        ],
    )


def opinion(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="pdf",
        sections=[
            Section(
                "Matter",
                [
                    f"Opinion number: {f['lo_no']}",
                    f"Issued by: {f['author']}",
                    f"Matter: partnership with {f['partner']}",
                    f"Based on: NDA {f['nda_no']}",
                ],
            ),
            Section(
                "Analysis",
                [
                    "The partnership model itself complies with current law.",
                    "The data exchange needs an additional security assessment.",
                ],
            ),
            Section(
                "Conclusion",
                [
                    f"Risk level: {f['risk']}",
                    "Complete the data security assessment before signing the definitive agreement.",
                ],
            ),
        ],
    )


def archive(f: dict[str, Any]) -> DocSpec:
    seal = DocSpec(
        title="Seal request",
        file_type="docx",
        sections=[
            Section(
                "Seal request",
                [
                    f"Requested by: {f['applicant']}",
                    f"Document: agreement with {f['partner']}",
                    f"Seal approver: {f['seal_approver']}",
                    f"Sealing date: {f['seal_date']}",
                ],
            ),
        ],
    )
    scan = DocSpec(
        title="Scan notes",
        file_type="txt",
        sections=[
            Section(
                "Notes",
                ["Two originals were signed; each party keeps one.", "The scan was checked against the original."],
            ),
        ],
    )
    index = DocSpec(
        title="Archive index",
        file_type="md",
        sections=[
            Section("Contents", ["1. Seal request", "2. Scan notes", f"Archive number: {f['archive_no']}"]),
        ],
    )
    return DocSpec(
        title=f["title"],
        file_type="zip",
        members=[
            ZipMember("archive-index.md", index),
            ZipMember("seal-request.docx", seal),
            ZipMember("scan-notes.txt", scan),
        ],
    )


TERMS = ("two years", "three years", "five years")

SUBJECT_ALIASES: dict[str, str] = {
    "offer": "job offer sent to {candidate}",
    "onboarding": "welcome notes for new-hire cohort {batch}",
    "training": "course schedule for new-hire cohort {batch}",
    "nda": "confidentiality agreement signed with {partner}",
    "archive": "sealed paperwork for the {partner} agreement",
}
ATTR_ALIASES: dict[str, str] = {
    "offer.salary": "monthly pay",
    "offer.position": "job title",
    "offer.start": "joining date",
    "onboarding.report": "date of the first day at work",
    "onboarding.site": "building to report to",
    "onboarding.it_contact": "person who sets up computer accounts",
    "training.pass_score": "exam pass mark",
    "training.trainer": 'teacher of "{course}"',
    "salary.new_salary": "pay of {employee} after the raise",
    "salary.approver": "executive who approved the raises",
    "nda.term": "secrecy period",
    "nda.arbitration": "forum for disputes",
    "nda.signatory": "person who signed for us",
    "compliance.owner": "person in charge",
    "compliance.deadline": "due date",
    "opinion.risk": "risk rating",
    "opinion.author": "lawyer who wrote it",
    "archive.seal_approver": "executive who approved the seal",
    "archive.seal_date": "sealing day",
}
