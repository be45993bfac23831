"""English templates: R&D project documents (charter, plan, approval, minutes, weekly, review, delivery, budget)."""

from __future__ import annotations

from typing import Any

from drivebench.corpora.render.spec import DocSpec, Section, ZipMember

GOALS = (
    "build one data platform that connects data collection, governance and analytics across all business lines",
    "build an identity hub that gives every internal system single sign-on and central access management",
    "launch a support assistant that lets customers resolve at least 70% of common questions on their own",
    "build a supplier portal where suppliers confirm orders, ship and reconcile invoices online",
    "ship a mobile workspace app covering approvals, attendance and the company directory",
    "build a log analytics platform with central collection, search and alerting for every service",
    "rewrite the billing system to support metered pricing and bundles and end manual month-end reconciliation",
    "build knowledge search so staff can find policies and technical documents in plain language",
    "build an operations monitor that unifies metrics, traces and alerts and shortens incident triage",
    "upgrade the order hub to handle three times the order volume of peak sales events",
    "automate management reporting and retire the hand-built reports of finance and operations",
    "add remote device care so field devices can be diagnosed and updated over the air",
)
TASKS = (
    "Load-test environment",
    "API documentation review",
    "Data migration plan",
    "Security assessment",
    "Monitoring and alerting hookup",
    "Canary release plan",
)
ROOMS = ("Room 301, 3rd floor", "Orion Room, 5th floor", "Boardroom, 12th floor", "Video Room, 2nd floor")
RISKS = (
    "Integration with a third-party API is running late and may delay the start of system testing",
    "The test environment is short of capacity, so load tests have to be scheduled around other projects",
    "Two core developers are on leave this month, which squeezes the schedule",
    "The definitions of several upstream data fields are still unconfirmed by the business owners",
)

ATTRS: dict[str, str] = {
    "charter.leader": "project manager",
    "charter.sponsor": "project sponsor",
    "charter.budget": "total budget",
    "charter.end": "planned end date",
    "tech_plan.qps": "peak throughput target (QPS)",
    "tech_plan.db": "primary data store",
    "tech_plan.author": "author",
    "approval.approver": "approver",
    "approval.approve_date": "approval date",
    "minutes.action_owner": 'owner of the action item "{task}"',
    "minutes.room": "meeting room",
    "weekly.progress": "overall progress percentage",
    "weekly.author": "reporter",
    "review.golive": "go-live date",
    "review.chair": "review chair",
    "delivery.signer": "acceptance signatory",
    "delivery.release": "release version",
    "budget.cloud": "cloud resources cost",
    "budget.reviewer": "finance reviewer",
}
SUBJECTS: dict[str, str] = {
    "charter": "{project} project charter",
    "tech_plan": "{project} technical plan",
    "approval": "approval form {approval_no}",
    "minutes": "{project} kickoff meeting minutes",
    "weekly": "{project} week {week} status report",
    "review": "{project} design review deck",
    "delivery": "{project} delivery package",
    "budget": "{project} project budget sheet",
}
CHAINS: dict[str, dict[str, str]] = {
    "code_plan_approval": {
        "short": "{code} technical plan approver",
        "medium": "Who finally approved the technical plan of the project with code {code}?",
        "long": "I'm sorting out project records and all I have is the project code {code}. Who signed off the "
        "technical plan of that project on its approval form?",
    },
    "plan_approval": {
        "short": "{project} technical plan approval date",
        "medium": "On what date was the technical plan of {project} approved?",
        "long": "We're writing the phase summary for {project} and need the date its technical plan was approved. "
        "Can you look it up in the approval record?",
    },
    "minutes_review": {
        "short": "{project} kickoff review go-live date",
        "medium": "In the design review referenced by the {project} kickoff minutes, what is the go-live date?",
        "long": "The kickoff minutes of {project} say the launch plan follows the milestones of a design review deck. "
        "What go-live date does that review deck give?",
    },
    "weekly_minutes_review": {
        "short": "{project} week {week} report minutes review chair",
        "medium": "The week {week} status report of {project} cites meeting minutes; who chaired the design "
        "review those minutes reference?",
        "long": "I'm reading the week {week} status report of {project}. It says the work follows a set of meeting "
        "minutes, and those minutes point to a design review deck. Who was the chair of that design review?",
    },
    "code_budget": {
        "short": "{code} budget sheet cloud cost",
        "medium": "What is the cloud resources cost in the budget sheet of the project with code {code}?",
        "long": "Finance is checking project costs and only gave me the project code {code}. Can you find the budget "
        "sheet named in that project's charter and tell me the cloud resources amount?",
    },
}


