"""Chinese templates: company-wide policies and announcements, and personal work notes."""

from __future__ import annotations

from typing import Any

from drivebench.corpora.render.spec import DocSpec, Section

NOTE_TOPICS = ("季度目标拆解", "供应商来访接待", "系统上线回顾", "客户需求沟通", "年度培训安排", "办公室搬迁准备")
ADDRESSES = (
    "北京市海淀区中关村软件园二期 8 号楼",
    "北京市朝阳区望京东路 6 号院 3 号楼",
    "北京市昌平区未来科学城创新大厦 B 座",
)

ATTRS: dict[str, str] = {
    "handbook.leave": "入职满一年员工的年假天数",
    "handbook.probation": "试用期",
    "handbook.hours": "工作时间",
    "expense_policy.hotel": "一线城市住宿标准（元/晚）",
    "expense_policy.per_diem": "出差伙食补助（元/天）",
    "expense_policy.threshold": "需总经理审批的单笔报销金额（元）",
    "it_security.length": "密码最短长度",
    "it_security.rotation": "密码更换周期",
    "it_security.contact": "信息安全联系人",
    "announcement.address": "新办公地址",
    "announcement.move_date": "搬迁日期",
    "note.contact": "沟通对象",
    "note.due": "约定提交日期",
}
SUBJECTS: dict[str, str] = {
    "handbook": "员工手册",
    "expense_policy": "差旅费报销管理办法",
    "it_security": "信息安全管理规定",
    "announcement": "关于总部办公室搬迁的通知",
    "note": "{owner}的{topic}工作笔记",
}


def handbook(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="pdf",
        sections=[
            Section(
                "第一章 总则",
                ["本手册适用于艾克米科技全体员工，由人力资源部负责解释。", f"制定部门负责人：{f['author']}"],
            ),
            Section("第二章 工作时间", [f"公司实行标准工时制，工作时间为 {f['hours']}，午休一小时。"]),
            Section("第三章 试用期", [f"新员工试用期为{f['probation']}，表现优秀者可申请提前转正。"]),
            Section(
                "第四章 假期",
                [
                    f"员工入职满一年后，每年享有带薪年假 {f['leave']}，年假可跨年度顺延至次年 3 月底。",
                    "病假、婚假、产假按国家及地方规定执行。",
                ],
            ),
        ],
    )


def expense_policy(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="pdf",
        sections=[
            Section("第一条 适用范围", ["本办法适用于公司员工因公出差发生的交通、住宿及伙食费用。"]),
            Section(
                "第二条 住宿标准",
                [],
                table=[
                    ["城市类别", "住宿标准（元/晚）"],
                    ["一线城市", f["hotel"]],
                    ["省会城市", f["hotel2"]],
                    ["其他城市", f["hotel3"]],
                ],
            ),
            Section("第三条 伙食补助", [f"出差期间伙食补助为每天 {f['per_diem']} 元，按自然日计算。"]),
            Section(
                "第四条 审批权限",
                [
                    f"单笔报销金额超过 {f['threshold']} 元的，须经总经理审批。",
                    f"本办法由财务部负责解释，联系人：{f['author']}。",
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
                "账号与密码",
                [
                    f"密码最短长度为 {f['length']}，须包含大小写字母、数字和符号。",
                    f"密码更换周期为 {f['rotation']}，最近 5 次使用过的密码不得重复使用。",
                ],
            ),
            Section("远程访问", ["远程办公须通过公司 VPN 接入，禁止使用个人网盘传输公司文件。"]),
            Section("联系方式", [f"信息安全联系人：{f['contact']}"]),
        ],
    )


def announcement(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="txt",
        sections=[
            Section(
                "通知",
                [
                    "各位同事：",
                    f"因业务发展需要，公司总部将于 {f['move_date']} 搬迁至新址：{f['address']}。",
                    "搬迁期间请各部门提前打包个人物品，贵重物品自行保管。",
                    f"如有疑问请联系：{f['author']}",
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
                "记录",
                [
                    f"日期：{f['date']}",
                    f"主题：{f['topic']}",
                    f"今天与{f['contact']}沟通了{f['topic']}的安排。",
                    f"约定 {f['due']} 前提交初步方案。",
                ],
            ),
            Section("待办", ["整理会议要点发给相关同事", "更新项目计划表"]),
        ],
    )


SUBJECT_ALIASES: dict[str, str] = {
    "handbook": "公司的员工守则",
    "expense_policy": "出差报销规定",
    "it_security": "公司的网络安全制度",
    "announcement": "总部搬家的公告",
    "note": "{owner}关于{topic}的笔记",
}
ATTR_ALIASES: dict[str, str] = {
    "handbook.leave": "工作满一年后每年的带薪假",
    "handbook.probation": "试用时间",
    "handbook.hours": "上下班时间",
    "expense_policy.hotel": "北上广深酒店报销上限",
    "expense_policy.per_diem": "每日餐补",
    "expense_policy.threshold": "要总经理签字的报销金额门槛",
    "it_security.length": "密码长度下限",
    "it_security.rotation": "密码更换间隔",
    "it_security.contact": "安全问题对接人",
    "announcement.address": "搬去的地址",
    "announcement.move_date": "搬家日期",
    "note.contact": "沟通的人",
    "note.due": "方案交付日期",
}
