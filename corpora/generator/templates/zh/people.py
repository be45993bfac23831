"""Chinese templates: HR (offer letters, onboarding guide, training plan, salary adjustments) and legal
(NDA, compliance memo, legal opinion, signed-contract archive)."""

from __future__ import annotations

from typing import Any

from drivebench.corpora.render.spec import DocSpec, Section, ZipMember

RISK_LEVELS = ("低", "中", "高")
PURPOSES = ("联合开发工业物联网解决方案", "共同投标智慧园区项目", "评估数据平台技术合作", "开展渠道代理合作")

ATTRS: dict[str, str] = {
    "offer.salary": "月薪（元）",
    "offer.position": "录用职位",
    "offer.start": "报到日期",
    "onboarding.report": "报到日期",
    "onboarding.site": "报到地点",
    "onboarding.it_contact": "IT 账号开通联系人",
    "training.pass_score": "考核合格分数线",
    "training.trainer": "“{course}”课程的讲师",
    "salary.new_salary": "{employee}调整后的月薪（元）",
    "salary.approver": "审批人",
    "nda.term": "保密期限",
    "nda.arbitration": "争议解决机构",
    "nda.signatory": "我方签署人",
    "compliance.owner": "责任人",
    "compliance.deadline": "完成期限",
    "opinion.risk": "风险等级",
    "opinion.author": "出具律师",
    "archive.seal_approver": "用印审批人",
    "archive.seal_date": "用印日期",
}
SUBJECTS: dict[str, str] = {
    "offer": "{candidate}的录用通知书",
    "onboarding": "第{batch}批新员工入职指引",
    "training": "第{batch}批新员工培训计划",
    "salary": "2026年第{batch}批薪酬调整表",
    "nda": "与{partner}的保密协议",
    "compliance": "合规备忘录 {cm_no}",
    "opinion": "法律意见书 {lo_no}",
    "archive": "{partner}合作协议签署归档包",
}
CHAINS: dict[str, dict[str, str]] = {
    "onboarding_training": {
        "short": "第{batch}批入职 培训计划 {course}讲师",
        "medium": "第{batch}批新员工入职指引中提到的培训计划里，“{course}”课程由谁讲授？",
        "long": "我是第{batch}批入职的新同事，入职指引里附了一个培训计划编号，想提前了解一下“{course}”这门课是哪位老师来讲？",
    },
    "offer_onboarding_training": {
        "short": "{candidate} 入职批次 培训合格分数线",
        "medium": "{candidate}入职所在批次的新员工培训计划中，考核合格分数线是多少分？",
        "long": "我们刚给{candidate}发了录用通知，通知里写了入职批次，请帮我查一下这一批新员工的培训计划里考核合格分数线是多少分？",
    },
    "opinion_nda": {
        "short": "{lo_no} 保密协议 期限",
        "medium": "法律意见书 {lo_no} 所依据的保密协议约定的保密期限是多久？",
        "long": "法律意见书 {lo_no} 的结论建立在一份保密协议之上，我想确认那份保密协议约定的保密期限是多久？",
    },
    "memo_opinion_nda": {
        "short": "{cm_no} 法律意见书 保密协议签署人",
        "medium": "合规备忘录 {cm_no} 引用的法律意见书所涉及的保密协议，是由我方哪位签署的？",
        "long": "合规备忘录 {cm_no} 里引用了一份法律意见书，而意见书又涉及一份保密协议，我需要知道这份保密协议我方的签署人是谁。",
    },
}


def offer(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="docx",
        sections=[
            Section(
                "录用通知",
                [
                    f"尊敬的{f['candidate']}：",
                    f"经过面试评估，我们很高兴地通知您，您已被艾克米科技录用为{f['dept']}{f['position']}。",
                    f"您的月薪为税前 {f['salary']} 元，试用期 {f['probation']} 个月，试用期工资为正式工资的 90%。",
                    f"请于 {f['start']} 到{f['site']}报到，并参加第{f['batch']}批新员工入职培训。",
                ],
            ),
            Section(
                "其他",
                [f"通知编号：{f['offer_no']}", f"人力资源联系人：{f['hr_contact']}", "本通知有效期为 7 个工作日。"],
            ),
        ],
    )


def onboarding(f: dict[str, Any]) -> DocSpec:
    mentors = [["新员工", "部门", "导师"], *[list(r) for r in f["mentors"]]]
    return DocSpec(
        title=f["title"],
        file_type="md",
        sections=[
            Section(
                "报到安排",
                [
                    f"报到日期：{f['report']} 上午 9:00",
                    f"报到地点：{f['site']}",
                    "请携带身份证、学历证书及离职证明原件。",
                ],
            ),
            Section(
                "第一周安排",
                [
                    f"入职培训按培训计划 {f['tr_no']} 执行。",
                    f"IT 账号开通联系人：{f['it_contact']}",
                    "工牌、电脑于报到当天下午领取。",
                ],
            ),
            Section("导师分配", [], table=mentors),
        ],
    )


