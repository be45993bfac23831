"""Chinese: formatting, folder names, question phrasing."""

from __future__ import annotations

import random
import re
from datetime import datetime

FOLDERS: dict[str, str] = {
    "public": "公共空间",
    "policies": "公司制度",
    "news": "新闻公告",
    "depts": "部门空间",
    "projects": "项目空间",
    "archive": "归档",
    "closed": "已结项项目",
    "drafts": "历史草稿",
    "personal": "个人空间",
    "weekly": "周报",
    "reviews": "技术评审",
    "drawings": "图纸库",
    "released": "已发布",
    "inspections": "检验报告",
    "budgets": "预算",
    "reports": "财务报表",
    "requests": "费用申请",
    "contracts": "采购合同",
    "notices": "财务通知",
    "recruiting": "招聘",
    "training": "培训",
    "payroll": "薪酬",
    "legal_contracts": "合同",
    "signed": "已签署归档",
    "legal_review": "合同审查",
    "compliance": "合规",
    "events": "活动",
    "brand": "品牌",
    "research": "市场调研",
    "p_docs": "项目文档",
    "p_meetings": "会议纪要",
    "p_delivery": "交付",
    "p_finance": "项目财务",
    "roadmap": "路线图",
}
LONG_CONTEXTS = (
    "我正在准备下周部门例会的汇报材料",
    "我是刚加入团队的新同事，正在熟悉相关资料",
    "月底对账时发现有几处数据需要核对",
    "客户那边来电询问了相关情况，我得给个准确答复",
    "我在整理本季度的复盘报告",
    "领导让我今天下班前把这件事确认清楚",
)
_INTERROG = {
    "who": "是谁",
    "amount": "是多少",
    "date": "是哪一天",
    "what": "是什么",
    "number": "是多少",
    "org": "是哪家公司",
}


def fmt_date(d: datetime) -> str:
    return f"{d.year}年{d.month}月{d.day}日"


def fmt_money(amount: int) -> str:
    """An amount in yuan with thousands separators (the fact string; templates add the unit)."""
    return f"{amount:,}"


def money(amount: int) -> str:
    return f"{amount:,}元"


def pct(value: float) -> str:
    return f"{value:.1f}%"


def join_names(names: list[str]) -> str:
    return "、".join(names)


def single_question(
    rng: random.Random, style: str, subject: str, attr: str, answer: str, mode: str, when: str = ""
) -> str:
    """A question about one document. ``mode``: ``plain``, ``latest``, ``original`` or ``as_of`` (``when``)."""
    q = _INTERROG[answer]
    if style == "short":
        lead = {"plain": "", "latest": "最新 ", "original": "第1版 ", "as_of": f"{when} "}[mode]
        return f"{lead}{subject} {attr}"
    if style == "medium":
        if mode == "as_of":
            return f"截至{when}，{subject}中的{attr}{q}？"
        if mode == "original":
            return f"{subject}最初版本中的{attr}{q}？"
        if mode == "latest":
            return f"{subject}最新版本中的{attr}{q}？"
        return rng.choice([f"{subject}中的{attr}{q}？", f"{subject}里写的{attr}{q}？", f"请问{subject}的{attr}{q}？"])
    ctx = rng.choice(LONG_CONTEXTS)
    if mode == "as_of":
        return f"{ctx}，需要还原{when}那时的情况：当时{subject}中的{attr}{q}？麻烦以当时的版本为准。"
    if mode == "original":
        return f"{ctx}，想对比一下改动前后的差异：{subject}最早的第一版里，{attr}{q}？"
    if mode == "latest":
        return f"{ctx}，听说{subject}改过好几版了，按最新版本来看，{attr}{q}？"
    return rng.choice(
        [
            f"{ctx}，想确认一下{subject}中记载的{attr}{q}，麻烦帮我查一下原文。",
            f"{ctx}。请帮我翻一下{subject}，看看里面写的{attr}{q}？",
            f"{ctx}，需要引用{subject}里的准确信息：其中的{attr}{q}？",
        ]
    )


def content_question(
    rng: random.Random, style: str, subject: str, attr: str, answer: str, mode: str, when: str = ""
) -> str:
    """A question about a drawing that names what it is about (``subject``: ``料号 41001-8423-1 的零件``,
    ``外形尺寸 220 × 160 × 48 mm 的产品``), never the drawing's title or number. Same styles and modes as
    ``single_question``."""
    q = _INTERROG[answer]
    if style == "short":
        lead = {"plain": "", "latest": "最新 ", "original": "第1版 ", "as_of": f"{when} "}[mode]
        return f"{lead}{subject} {attr}"
    if style == "medium":
        if mode == "as_of":
            return f"截至{when}，{subject}图纸上的{attr}{q}？"
        if mode == "original":
            return f"{subject}最早一版图纸中的{attr}{q}？"
        if mode == "latest":
            return f"{subject}最新版图纸中的{attr}{q}？"
        return rng.choice(
            [
                f"{subject}，图纸上标注的{attr}{q}？",
                f"请问{subject}图纸上的{attr}{q}？",
                f"{subject}图纸里写的{attr}{q}？",
            ]
        )
    ctx = rng.choice(LONG_CONTEXTS)
    if mode == "as_of":
        return f"{ctx}，需要还原{when}那时的情况：当时{subject}图纸上的{attr}{q}？麻烦以当时的版本为准。"
    if mode == "original":
        return f"{ctx}，想对比一下改动前后的差异：{subject}最早的第一版图纸里，{attr}{q}？"
    if mode == "latest":
        return f"{ctx}，听说{subject}图纸改过好几版了，按最新版本来看，{attr}{q}？"
    return rng.choice(
        [
            f"{ctx}，想确认一下{subject}图纸上标注的{attr}{q}，麻烦帮我查一下原图。",
            f"{ctx}。请帮我翻一下{subject}图纸，看看上面写的{attr}{q}？",
            f"{ctx}，需要引用{subject}图纸里的准确信息：其中的{attr}{q}？",
        ]
    )


_TOKEN = re.compile(r"[\u3400-\u9fff]|[A-Za-z0-9][A-Za-z0-9.,:%#+/-]*")


def style_of(text: str) -> str:
    """The length bucket of a question, counting each Chinese character and each Latin/number run as
    one unit: short <= 16 units, medium <= 36, long above."""
    n = len(_TOKEN.findall(text))
    return "short" if n <= 16 else "medium" if n <= 36 else "long"


VERSION_NOTES: dict[str, str] = {
    "budget": "根据评审意见调整预算",
    "end": "调整项目结束日期",
    "qps": "更新性能指标",
    "approver": "审批流程调整，更换审批人",
    "material": "变更材料",
    "thickness": "调整壁厚",
    "approver_dwg": "重新签批",
    "price": "更新采购单价",
    "amount": "签署补充协议，调整合同金额",
    "venue": "活动场地变更",
    "kpi": "调整活动目标",
    "total": "年中预算调整",
    "leave": "修订年假规定",
    "hotel": "修订住宿标准",
    "password": "修订密码策略",
    "salary": "薪资核定调整",
    "deadline": "延长整改期限",
    "term": "修改协议期限",
    "milestone": "调整里程碑计划",
    "score": "调整考核合格分数线",
    "data": "更新市场数据",
    "approved": "调整批准金额",
    "edit": "修订文字",
}
