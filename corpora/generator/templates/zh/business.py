"""Chinese templates: marketing campaigns and finance (campaign deck, expense request, market research,
press release, brand kit; department budget, expense analysis, audit memo, reimbursement notice)."""

from __future__ import annotations

from typing import Any

from drivebench.corpora.render.spec import DocSpec, Section, ZipMember

SEASONS = ("春季", "秋季")
REQUEST_ITEMS = ("场地租赁", "物料制作", "直播推广", "嘉宾差旅")
BUDGET_ITEMS = ("人员薪酬", "差旅费", "设备购置", "培训费", "办公及其他")
COLORS = ("#0B5FFF", "#00A870", "#E37318", "#7B3FE4")
FONTS = ("思源黑体", "阿里巴巴普惠体", "HarmonyOS Sans")
COMPETITORS = ("华拓智能", "云启科技", "博纳信息", "中睿物联", "联科数据", "新航电子")

ATTRS: dict[str, str] = {
    "campaign.venue": "活动场地",
    "campaign.leads": "有效线索目标（条）",
    "campaign.owner": "活动负责人",
    "request.approved": "批准金额（元）",
    "request.approver": "审批人",
    "research.size": "市场规模",
    "research.growth": "年增长率",
    "research.author": "报告作者",
    "press.spokesperson": "发言人",
    "press.event_date": "活动日期",
    "brandkit.color": "品牌主色",
    "brandkit.agency": "授权设计代理机构",
    "dept_budget.total": "预算总额（元）",
    "dept_budget.travel": "差旅费预算（元）",
    "dept_budget.approver": "批准人",
    "expense.spend": "季度实际支出（元）",
    "expense.rate": "预算执行率",
    "expense.presenter": "汇报人",
    "audit.deadline": "整改期限",
    "audit.auditor": "审计人员",
    "audit.owner": "整改责任人",
    "notice.cutoff": "报销材料提交截止日期",
    "notice.contact": "联系人",
}
SUBJECTS: dict[str, str] = {
    "campaign": "{event}活动策划方案",
    "request": "费用申请单 {fr_no}",
    "research": "{region}{segment}市场调研报告",
    "press": "新闻稿 {pr_no}",
    "brandkit": "{event}品牌物料包",
    "dept_budget": "{dept}{year}年第{quarter}季度预算表",
    "expense": "{dept}{year}年第{quarter}季度费用分析",
    "audit": "审计意见书 {am_no}",
    "notice": "{dept}{year}年第{quarter}季度报销通知",
}
CHAINS: dict[str, dict[str, str]] = {
    "campaign_request": {
        "short": "{event} 费用申请 批准金额",
        "medium": "{event}的费用申请最终批准的金额是多少？",
        "long": "我负责{event}的结算，策划方案里写了费用申请单号，请帮我查一下那张申请单上财务最终批准的金额是多少？",
    },
    "press_campaign_request": {
        "short": "{pr_no} 活动 费用审批人",
        "medium": "新闻稿 {pr_no} 宣布的那场活动，其费用申请是由谁审批的？",
        "long": "对外发布的新闻稿 {pr_no} 宣布了一场市场活动，我想追溯这场活动的费用申请，请问申请单上的审批人是谁？",
    },
    "audit_budget": {
        "short": "{am_no} 预算表 差旅费",
        "medium": "审计意见书 {am_no} 所依据的季度预算表中，差旅费预算是多少？",
        "long": "审计意见书 {am_no} 指出差旅费超支，我想核对它所依据的那份季度预算表，请问表里差旅费的预算金额是多少？",
    },
}


def campaign(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="pptx",
        sections=[
            Section(
                "活动概况",
                [
                    f"活动名称：{f['event']}",
                    f"策划编号：{f['plan_no']}",
                    f"活动时间：{f['event_date']}",
                    f"活动场地：{f['city']}{f['venue']}",
                    f"活动负责人：{f['owner']}",
                ],
                notes="先介绍活动背景，再讲目标与预算。",
            ),
            Section(
                "活动目标",
                [f"预计到场 {f['guests']} 人", f"收集有效线索 {f['leads']} 条", "现场签约意向客户不少于 10 家"],
            ),
            Section("预算", [f"费用申请单：{f['fr_no']}", f"申请金额：{f['requested']} 元", "费用明细以申请单为准。"]),
            Section(
                "执行排期",
                [],
                table=[
                    ["阶段", "完成时间"],
                    ["确定场地与嘉宾", f["t1"]],
                    ["物料制作完成", f["t2"]],
                    ["活动执行", f["event_date"]],
                ],
            ),
        ],
    )