def training(f: dict[str, Any]) -> DocSpec:
    rows = [["课程", "讲师", "日期", "课时"], *[list(r) for r in f["courses"]]]
    return DocSpec(
        title=f["title"],
        file_type="pptx",
        sections=[
            Section(
                "培训概况",
                [f"培训计划编号：{f['tr_no']}", f"组织人：{f['organizer']}", f"培训对象：第{f['batch']}批新员工"],
                notes="提醒学员提前安装会议软件。",
            ),
            Section("课程安排", [], table=rows),
            Section(
                "考核方式", ["培训结束后进行闭卷考试。", f"考核合格分数线：{f['pass_score']} 分，未通过者需参加补考。"]
            ),
        ],
    )


def salary(f: dict[str, Any]) -> DocSpec:
    rows = [["姓名", "部门", "调整前月薪（元）", "调整后月薪（元）"], *[list(r) for r in f["rows"]]]
    return DocSpec(
        title=f["title"],
        file_type="xlsx",
        sections=[
            Section(
                "薪酬调整",
                [f"调整批次：{f['year']}年第{f['batch']}批", f"审批人：{f['approver']}", "本表为机密文件，严禁外传。"],
                table=rows,
            )
        ],
    )


def nda(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="docx",
        sections=[
            Section("协议双方", [f"协议编号：{f['nda_no']}", "甲方：艾克米科技有限公司", f"乙方：{f['partner']}"]),
            Section("合作目的", [f"双方为{f['purpose']}，需相互披露保密信息。"]),
            Section("保密期限", [f"本协议保密期限为{f['term']}，自 {f['effective']} 起算。"]),
            Section("争议解决", [f"因本协议引起的争议，提交{f['arbitration']}仲裁。"]),
            Section("签署", [f"甲方签署人：{f['signatory']}", f"乙方签署人：{f['partner_rep']}"]),
        ],
    )


def compliance(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="md",
        sections=[
            Section(
                "背景",
                [
                    f"编号：{f['cm_no']}",
                    f"主题：{f['topic']}",
                    f"与{f['partner']}的合作涉及{f['topic']}要求，法律分析见法律意见书 {f['lo_no']}。",
                ],
            ),
            Section("要求", ["1. 合作中涉及的数据须按最小必要原则处理。", "2. 相关合同须增加合规条款。"]),
            Section("落实", [f"责任人：{f['owner']}", f"完成期限：{f['deadline']}"]),
        ],
    )


def opinion(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="pdf",
        sections=[
            Section(
                "基本情况",
                [
                    f"意见书编号：{f['lo_no']}",
                    f"出具律师：{f['author']}",
                    f"事项：与{f['partner']}的合作",
                    f"依据文件：保密协议 {f['nda_no']}",
                ],
            ),
            Section("法律分析", ["经审查，合作模式本身不违反现行法律法规。", "但数据交换环节需要补充安全评估。"]),
            Section("结论", [f"风险等级：{f['risk']}", "建议在签署正式合作协议前完成数据安全评估。"]),
        ],
    )


def archive(f: dict[str, Any]) -> DocSpec:
    seal = DocSpec(
        title="用印申请单",
        file_type="docx",
        sections=[
            Section(
                "用印申请",
                [
                    f"申请人：{f['applicant']}",
                    f"用印文件：与{f['partner']}的合作协议",
                    f"用印审批人：{f['seal_approver']}",
                    f"用印日期：{f['seal_date']}",
                ],
            ),
        ],
    )
    scan = DocSpec(
        title="协议扫描件说明",
        file_type="txt",
        sections=[
            Section("说明", ["原件一式两份，甲乙双方各执一份。", "扫描件已与原件核对一致。"]),
        ],
    )
    index = DocSpec(
        title="归档目录",
        file_type="md",
        sections=[
            Section("目录", ["1. 用印申请单", "2. 协议扫描件说明", f"归档编号：{f['archive_no']}"]),
        ],
    )
    return DocSpec(
        title=f["title"],
        file_type="zip",
        members=[
            ZipMember("归档目录.md", index),
            ZipMember("用印申请单.docx", seal),
            ZipMember("协议扫描件说明.txt", scan),
        ],
    )


TERMS = ("两年", "三年", "五年")

SUBJECT_ALIASES: dict[str, str] = {
    "offer": "发给{candidate}的offer",
    "onboarding": "第{batch}批新人的入职须知",
    "training": "第{batch}批新人培训的课程表",
    "nda": "和{partner}签的NDA",
    "archive": "{partner}协议的用印归档材料",
}
ATTR_ALIASES: dict[str, str] = {
    "offer.salary": "每月工资",
    "offer.position": "岗位",
    "offer.start": "入职日期",
    "onboarding.report": "第一天上班的日期",
    "onboarding.site": "报到的办公楼",
    "onboarding.it_contact": "开通电脑账号的对接人",
    "training.pass_score": "考试及格线",
    "training.trainer": "“{course}”的授课老师",
    "salary.new_salary": "{employee}调薪后的工资",
    "salary.approver": "批准调薪的领导",
    "nda.term": "保密年限",
    "nda.arbitration": "仲裁机构",
    "nda.signatory": "我方签字人",
    "compliance.owner": "负责落实的人",
    "compliance.deadline": "截止时间",
    "opinion.risk": "风险评级",
    "opinion.author": "撰写律师",
    "archive.seal_approver": "批准盖章的领导",
    "archive.seal_date": "盖章日期",
}
