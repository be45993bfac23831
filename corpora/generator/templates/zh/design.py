"""Chinese templates: engineering design (drawings, BOM, supplier contract, inspection, release pack, legal review)."""

from __future__ import annotations

from typing import Any

from drivebench.corpora.render.spec import DocSpec, Section, ZipMember

COMPANY = "艾克米科技有限公司"
PURCHASED = (
    ("电源模块", "24V/60W 宽压输入"),
    ("主控板", "四层 PCB，含 MCU"),
    ("十字盘头螺钉", "M3×8 不锈钢"),
    ("包装纸箱", "五层瓦楞，含内衬"),
)
RESULTS = ("合格", "合格", "让步接收")
DEFECTS = ("未发现外观及尺寸缺陷", "2 件表面轻微划伤，不影响使用", "1 件孔位偏差 0.05 mm，在公差范围内")
TOLERANCE = "GB/T 1804-{}"  # 未注公差，按等级
LAYERS = ["轮廓线", "中心线", "尺寸标注", "剖面线"]
RISKS = (
    "违约金条款对乙方约束不足，建议增加逾期交货按日 0.5‰ 计收违约金",
    "质量保证期未约定起算时点，建议明确自验收合格之日起算",
    "知识产权条款缺失，建议约定模具及图纸归甲方所有",
    "争议解决条款约定不明，建议明确由甲方所在地法院管辖",
)

ATTRS: dict[str, str] = {
    "assembly.designer": "设计人",
    "assembly.approver": "批准人",
    "assembly.weight": "重量",
    "assembly.checker": "审核人",
    "assembly.torque": "螺钉紧固扭矩（N·m）",
    "assembly.scale": "绘图比例",
    "part.material": "材料",
    "part.finish": "表面处理",
    "part.thickness": "未注壁厚",
    "part.designer": "设计人",
    "part.tolerance": "未注公差等级",
    "part.checker": "审核人",
    "bom.price1": "{part1}的单价（元）",
    "bom.supplier2": "{part2}的供应商",
    "bom.compiler": "编制人",
    "contract.amount": "合同金额（元）",
    "contract.delivery": "交货日期",
    "contract.signer": "甲方代表",
    "contract.supplier_rep": "乙方代表",
    "inspection.inspector": "检验员",
    "inspection.result": "检验结论",
    "inspection.sample": "抽样数量",
    "pack.ecn_owner": "工程变更通知的负责人",
    "pack.release_approver": "发布批准人",
    "legal_review.reviewer": "审查人",
    "legal_review.conclusion": "审查结论",
}
SUBJECTS: dict[str, str] = {
    "assembly": "{product} 整机装配图 {dwg}",
    "part": "{part}零件图 {dwg}",
    "bom": "物料清单 {bom_no}",
    "contract": "采购合同 {contract_no}",
    "inspection": "来料检验报告 {iqc_no}",
    "pack": "{product} 图纸发布包",
    "legal_review": "合同审查意见 {lr_no}",
}
# 图纸按图上写的内容来问（不提图名和图号：它们就是文件名）
CONTENT_SUBJECTS: dict[str, str] = {
    "assembly": "外形尺寸 {dims} 的产品",
    "part": "料号 {pn} 的零件",
}
CHAINS: dict[str, dict[str, str]] = {
    "dwg_bom_supplier": {
        "short": "外形尺寸 {dims} 产品 物料清单 {part2}供应商",
        "medium": "外形尺寸为 {dims} 的那款产品，配套物料清单中的{part2}由哪家供应商提供？",
        "long": "我只知道这款产品的外形尺寸是 {dims}，想查它图纸配套的物料清单里{part2}这一项是哪家供应商供货的？",
    },
    "dwg_bom_contract": {
        "short": "外形尺寸 {dims} 产品 {part1}采购合同金额",
        "medium": "外形尺寸为 {dims} 的产品，其物料清单里{part1}的主供应商采购合同金额是多少？",
        "long": "做成本核算时需要从产品追溯到合同：外形尺寸为 {dims} 的那款产品有一份物料清单，清单里写了{part1}的主供应商合同编号，请问那份采购合同的合同金额是多少？",
    },
    "part_bom_contract": {
        "short": "料号 {pn1} 所属清单 采购合同交货日期",
        "medium": "料号 {pn1} 的零件所属的物料清单引用的采购合同，约定的交货日期是哪天？",
        "long": "生产计划要确认来料时间：料号 {pn1} 的零件属于某份物料清单，那份清单引用了一份采购合同，请帮我查一下合同约定的交货日期。",
    },
    "review_contract": {
        "short": "{lr_no} 审查的合同 乙方代表",
        "medium": "合同审查意见 {lr_no} 所审查的那份采购合同里，乙方代表是谁？",
        "long": "法务出具的合同审查意见 {lr_no} 针对的是一份采购合同，我需要联系对方，请问那份合同中写的乙方代表是谁？",
    },
}