def request(f: dict[str, Any]) -> DocSpec:
    rows = [["费用项目", "申请金额（元）"], *[list(r) for r in f["rows"]], ["合计", f["requested"]]]
    return DocSpec(
        title=f["title"],
        file_type="xlsx",
        sections=[
            Section(
                "申请信息",
                [
                    f"申请单号：{f['fr_no']}",
                    "申请部门：市场部",
                    f"关联策划：{f['plan_no']}",
                    f"申请人：{f['owner']}",
                    f"申请金额：{f['requested']} 元",
                ],
                table=rows,
            ),
            Section(
                "审批结果",
                [
                    f"批准金额：{f['approved']} 元",
                    f"审批人：{f['approver']}",
                    f"审批日期：{f['approve_date']}",
                    "审批意见：按批准金额执行，结余不得挪用。",
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
                "摘要",
                [
                    f"报告编号：{f['mr_no']}",
                    f"作者：{f['author']}",
                    f"{f['year']}年{f['region']}地区{f['segment']}市场规模约为 {f['size']}，年增长率 {f['growth']}。",
                ],
            ),
            Section("竞争格局", [f"主要竞争对手为{f['competitors']}，前三名合计占有约 {f['share']} 的市场份额。"]),
            Section(
                "建议",
                [
                    "以行业解决方案切入重点客户，优先覆盖年营收 5 亿元以上的制造企业。",
                    "加强渠道伙伴培训，提高方案交付能力。",
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
                    f"（{f['city']}，{f['pub_date']}）艾克米科技今日宣布，将于 {f['event_date']} 在{f['city']}举办{f['event']}。",
                    f"艾克米科技{f['spokesperson_title']}{f['spokesperson']}表示：“我们希望与合作伙伴一起，把更好的产品带给客户。”",
                    f"新闻稿编号：{f['pr_no']}",
                ],
            ),
            Section("关于艾克米科技", ["艾克米科技是一家专注于企业数字化与智能硬件的科技公司。"]),
        ],
    )


def brandkit(f: dict[str, Any]) -> DocSpec:
    guide = DocSpec(
        title="品牌规范",
        file_type="md",
        sections=[
            Section(
                "视觉规范",
                [f"品牌主色：{f['color']}", f"标准字体：{f['font']}", "Logo 四周留白不少于 Logo 高度的一半。"],
            ),
        ],
    )
    items = DocSpec(
        title="物料清单",
        file_type="txt",
        sections=[
            Section("印刷物料", [f"易拉宝 {f['banners']} 个", "邀请函 500 份", "胸牌 300 个"]),
        ],
    )
    auth = DocSpec(
        title="设计授权书",
        file_type="docx",
        sections=[
            Section("授权", [f"兹授权{f['agency']}为{f['event']}的视觉设计代理机构，授权期至 {f['auth_until']}。"]),
        ],
    )
    return DocSpec(
        title=f["title"],
        file_type="zip",
        members=[ZipMember("品牌规范.md", guide), ZipMember("物料清单.txt", items), ZipMember("设计授权书.docx", auth)],
    )


def dept_budget(f: dict[str, Any]) -> DocSpec:
    rows = [["预算科目", "预算金额（元）"], *[list(r) for r in f["rows"]], ["合计", f["total"]]]
    return DocSpec(
        title=f["title"],
        file_type="xlsx",
        sections=[
            Section(
                "预算表",
                [
                    f"预算编号：{f['bg_no']}",
                    f"部门：{f['dept']}",
                    f"预算期间：{f['year']}年第{f['quarter']}季度",
                    f"编制人：{f['author']}",
                    f"批准人：{f['approver']}",
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
                "概览",
                [
                    f"汇报人：{f['presenter']}",
                    f"季度实际支出：{f['spend']} 元",
                    f"预算执行率：{f['rate']}",
                    f"对应预算表：{f['bg_no']}",
                ],
                notes="重点解释执行率偏差的原因。",
            ),
            Section(
                "主要偏差",
                [f"{f['over_item']}超出季度预算，主要由于项目集中交付。", "培训费执行偏低，部分课程延期至下季度。"],
            ),
            Section("下季度建议", ["严格执行差旅事前审批。", "设备采购统一走集采流程。"]),
        ],
    )


def audit(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="docx",
        sections=[
            Section(
                "审计概况",
                [
                    f"审计编号：{f['am_no']}",
                    f"被审计部门：{f['dept']}",
                    f"审计期间：{f['year']}年第{f['quarter']}季度",
                    f"审计依据：季度预算表 {f['bg_no']}",
                    f"审计人员：{f['auditor']}",
                ],
            ),
            Section(
                "审计发现", [f"1. 差旅费执行率达到 {f['travel_rate']}，超出预算。", "2. 部分报销单据缺少事前审批记录。"]
            ),
            Section(
                "整改要求",
                [f"整改责任人：{f['owner']}", f"整改期限：{f['deadline']}", "整改完成后提交书面报告至审计部。"],
            ),
        ],
    )


def notice(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="txt",
        sections=[
            Section(
                "通知",
                [
                    f"各位同事：{f['dept']}{f['year']}年第{f['quarter']}季度的费用报销材料请于 {f['cutoff']} 前提交财务部，"
                    "逾期将顺延至下季度处理。",
                    f"本季度报销款预计于 {f['pay_date']} 统一支付。",
                    f"如有疑问请联系：{f['contact']}",
                ],
            ),
        ],
    )


SUBJECT_ALIASES: dict[str, str] = {
    "campaign": "{event}的策划幻灯片",
    "research": "关于{region}{segment}市场的研究报告",
    "brandkit": "{event}的视觉物料压缩包",
    "dept_budget": "{dept}{year}年Q{quarter}的预算",
    "expense": "{dept}{year}年Q{quarter}的花费复盘",
    "notice": "{dept}{year}年Q{quarter}报销提醒",
}
ATTR_ALIASES: dict[str, str] = {
    "campaign.venue": "举办地点",
    "campaign.leads": "销售线索目标",
    "campaign.owner": "牵头人",
    "request.approved": "最终核准金额",
    "request.approver": "批准人",
    "research.size": "市场容量",
    "research.growth": "增速",
    "research.author": "撰写人",
    "press.spokesperson": "接受引述的高管",
    "press.event_date": "举办日期",
    "brandkit.color": "主色调色值",
    "brandkit.agency": "设计代理公司",
    "dept_budget.total": "预算合计",
    "dept_budget.travel": "出差费用额度",
    "dept_budget.approver": "批准预算的领导",
    "expense.spend": "实际花费",
    "expense.rate": "预算完成比例",
    "expense.presenter": "讲解人",
    "audit.deadline": "整改截止时间",
    "audit.auditor": "负责审计的同事",
    "audit.owner": "负责整改的人",
    "notice.cutoff": "报销截止日",
    "notice.contact": "咨询对接人",
}
