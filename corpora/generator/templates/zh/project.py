"""Chinese templates: R&D project documents (charter, plan, approval, minutes, weekly, review, delivery, budget)."""

from __future__ import annotations

from typing import Any

from drivebench.corpora.render.spec import DocSpec, Section, ZipMember

GOALS = (
    "建设统一的数据中台，打通各业务线的数据采集、治理与分析链路",
    "建设统一认证平台，实现全公司系统的单点登录与权限集中管理",
    "上线智能客服系统，将常见问题的自助解决率提升到七成以上",
    "搭建供应链协同平台，让供应商在线完成订单确认、发货与对账",
    "推出移动办公App，覆盖审批、考勤、通讯录等高频办公场景",
    "建设日志分析平台，实现全链路日志的集中采集、检索与告警",
    "重构计费系统，支持按量计费与套餐组合，消除月底人工对账",
    "建设企业知识库检索，让员工用自然语言快速找到制度与技术文档",
    "建设运维监控平台，统一指标、链路与告警，缩短故障定位时间",
    "升级订单中心，支撑大促期间订单量的三倍增长",
    "实现经营报表自动化，替代财务与运营部门的手工报表",
    "建设设备远程运维能力，支持现场设备的远程诊断与固件升级",
)
TASKS = ("压测环境搭建", "接口文档评审", "数据迁移方案", "安全评估", "监控告警接入", "灰度发布方案")
ROOMS = ("3楼 301 会议室", "5楼 星辰会议室", "12楼 大会议室", "2楼 视频会议室")
RISKS = (
    "第三方接口联调进度滞后，可能影响集成测试开始时间",
    "测试环境资源不足，性能压测需要与其他项目错峰进行",
    "核心开发人员本月有两人请假，排期存在压力",
    "上游数据源字段口径尚未确认，需要业务方尽快反馈",
)

ATTRS: dict[str, str] = {
    "charter.leader": "项目经理",
    "charter.sponsor": "项目发起人",
    "charter.budget": "项目总预算（元）",
    "charter.end": "计划结束日期",
    "tech_plan.qps": "峰值处理能力指标（QPS）",
    "tech_plan.db": "核心数据存储选型",
    "tech_plan.author": "编写人",
    "approval.approver": "审批人",
    "approval.approve_date": "审批日期",
    "minutes.action_owner": "待办事项“{task}”的负责人",
    "minutes.room": "会议地点",
    "weekly.progress": "整体进度百分比",
    "weekly.author": "汇报人",
    "review.golive": "正式上线日期",
    "review.chair": "评审组长",
    "delivery.signer": "验收签字人",
    "delivery.release": "发布版本号",
    "budget.cloud": "云资源费用（元）",
    "budget.reviewer": "财务审核人",
}
SUBJECTS: dict[str, str] = {
    "charter": "{project}项目章程",
    "tech_plan": "{project}技术方案",
    "approval": "审批单 {approval_no}",
    "minutes": "{project}项目启动会纪要",
    "weekly": "{project}项目第{week}周周报",
    "review": "{project}技术评审材料",
    "delivery": "{project}项目交付包",
    "budget": "{project}项目预算明细表",
}
CHAINS: dict[str, dict[str, str]] = {
    "code_plan_approval": {
        "short": "{code} 技术方案审批人",
        "medium": "项目编号为{code}的项目，其技术方案最终是由谁审批的？",
        "long": "我在整理项目档案，手头只有一个项目编号{code}，想知道这个项目的技术方案在审批单上最终签批的审批人是谁？",
    },
    "plan_approval": {
        "short": "{project}技术方案 审批日期",
        "medium": "{project}的技术方案是哪一天审批通过的？",
        "long": "我们要给{project}写阶段总结，需要写明技术方案的审批日期，请帮我从审批记录里查一下是哪一天批的。",
    },
    "minutes_review": {
        "short": "{project}启动会 评审材料 上线日期",
        "medium": "{project}项目启动会纪要里引用的技术评审材料中，正式上线日期是哪天？",
        "long": "启动会纪要里说{project}的上线计划以某份技术评审材料的里程碑为准，我想知道那份评审材料里写的正式上线日期是哪一天？",
    },
    "weekly_minutes_review": {
        "short": "{project}第{week}周周报 会议纪要 评审组长",
        "medium": "{project}项目第{week}周周报所依据的会议纪要中，引用的技术评审的评审组长是谁？",
        "long": "我在看{project}项目第{week}周的周报，它说依据的是某次会议纪要，而那份纪要又引用了一份技术评审材料，请问那次技术评审的评审组长是谁？",
    },
    "code_budget": {
        "short": "{code} 预算明细 云资源费用",
        "medium": "项目编号{code}的项目预算明细表中，云资源费用是多少？",
        "long": "财务在核对项目成本，只给了项目编号{code}，请帮我找到这个项目章程里提到的预算明细表，看看其中云资源一项的金额是多少。",
    },
}


