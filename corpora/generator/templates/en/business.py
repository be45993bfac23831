"""English templates: marketing campaigns and finance (campaign deck, expense request, market research,
press release, brand kit; department budget, expense analysis, audit memo, reimbursement notice)."""

from __future__ import annotations

from typing import Any

from drivebench.corpora.render.spec import DocSpec, Section, ZipMember

SEASONS = ("Spring", "Fall")
REQUEST_ITEMS = ("Venue rental", "Print and signage", "Livestream promotion", "Speaker travel")
BUDGET_ITEMS = ("Salaries", "Travel", "Equipment", "Training", "Office and other")
COLORS = ("#0B5FFF", "#00A870", "#E37318", "#7B3FE4")
FONTS = ("Inter", "Source Sans 3", "IBM Plex Sans")
COMPETITORS = (
    "Expanse Robotics",
    "Cloudstart Systems",
    "Bonavia Data",
    "Clearmind IoT",
    "Unitech Analytics",
    "Newcourse Electronics",
)

ATTRS: dict[str, str] = {
    "campaign.venue": "venue",
    "campaign.leads": "qualified lead target",
    "campaign.owner": "event owner",
    "request.approved": "approved amount",
    "request.approver": "approver",
    "research.size": "market size",
    "research.growth": "annual growth rate",
    "research.author": "author",
    "press.spokesperson": "spokesperson",
    "press.event_date": "event date",
    "brandkit.color": "primary brand color",
    "brandkit.agency": "authorized design agency",
    "dept_budget.total": "budget total",
    "dept_budget.travel": "travel budget",
    "dept_budget.approver": "approver",
    "expense.spend": "actual quarterly spend",
    "expense.rate": "budget execution rate",
    "expense.presenter": "presenter",
    "audit.deadline": "remediation deadline",
    "audit.auditor": "auditor",
    "audit.owner": "remediation owner",
    "notice.cutoff": "claim submission deadline",
    "notice.contact": "contact person",
}
SUBJECTS: dict[str, str] = {
    "campaign": "{event} campaign plan",
    "request": "expense request {fr_no}",
    "research": "{region} {segment} market research report",
    "press": "press release {pr_no}",
    "brandkit": "{event} brand kit",
    "dept_budget": "{dept} Q{quarter} {year} budget",
    "expense": "{dept} Q{quarter} {year} expense review",
    "audit": "audit memo {am_no}",
    "notice": "{dept} Q{quarter} {year} reimbursement notice",
}
CHAINS: dict[str, dict[str, str]] = {
    "campaign_request": {
        "short": "{event} expense request approved amount",
        "medium": "How much was finally approved on the expense request for the {event}?",
        "long": "I'm closing out the {event}. The campaign plan gives an expense request number; what amount did "
        "finance finally approve on that request?",
    },
    "press_campaign_request": {
        "short": "{pr_no} event expense approver",
        "medium": "Who approved the expense request for the event announced in press release {pr_no}?",
        "long": "Press release {pr_no} announced a marketing event and I'm tracing that event's expense request. "
        "Who is the approver on the request?",
    },
    "audit_budget": {
        "short": "{am_no} budget travel",
        "medium": "What travel budget does the quarterly budget cited in audit memo {am_no} set?",
        "long": "Audit memo {am_no} says travel spending went over budget. I want to check the quarterly budget it "
        "cites: what is the travel amount in that budget?",
    },
}