def charter(f: dict[str, Any]) -> DocSpec:
    members = [["Name", "Project role", "Department"], *[list(m) for m in f["members"]]]
    return DocSpec(
        title=f["title"],
        file_type="docx",
        sections=[
            Section(
                "1. Overview",
                [
                    f"Project name: {f['project']}",
                    f"Project code: {f['code']}",
                    f"Sponsoring department: {f['dept']}",
                    f"Project sponsor: {f['sponsor']}",
                    f"Project manager: {f['leader']}",
                    f"Planned duration: {f['start_text']} to {f['end']}",
                ],
            ),
            Section(
                "2. Objectives",
                [
                    f"This project aims to {f['goal']}.",
                    "When the project completes, the sponsor runs acceptance and the system moves to routine operations.",
                ],
            ),
            Section(
                "3. Budget and resources",
                [
                    f"The total budget is ${f['budget']}, covering staff, hardware, cloud resources and contractors. "
                    f"The breakdown is in the project budget sheet {f['budget_no']}.",
                    "Finance tracks spending monthly; an overrun above 5% needs a new approval.",
                ],
            ),
            Section("4. Project team", [], table=members),
            Section(
                "5. Technical approach",
                [
                    f"The technical approach is set out in the {f['project']} technical plan ({f['plan_no']}), which must "
                    "be approved before development starts.",
                ],
            ),
            Section("6. Key risks", [f"{f['risk']}. The project manager tracks risks in the weekly status report."]),
        ],
    )


def tech_plan(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="pdf",
        sections=[
            Section(
                "1 Document information",
                [
                    f"Plan number: {f['plan_no']}",
                    f"Project: {f['project']}",
                    f"Author: {f['author']}",
                    f"Approval form: {f['approval_no']}",
                ],
            ),
            Section(
                "2 Background and goals",
                [f"To {f['goal']}, R&D wrote this plan as the basis for development, testing and launch."],
            ),
            Section(
                "3 Architecture",
                [
                    f"The system uses {f['arch']}.",
                    f"The primary data store is {f['db']}, split by business domain, keeping 180 days of history.",
                ],
            ),
            Section(
                "4 Performance and availability targets",
                [],
                table=[
                    ["Metric", "Target"],
                    ["Peak throughput", f"{f['qps']} QPS"],
                    ["Availability", f["availability"]],
                    ["P99 latency", f"{f['p99']} ms"],
                ],
            ),
            Section("5 Approval", [f"This plan was submitted for approval; see approval form {f['approval_no']}."]),
        ],
    )


def approval(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="xlsx",
        sections=[
            Section(
                "Approval",
                [],
                table=[
                    ["Field", "Value"],
                    ["Approval form", f["approval_no"]],
                    ["Subject", f"Technical plan approval (plan {f['plan_no']})"],
                    ["Requested by", f["applicant"]],
                    ["Request date", f["apply_date"]],
                    ["Approver", f["approver"]],
                    ["Decision", "Approved"],
                    ["Approval date", f["approve_date"]],
                    ["Comment", "Approved as proposed; add the monitoring and rollback plan requested in review."],
                ],
            ),
            Section(
                "Workflow",
                [],
                table=[
                    ["Step", "Handled by", "Result", "Date"],
                    ["Submitted", f["applicant"], "Submitted", f["apply_date"]],
                    ["Department review", f["reviewer"], "Passed", f["apply_date"]],
                    ["Final approval", f["approver"], "Approved", f["approve_date"]],
                ],
            ),
        ],
    )


def minutes(f: dict[str, Any]) -> DocSpec:
    actions = [["Action", "Owner", "Due"], *[list(a) for a in f["actions"]]]
    return DocSpec(
        title=f["title"],
        file_type="md",
        sections=[
            Section(
                "Meeting details",
                [
                    f"Minutes number: {f['minutes_no']}",
                    f"Date: {f['meeting_date']}, 2:00-4:00 pm",
                    f"Room: {f['room']}",
                    f"Chair: {f['leader']}",
                    f"Attendees: {f['attendees']}",
                    f"Minutes taken by: {f['recorder']}",
                ],
            ),
            Section("Agenda", ["1. Confirm goals and scope", "2. Technology choices", "3. Milestones and owners"]),
            Section(
                "Decisions",
                [
                    f"1. The primary data store will be {f['db']}.",
                    f"2. The launch plan follows the milestones in design review deck {f['review_no']}.",
                    "3. The team files a status report every Friday; the project manager tracks all risks.",
                ],
            ),
            Section("Action items", [], table=actions),
        ],
    )


def weekly(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="txt",
        sections=[
            Section(
                "Summary",
                [
                    f"Reporter: {f['author']}",
                    f"Period: {f['period']}",
                    f"Working from: meeting minutes {f['minutes_no']}",
                ],
            ),
            Section(
                "Progress this week",
                [
                    f"Overall progress: {f['progress']}",
                    f"Completed the {f['done'].lower()}; the code is merged to main and reviewed.",
                ],
            ),
            Section("Risks and issues", [f"{f['risk']}."]),
            Section("Next week", [f"Drive the {f['next'].lower()} and finish integration by Wednesday."]),
        ],
    )