def charter(f: dict[str, Any]) -> DocSpec:
    members = [["姓名", "项目角色", "部门"], *[list(m) for m in f["members"]]]
    return DocSpec(
        title=f["title"],
        file_type="docx",
        sections=[
            Section(
                "一、项目概况",
                [
                    f"项目名称：{f['project']}",
                    f"项目编号：{f['code']}",
                    f"发起部门：{f['dept']}",
                    f"项目发起人：{f['sponsor']}",
                    f"项目经理：{f['leader']}",
                    f"计划周期：{f['start_text']} 至 {f['end']}",
                ],
            ),
            Section(
                "二、项目目标",
                [
                    f"本项目旨在{f['goal']}。",
                    "项目完成后由项目发起人组织验收，验收通过后转入日常运维。",
                ],
            ),
            Section(
                "三、预算与资源",
                [
                    f"项目总预算为人民币 {f['budget']} 元，包含人力成本、硬件采购、云资源及外包服务等费用，"
                    f"各科目明细见《项目预算明细表》（编号 {f['budget_no']}）。",
                    "预算执行情况由财务部按月跟踪，超支 5% 以上须重新报批。",
                ],
            ),
            Section("四、项目组成员", [], table=members),
            Section(
                "五、技术路线",
                [
                    f"具体技术方案见《{f['project']}技术方案》（方案编号 {f['plan_no']}），方案须经审批后方可进入开发阶段。",
                ],
            ),
            Section("六、主要风险", [f"{f['risk']}。项目经理每周在周报中跟踪风险状态。"]),
        ],
    )


def tech_plan(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="pdf",
        sections=[
            Section(
                "1 文档信息",
                [
                    f"方案编号：{f['plan_no']}",
                    f"所属项目：{f['project']}",
                    f"编写人：{f['author']}",
                    f"审批单号：{f['approval_no']}",
                ],
            ),
            Section("2 背景与目标", [f"为{f['goal']}，研发中心组织编写本技术方案，作为开发、测试与上线的依据。"]),
            Section(
                "3 总体架构",
                [
                    f"系统采用{f['arch']}。",
                    f"核心数据存储选用 {f['db']}，按业务域分库，关键表保留 180 天历史数据。",
                ],
            ),
            Section(
                "4 性能与可用性指标",
                [],
                table=[
                    ["指标", "目标值"],
                    ["峰值处理能力", f"{f['qps']} QPS"],
                    ["服务可用性", f["availability"]],
                    ["P99 响应时间", f"{f['p99']} 毫秒"],
                ],
            ),
            Section("5 审批", [f"本方案已提交技术审批，审批记录见审批单 {f['approval_no']}。"]),
        ],
    )


def approval(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="xlsx",
        sections=[
            Section(
                "审批信息",
                [],
                table=[
                    ["字段", "内容"],
                    ["审批单号", f["approval_no"]],
                    ["审批事项", f"技术方案审批（方案编号 {f['plan_no']}）"],
                    ["申请人", f["applicant"]],
                    ["申请日期", f["apply_date"]],
                    ["审批人", f["approver"]],
                    ["审批结果", "同意"],
                    ["审批日期", f["approve_date"]],
                    ["审批意见", "同意按方案实施，请按评审意见完善监控与回滚预案。"],
                ],
            ),
            Section(
                "流转记录",
                [],
                table=[
                    ["节点", "处理人", "处理结果", "时间"],
                    ["提交申请", f["applicant"], "已提交", f["apply_date"]],
                    ["部门审核", f["reviewer"], "通过", f["apply_date"]],
                    ["最终审批", f["approver"], "同意", f["approve_date"]],
                ],
            ),
        ],
    )


def minutes(f: dict[str, Any]) -> DocSpec:
    actions = [["事项", "负责人", "截止日期"], *[list(a) for a in f["actions"]]]
    return DocSpec(
        title=f["title"],
        file_type="md",
        sections=[
            Section(
                "会议信息",
                [
                    f"会议编号：{f['minutes_no']}",
                    f"会议时间：{f['meeting_date']} 14:00-16:00",
                    f"会议地点：{f['room']}",
                    f"主持人：{f['leader']}",
                    f"参会人员：{f['attendees']}",
                    f"记录人：{f['recorder']}",
                ],
            ),
            Section("会议议题", ["1. 项目目标与范围确认", "2. 技术选型讨论", "3. 里程碑计划与分工"]),
            Section(
                "会议决议",
                [
                    f"1. 核心数据存储采用 {f['db']}。",
                    f"2. 项目上线计划以技术评审材料 {f['review_no']} 中的里程碑为准。",
                    "3. 项目组每周五提交周报，风险项由项目经理统一跟踪。",
                ],
            ),
            Section("待办事项", [], table=actions),
        ],
    )


def weekly(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="txt",
        sections=[
            Section(
                "基本信息",
                [f"汇报人：{f['author']}", f"汇报周期：{f['period']}", f"工作依据：项目例会纪要 {f['minutes_no']}"],
            ),
            Section(
                "本周进展",
                [
                    f"整体进度：{f['progress']}",
                    f"完成了{f['done']}，相关代码已合入主干并通过评审。",
                ],
            ),
            Section("风险与问题", [f"{f['risk']}。"]),
            Section("下周计划", [f"推进{f['next']}，周三前完成联调。"]),
        ],
    )