def campaign(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="pptx",
        sections=[
            Section(
                "Event overview",
                [
                    f"Event: {f['event']}",
                    f"Plan number: {f['plan_no']}",
                    f"Date: {f['event_date']}",
                    f"Venue: {f['venue']}, {f['city']}",
                    f"Event owner: {f['owner']}",
                ],
                notes="Start with the background, then goals and budget.",
            ),
            Section(
                "Goals",
                [
                    f"Expected attendance: {f['guests']}",
                    f"Qualified leads: {f['leads']}",
                    "At least 10 customers signing letters of intent on site",
                ],
            ),
            Section(
                "Budget",
                [
                    f"Expense request: {f['fr_no']}",
                    f"Requested amount: ${f['requested']}",
                    "The request carries the line items.",
                ],
            ),
            Section(
                "Timeline",
                [],
                table=[
                    ["Phase", "Done by"],
                    ["Venue and speakers booked", f["t1"]],
                    ["Print materials ready", f["t2"]],
                    ["Event day", f["event_date"]],
                ],
            ),
        ],
    )


def request(f: dict[str, Any]) -> DocSpec:
    rows = [["Item", "Requested (USD)"], *[list(r) for r in f["rows"]], ["Total", f["requested"]]]
    return DocSpec(
        title=f["title"],
        file_type="xlsx",
        sections=[
            Section(
                "Request",
                [
                    f"Request number: {f['fr_no']}",
                    "Department: Marketing",
                    f"Campaign plan: {f['plan_no']}",
                    f"Requested by: {f['owner']}",
                    f"Requested amount: ${f['requested']}",
                ],
                table=rows,
            ),
            Section(
                "Decision",
                [
                    f"Approved amount: ${f['approved']}",
                    f"Approver: {f['approver']}",
                    f"Approval date: {f['approve_date']}",
                    "Comment: spend up to the approved amount; savings may not be reallocated.",
                ],
            ),
        ],
    )


def research(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="pdf",
        sections=[
            Section(
                "Summary",
                [
                    f"Report number: {f['mr_no']}",
                    f"Author: {f['author']}",
                    f"In {f['year']} the {f['segment']} market in the {f['region']} region is worth about "
                    f"{f['size']}, growing {f['growth']} a year.",
                ],
            ),
            Section(
                "Competition",
                [f"The main competitors are {f['competitors']}; the top three hold about {f['share']} of the market."],
            ),
            Section(
                "Recommendations",
                [
                    "Lead with industry solutions for manufacturers with revenue above $80 million.",
                    "Train channel partners so they can deliver the solutions.",
                ],
            ),
        ],
    )


def press(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type=f["ftype"],
        sections=[
            Section(
                f["headline"],
                [
                    f"{f['city']}, {f['pub_date']} - Acme Technologies today announced the {f['event']}, to be held in "
                    f"{f['city']} on {f['event_date']}.",
                    f'"We want to bring better products to customers together with our partners," said '
                    f"{f['spokesperson']}, {f['spokesperson_title']} of Acme Technologies.",
                    f"Release number: {f['pr_no']}",
                ],
            ),
            Section("About Acme Technologies", ["Acme Technologies builds enterprise software and smart hardware."]),
        ],
    )


def brandkit(f: dict[str, Any]) -> DocSpec:
    guide = DocSpec(
        title="Brand guidelines",
        file_type="md",
        sections=[
            Section(
                "Visual identity",
                [
                    f"Primary color: {f['color']}",
                    f"Typeface: {f['font']}",
                    "Keep clear space of half the logo height around the logo.",
                ],
            ),
        ],
    )
    items = DocSpec(
        title="Print list",
        file_type="txt",
        sections=[
            Section("Print items", [f"Roll-up banners: {f['banners']}", "Invitations: 500", "Badges: 300"]),
        ],
    )
    auth = DocSpec(
        title="Design authorization",
        file_type="docx",
        sections=[
            Section(
                "Authorization",
                [f"{f['agency']} is authorized as the design agency for the {f['event']} until {f['auth_until']}."],
            ),
        ],
    )
    return DocSpec(
        title=f["title"],
        file_type="zip",
        members=[
            ZipMember("brand-guidelines.md", guide),
            ZipMember("print-list.txt", items),
            ZipMember("design-authorization.docx", auth),
        ],
    )


