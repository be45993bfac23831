"""Specs shared by the render (and extract) tests: one Chinese and one English document touching every feature."""

from __future__ import annotations

from drivebench.corpora.render import DocSpec, Section, ZipMember

FORMATS = ("md", "txt", "docx", "pdf", "xlsx", "pptx", "dxf", "zip")


def zh_spec(file_type: str) -> DocSpec:
    long_para = "本项目旨在建设统一的企业云盘平台，实现文档的集中存储、权限管控与全文检索。" * 12
    members = []
    if file_type == "zip":
        inner = DocSpec("内层资料", "zip", members=[ZipMember("说明/readme.md", zh_spec("md"))])
        members = [
            ZipMember("方案/技术方案.docx", zh_spec("docx")),
            ZipMember("图纸/轴承座.dxf", zh_spec("dxf")),
            ZipMember("预算.pdf", zh_spec("pdf")),
            ZipMember("嵌套/内层.zip", inner),
        ]
    return DocSpec(
        title="2024年度研发中心预算报告",
        file_type=file_type,
        language="zh",
        author="张伟",
        title_block={"图号": "DB-2024-017", "名称": "轴承座", "设计": "张伟", "审核": "李娜", "比例": "1:2"}
        if file_type == "dxf"
        else {},
        layers=["孔位", "中心线/辅助"] if file_type == "dxf" else [],
        sections=[
            Section(
                "第一章 项目概述",
                [
                    long_para,
                    "预算总额为人民币 1,200 万元（含税），执行期两年。",
                    "注：%%c 符号与 {花括号} 及反斜杠 a\\b 原样保留。",
                ],
                table=[["科目", "金额（万元）", "备注"], ["设备购置", "480", "含服务器"], ["人员费用", "560", ""]],
                notes="请勿外传：本节数据为内部预测值。",
            ),
            Section("第二章 风险与对策", ["供应链风险：关键芯片交付周期延长。", "对策：提前备货并引入第二供应商。"]),
        ],
        members=members,
    )


def en_spec(file_type: str) -> DocSpec:
    long_para = (
        "The drive simulator stores every document version with its permissions, so that retrieval "
        "can be evaluated against what each user is allowed to see. "
    ) * 8
    members = []
    if file_type == "zip":
        members = [
            ZipMember("plans/a.docx", en_spec("docx")),
            ZipMember("plans/b.pptx", en_spec("pptx")),
            ZipMember("sheets/c.xlsx", en_spec("xlsx")),
            ZipMember("notes.txt", en_spec("txt")),
        ]
    return DocSpec(
        title="Quarterly Infrastructure Review",
        file_type=file_type,
        language="en",
        author="Alice Smith",
        title_block={"drawing no": "INF-42", "designer": "Alice Smith", "checker": "Bob Jones", "scale": "1:50"}
        if file_type == "dxf"
        else {},
        sections=[
            Section(
                "Capacity planning",
                [
                    long_para,
                    "Storage grows 18% per quarter; =SUM(A1:A4) is text, not a formula.",
                    "Tags <b>&</b> stay.",
                ],
                table=[["Item", "Cost (USD)"], ["Servers", "120,000"], ["Licences | support", "35,500"]],
                notes="Speaker: stress the Q3 procurement deadline.",
            ),
            Section("Risks", ["Vendor lock-in.", "Network upgrade slips past March!"]),
        ],
        members=members,
    )