def review(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="pptx",
        sections=[
            Section(
                "评审概况",
                [
                    f"评审编号：{f['review_no']}",
                    f"所属项目：{f['project']}",
                    f"评审组长：{f['chair']}",
                    f"评审专家：{f['panel']}",
                    f"评审日期：{f['review_date']}",
                ],
                notes="开场先说明评审范围，只讨论架构与里程碑，不讨论预算。",
            ),
            Section("架构方案", [f"总体架构：{f['arch']}", f"数据存储：{f['db']}"]),
            Section(
                "里程碑计划",
                [],
                table=[
                    ["里程碑", "计划日期"],
                    ["概要设计评审", f["m1"]],
                    ["开发完成", f["m2"]],
                    ["系统测试完成", f["m3"]],
                    ["正式上线", f["golive"]],
                ],
            ),
            Section(
                "评审结论",
                ["方案整体可行，同意进入开发阶段。", "请补充容量规划与回滚预案，两周内提交。"],
                notes="结论由评审组长当场宣布。",
            ),
        ],
    )


def delivery(f: dict[str, Any]) -> DocSpec:
    checklist = DocSpec(
        title=f"{f['project']}交付清单",
        file_type="md",
        sections=[
            Section(
                "交付物",
                [f"发布版本：{f['release']}", "1. 源代码及构建脚本", "2. 部署手册", "3. 测试报告", "4. 运维交接文档"],
            ),
        ],
    )
    report = DocSpec(
        title=f"{f['project']}验收报告",
        file_type="docx",
        sections=[
            Section(
                "验收结论",
                [
                    f"经验收，{f['project']}（版本 {f['release']}）满足需求规格说明书的要求，同意通过验收。",
                    f"验收签字人：{f['signer']}",
                    f"验收日期：{f['accept_date']}",
                ],
            ),
        ],
    )
    deploy = DocSpec(
        title="部署说明",
        file_type="txt",
        sections=[
            Section(
                "部署环境",
                [
                    f"生产环境服务器：{f['servers']} 台",
                    "部署窗口：周六 22:00 至次日 02:00",
                    "回滚方式：保留上一版本镜像，一键回滚。",
                ],
            ),
        ],
    )
    return DocSpec(
        title=f["title"],
        file_type="zip",
        members=[
            ZipMember("交付清单.md", checklist),
            ZipMember("验收报告.docx", report),
            ZipMember("部署说明.txt", deploy),
        ],
    )


def budget(f: dict[str, Any]) -> DocSpec:
    rows = [["费用科目", "金额（元）", "说明"], *[list(r) for r in f["rows"]], ["合计", f["total"], ""]]
    return DocSpec(
        title=f["title"],
        file_type="xlsx",
        sections=[
            Section(
                "预算概要",
                [
                    f"预算编号：{f['budget_no']}",
                    f"所属项目：{f['project']}",
                    f"预算总额：{f['total']} 元",
                    f"财务审核：{f['reviewer']}",
                ],
                table=rows,
            ),
        ],
    )


BUDGET_ITEMS = (
    ("人力成本", "项目组成员工时折算"),
    ("硬件采购", "服务器与网络设备"),
    ("云资源", "公有云计算、存储与带宽"),
    ("外包服务", "外包开发与测试"),
    ("差旅及其他", "出差、会议与培训费用"),
)
ROLE_NAMES = ("项目经理", "项目助理", "项目成员", "外部成员")

# question-side wording that avoids the documents' own labels (paraphrased questions)
SUBJECT_ALIASES: dict[str, str] = {
    "charter": "{project}的立项文件",
    "tech_plan": "{project}的方案设计文档",
    "minutes": "{project}开工会的会议记录",
    "weekly": "{project}第{week}周的进展汇报",
    "review": "{project}评审会的幻灯片",
    "delivery": "{project}的交付材料压缩包",
    "budget": "{project}的费用预算表格",
}
ATTR_ALIASES: dict[str, str] = {
    "charter.leader": "项目负责人",
    "charter.sponsor": "发起领导",
    "charter.budget": "总投资额度",
    "charter.end": "预计完工时间",
    "tech_plan.qps": "每秒请求处理能力目标",
    "tech_plan.db": "选用的数据库",
    "tech_plan.author": "撰写者",
    "approval.approver": "批准人",
    "approval.approve_date": "批准时间",
    "minutes.action_owner": "“{task}”这项任务的责任人",
    "minutes.room": "开会的房间",
    "weekly.progress": "完成比例",
    "weekly.author": "撰写人",
    "review.golive": "上线时间",
    "review.chair": "评审主持人",
    "delivery.signer": "验收人",
    "delivery.release": "版本号",
    "budget.cloud": "云服务开销",
    "budget.reviewer": "财务复核人",
}