def _block(f: dict[str, Any], name: str, material: str) -> dict[str, str]:
    return {
        "图号": f["dwg"],
        "名称": name,
        "材料": material,
        "比例": f["scale"],
        "设计": f["designer"],
        "审核": f["checker"],
        "批准": f["approver"],
        "日期": f["date"],
        "版本": f["rev"],
    }


def assembly(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="dxf",
        layers=list(LAYERS),
        title_block={**_block(f, f"{f['product']} 整机装配", "见物料清单"), "重量": f["weight"]},
        sections=[
            Section(
                "技术要求",
                [
                    "1. 装配前所有零件须去毛刺并清洁。",
                    f"2. 紧固螺钉扭矩 {f['torque']} N·m。",
                    "3. 整机防护等级 IP65，装配后做淋水试验。",
                ],
            ),
            Section("关联文件", [f"配套物料清单：{f['bom_no']}", f"零件图：{f['dwg1']}、{f['dwg2']}"]),
            Section("标注", [f"整机重量 {f['weight']}", f"外形尺寸 {f['dims']}（见主视图）"]),
        ],
    )


def part(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="dxf",
        layers=list(LAYERS),
        title_block={**_block(f, f"{f['product']} {f['part']}", f["material"]), "料号": f["pn"]},
        sections=[
            Section(
                "技术要求",
                [
                    f"1. 材料：{f['material']}",
                    f"2. 未注壁厚 {f['thickness']}",
                    f"3. 表面处理：{f['finish']}",
                    f"4. 未注公差按 {f['tolerance']}。",
                    f"5. 内侧面标记料号 {f['pn']} 及版本号。",
                ],
            ),
            Section("关联文件", [f"所属装配图：{f['dwg0']}", f"所属物料清单：{f['bom_no']}"]),
        ],
    )


def bom(f: dict[str, Any]) -> DocSpec:
    rows = [["序号", "料号", "名称", "规格/材料", "数量", "单价（元）", "供应商"], *[list(r) for r in f["rows"]]]
    return DocSpec(
        title=f["title"],
        file_type="xlsx",
        sections=[
            Section(
                "物料清单",
                [
                    f"清单编号：{f['bom_no']}",
                    f"产品：{f['product']}",
                    f"对应装配图：{f['dwg0']}",
                    f"编制人：{f['compiler']}",
                    f"主供应商合同：{f['contract_no']}",
                ],
                table=rows,
            ),
        ],
    )


def contract(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="pdf",
        sections=[
            Section(
                "合同信息",
                [
                    f"合同编号：{f['contract_no']}",
                    f"甲方（采购方）：{COMPANY}",
                    f"乙方（供应方）：{f['supplier']}",
                    f"签订日期：{f['sign_date']}",
                ],
            ),
            Section(
                "第一条 标的",
                [f"乙方按甲方物料清单 {f['bom_no']} 供应 {f['part1']}（料号 {f['pn1']}）共 {f['qty']} 件。"],
            ),
            Section("第二条 合同金额", [f"合同总金额为人民币 {f['amount']} 元（含 13% 增值税）。"]),
            Section("第三条 交货", [f"乙方应于 {f['delivery']} 前将全部货物送达甲方深圳工厂仓库。"]),
            Section(
                "第四条 付款方式",
                ["合同签订后甲方支付 30% 预付款，货到验收合格后支付 60%，余款 10% 作为质保金一年后付清。"],
            ),
            Section("第五条 签署", [f"甲方代表：{f['signer']}", f"乙方代表：{f['supplier_rep']}"]),
        ],
    )