def review(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="pptx",
        sections=[
            Section(
                "Review overview",
                [
                    f"Review number: {f['review_no']}",
                    f"Project: {f['project']}",
                    f"Review chair: {f['chair']}",
                    f"Panel: {f['panel']}",
                    f"Review date: {f['review_date']}",
                ],
                notes="Open by stating the scope: architecture and milestones only, no budget discussion.",
            ),
            Section("Architecture", [f"Architecture: {f['arch']}", f"Data store: {f['db']}"]),
            Section(
                "Milestones",
                [],
                table=[
                    ["Milestone", "Planned date"],
                    ["High-level design review", f["m1"]],
                    ["Development complete", f["m2"]],
                    ["System test complete", f["m3"]],
                    ["Go-live", f["golive"]],
                ],
            ),
            Section(
                "Conclusion",
                [
                    "The design is sound; development may start.",
                    "Add capacity planning and a rollback plan within two weeks.",
                ],
                notes="The review chair announces the conclusion in the meeting.",
            ),
        ],
    )


def delivery(f: dict[str, Any]) -> DocSpec:
    checklist = DocSpec(
        title=f"{f['project']} delivery checklist",
        file_type="md",
        sections=[
            Section(
                "Deliverables",
                [
                    f"Release version: {f['release']}",
                    "1. Source code and build scripts",
                    "2. Deployment guide",
                    "3. Test report",
                    "4. Operations handover notes",
                ],
            ),
        ],
    )
    report = DocSpec(
        title=f"{f['project']} acceptance report",
        file_type="docx",
        sections=[
            Section(
                "Acceptance",
                [
                    f"{f['project']} (release {f['release']}) meets the requirements specification and is accepted.",
                    f"Accepted by: {f['signer']}",
                    f"Acceptance date: {f['accept_date']}",
                ],
            ),
        ],
    )
    deploy = DocSpec(
        title="Deployment notes",
        file_type="txt",
        sections=[
            Section(
                "Environment",
                [
                    f"Production servers: {f['servers']}",
                    "Deployment window: Saturday 10 pm to 2 am",
                    "Rollback: the previous image is kept for one-step rollback.",
                ],
            ),
        ],
    )
    return DocSpec(
        title=f["title"],
        file_type="zip",
        members=[
            ZipMember("delivery-checklist.md", checklist),
            ZipMember("acceptance-report.docx", report),
            ZipMember("deployment-notes.txt", deploy),
        ],
    )


def budget(f: dict[str, Any]) -> DocSpec:
    rows = [["Cost item", "Amount (USD)", "Notes"], *[list(r) for r in f["rows"]], ["Total", f["total"], ""]]
    return DocSpec(
        title=f["title"],
        file_type="xlsx",
        sections=[
            Section(
                "Budget summary",
                [
                    f"Budget number: {f['budget_no']}",
                    f"Project: {f['project']}",
                    f"Total budget: ${f['total']}",
                    f"Finance review: {f['reviewer']}",
                ],
                table=rows,
            ),
        ],
    )


BUDGET_ITEMS = (
    ("Staff", "team hours at internal rates"),
    ("Hardware", "servers and network gear"),
    ("Cloud resources", "public cloud compute, storage and bandwidth"),
    ("Contractors", "outsourced development and testing"),
    ("Travel and other", "travel, meetings and training"),
)
ROLE_NAMES = ("Project manager", "Assistant", "Member", "External member")

# question-side wording that avoids the documents' own labels (paraphrased questions)
SUBJECT_ALIASES: dict[str, str] = {
    "charter": "founding document of {project}",
    "tech_plan": "{project} solution design",
    "minutes": "notes from the {project} kickoff",
    "weekly": "{project} update for week {week}",
    "review": "slides from the {project} review meeting",
    "delivery": "{project} handover archive",
    "budget": "{project} cost spreadsheet",
}
ATTR_ALIASES: dict[str, str] = {
    "charter.leader": "person leading the project",
    "charter.sponsor": "executive sponsor",
    "charter.budget": "overall funding",
    "charter.end": "expected finish date",
    "tech_plan.qps": "requests-per-second goal",
    "tech_plan.db": "database chosen",
    "tech_plan.author": "writer",
    "approval.approver": "signatory",
    "approval.approve_date": "sign-off date",
    "minutes.action_owner": 'person responsible for "{task}"',
    "minutes.room": "meeting location",
    "weekly.progress": "completion level",
    "weekly.author": "author",
    "review.golive": "launch date",
    "review.chair": "person who ran the review",
    "delivery.signer": "person who accepted the delivery",
    "delivery.release": "version number",
    "budget.cloud": "cloud spend",
    "budget.reviewer": "finance checker",
}