def dept_budget(f: dict[str, Any]) -> DocSpec:
    rows = [["Budget line", "Amount (USD)"], *[list(r) for r in f["rows"]], ["Total", f["total"]]]
    return DocSpec(
        title=f["title"],
        file_type="xlsx",
        sections=[
            Section(
                "Budget",
                [
                    f"Budget number: {f['bg_no']}",
                    f"Department: {f['dept']}",
                    f"Period: Q{f['quarter']} {f['year']}",
                    f"Prepared by: {f['author']}",
                    f"Approved by: {f['approver']}",
                ],
                table=rows,
            )
        ],
    )


def expense(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="pptx",
        sections=[
            Section(
                "Overview",
                [
                    f"Presenter: {f['presenter']}",
                    f"Actual quarterly spend: ${f['spend']}",
                    f"Budget execution rate: {f['rate']}",
                    f"Budget reference: {f['bg_no']}",
                ],
                notes="Explain the variance drivers first.",
            ),
            Section(
                "Main variances",
                [
                    f"{f['over_item']} ran over the quarterly budget, mostly from bunched deliveries.",
                    "Training was under-spent as some courses moved to next quarter.",
                ],
            ),
            Section(
                "Next quarter", ["Enforce pre-approval of travel.", "Route equipment purchases through central buying."]
            ),
        ],
    )


def audit(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="docx",
        sections=[
            Section(
                "Scope",
                [
                    f"Audit number: {f['am_no']}",
                    f"Department audited: {f['dept']}",
                    f"Period: Q{f['quarter']} {f['year']}",
                    f"Criteria: quarterly budget {f['bg_no']}",
                    f"Auditor: {f['auditor']}",
                ],
            ),
            Section(
                "Findings",
                [
                    f"1. Travel spending reached {f['travel_rate']} of budget.",
                    "2. Some expense claims lack a pre-approval record.",
                ],
            ),
            Section(
                "Remediation",
                [
                    f"Remediation owner: {f['owner']}",
                    f"Remediation deadline: {f['deadline']}",
                    "Send a written report to Internal Audit when done.",
                ],
            ),
        ],
    )


def notice(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="txt",
        sections=[
            Section(
                "Notice",
                [
                    f"Dear colleagues, please submit {f['dept']} expense claims for Q{f['quarter']} "
                    f"{f['year']} to Finance by {f['cutoff']}; later claims roll over to next quarter.",
                    f"Reimbursements for the quarter will be paid on {f['pay_date']}.",
                    f"Questions: {f['contact']}",
                ],
            ),
        ],
    )


SUBJECT_ALIASES: dict[str, str] = {
    "campaign": "{event} planning slides",
    "research": "study of the {region} {segment} market",
    "brandkit": "{event} design assets archive",
    "dept_budget": "{dept} budget for Q{quarter} {year}",
    "expense": "{dept} spending review for Q{quarter} {year}",
    "notice": "{dept} expense-claim reminder for Q{quarter} {year}",
}
ATTR_ALIASES: dict[str, str] = {
    "campaign.venue": "location",
    "campaign.leads": "sales-lead goal",
    "campaign.owner": "organizer in charge",
    "request.approved": "amount finally granted",
    "request.approver": "signatory",
    "research.size": "total addressable market",
    "research.growth": "yearly growth",
    "research.author": "analyst who wrote it",
    "press.spokesperson": "executive quoted",
    "press.event_date": "date of the event",
    "brandkit.color": "main color code",
    "brandkit.agency": "design firm",
    "dept_budget.total": "grand total",
    "dept_budget.travel": "allowance for business trips",
    "dept_budget.approver": "executive who signed it",
    "expense.spend": "money actually spent",
    "expense.rate": "share of budget used",
    "expense.presenter": "speaker",
    "audit.deadline": "date fixes are due",
    "audit.auditor": "auditor on the case",
    "audit.owner": "person who must fix it",
    "notice.cutoff": "last day to file claims",
    "notice.contact": "person to ask",
}