def inspection(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="docx",
        sections=[
            Section(
                "检验信息",
                [
                    f"报告编号：{f['iqc_no']}",
                    f"物料：{f['part1']}（料号 {f['pn1']}）",
                    f"供应商：{f['supplier']}",
                    f"到货数量：{f['batch']} 件",
                    f"抽样数量：{f['sample']} 件",
                    f"检验日期：{f['date']}",
                ],
            ),
            Section(
                "检验项目",
                [],
                table=[
                    ["项目", "标准", "结果"],
                    ["外观", "无划伤、毛刺", "符合"],
                    ["关键尺寸", "按图纸 " + f["dwg1"], "符合"],
                    ["材料", f["material"], "符合"],
                ],
            ),
            Section("检验结论", [f"检验结论：{f['result']}", f"说明：{f['defects']}。", f"检验员：{f['inspector']}"]),
        ],
    )


def pack(f: dict[str, Any]) -> DocSpec:
    index = DocSpec(
        title="图纸目录",
        file_type="md",
        sections=[
            Section(
                "图纸清单",
                [
                    f"{f['dwg0']} 整机装配图",
                    f"{f['dwg1']} {f['part1']}",
                    f"{f['dwg2']} {f['part2']}",
                    f"发布日期：{f['release_date']}",
                ],
            ),
        ],
    )
    ecn = DocSpec(
        title=f"工程变更通知 {f['ecn_no']}",
        file_type="txt",
        sections=[
            Section(
                "变更内容",
                [
                    f"变更编号：{f['ecn_no']}",
                    f"变更内容：{f['part1']}加强筋由 2 条增加到 3 条，提高抗跌落性能。",
                    f"变更负责人：{f['ecn_owner']}",
                ],
            ),
        ],
    )
    note = DocSpec(
        title="发布说明",
        file_type="docx",
        sections=[
            Section(
                "发布说明",
                [
                    f"{f['product']}图纸经审核批准，正式发布用于试产。",
                    f"发布批准人：{f['release_approver']}",
                    f"发布日期：{f['release_date']}",
                ],
            ),
        ],
    )
    return DocSpec(
        title=f["title"],
        file_type="zip",
        members=[
            ZipMember("图纸目录.md", index),
            ZipMember(f"{f['ecn_no']}.txt", ecn),
            ZipMember("发布说明.docx", note),
        ],
    )


def legal_review(f: dict[str, Any]) -> DocSpec:
    return DocSpec(
        title=f["title"],
        file_type="txt",
        sections=[
            Section(
                "基本信息",
                [
                    f"审查编号：{f['lr_no']}",
                    f"审查对象：采购合同 {f['contract_no']}",
                    f"审查人：{f['reviewer']}",
                    f"审查日期：{f['date']}",
                ],
            ),
            Section("主要风险", [f"{i}. {r}。" for i, r in enumerate(f["risks"], 1)]),
            Section("审查结论", [f"审查结论：{f['conclusion']}"]),
        ],
    )


CONCLUSIONS = ("修改后可以签署", "可以签署", "建议暂缓签署，待补充条款后重新提交")

# a part drawing keeps its subject (the part number is all that names it; other words for 料号 only add noise)
SUBJECT_ALIASES: dict[str, str] = {
    "assembly": "尺寸为 {dims} 的那台设备",
    "bom": "{product}的物料明细表",
    "pack": "{product}图纸的正式发布压缩包",
}
ATTR_ALIASES: dict[str, str] = {
    "assembly.designer": "画图的工程师",
    "assembly.approver": "签字批准的人",
    "assembly.weight": "总重",
    "assembly.checker": "校核人",
    "assembly.torque": "螺丝拧紧力矩",
    "part.material": "所用材质",
    "part.finish": "表面工艺",
    "part.thickness": "壁厚",
    "part.designer": "画图的工程师",
    "part.tolerance": "一般公差的精度等级",
    "part.checker": "校核人",
    "bom.price1": "{part1}的采购价",
    "bom.supplier2": "{part2}的供货厂家",
    "bom.compiler": "编表人",
    "contract.amount": "合同总价",
    "contract.delivery": "交付期限",
    "contract.signer": "我方签约代表",
    "contract.supplier_rep": "供应商签约代表",
    "inspection.inspector": "负责检验的人",
    "inspection.result": "检验结果",
    "inspection.sample": "抽检数量",
    "pack.ecn_owner": "ECN 负责人",
    "pack.release_approver": "签发人",
    "legal_review.reviewer": "审核律师",
    "legal_review.conclusion": "最终意见",
}
