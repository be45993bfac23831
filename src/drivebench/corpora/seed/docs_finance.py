"""Finance documents: ``/finance`` and its sub-folders, plus the look-alike ``/finance-secret``."""

from __future__ import annotations

from drivebench.corpora.render.spec import DocSpec, Section
from drivebench.corpora.seed.model import SeedDoc, SeedVersion

Q3_REPORT = SeedDoc(
    doc_id="d0017",
    name="2026年第三季度财务分析报告.pdf",
    folder="/finance",
    file_type="pdf",
    secret_level="internal",
    owner="u005",
    department="finance",
    language="zh",
    length="medium",
    versions=[
        SeedVersion(
            created_at="2026-10-15T08:00:00+00:00",
            author="u005",
            spec=DocSpec(
                title="2026年第三季度财务分析报告",
                file_type="pdf",
                language="zh",
                author="财务部 刘洋",
                sections=[
                    Section(
                        heading="一、经营概况",
                        paragraphs=[
                            "2026 年第三季度公司实现营业收入 1.86亿元，同比增长 12.4%；毛利率 41.2%，较上季度提高 0.8 个百分点；"
                            "净利润 2,350万元。",
                        ],
                        table=[
                            ["指标", "2026年Q3", "2025年Q3", "同比"],
                            ["营业收入", "1.86亿元", "1.65亿元", "+12.4%"],
                            ["毛利率", "41.2%", "39.5%", "+1.7个百分点"],
                            ["净利润", "2,350万元", "1,980万元", "+18.7%"],
                        ],
                    ),
                    Section(
                        heading="二、费用分析",
                        paragraphs=[
                            "本季度研发费用 4,120万元，占营业收入的 22.2%；销售费用 3,010万元；管理费用 1,540万元。",
                            "差旅费用环比上升 9%，主要受 7 月起上调一线城市住宿标准影响。",
                        ],
                    ),
                    Section(
                        heading="三、重点项目投入",
                        paragraphs=[
                            "项目X截至 2026 年 9 月 30 日累计支出 198万元，其中 GPU 云服务 96万元、人力成本 88万元、数据标注 14万元。",
                        ],
                    ),
                    Section(
                        heading="四、现金流与风险提示",
                        paragraphs=[
                            "经营活动现金净流入 3,080万元，期末现金余额 2.45亿元。",
                            "应收账款周转天数上升至 78 天，高于 60 天的管理目标，须加强大客户回款催收。",
                        ],
                    ),
                ],
            ),
        )
    ],
)


def _budget(version: int) -> DocSpec:
    if version == 1:
        rows = [
            ["科目", "预算（万元）", "说明"],
            ["人力成本", "180", "研发 9 人 × 8 个月"],
            ["GPU云资源", "110", "华云科技 GPU 云服务，8 张推理卡"],
            ["数据标注与测试", "18", "5,000 条问答对标注及评测"],
            ["差旅及其他", "12", ""],
            ["合计", "320", ""],
        ]
        summary = [
            "项目X预算总额为 320万元，与立项书一致。",
            "审批：财务经理陈静，2026-05-30。",
        ]
    else:
        rows = [
            ["科目", "预算（万元）", "说明"],
            ["人力成本", "180", "研发 9 人 × 8 个月"],
            ["GPU云资源", "150", "推理卡由 8 张扩容至 16 张，用于私有化部署测试环境"],
            ["数据标注与测试", "23", "新增私有化部署场景评测"],
            ["差旅及其他", "12", ""],
            ["合计", "365", ""],
        ]
        summary = [
            "因技术方案 v2.0 新增客户私有化部署，项目X预算总额调整为 365万元，较立项预算增加45万元。",
            "其中 GPU 云资源由 110万元调整为 150万元，数据标注与测试由 18万元调整为 23万元。",
            "审批：财务经理陈静，2026-09-20。",
        ]
    return DocSpec(
        title="项目X预算表",
        file_type="docx",
        language="zh",
        author="财务部 刘洋",
        sections=[
            Section(heading="预算汇总", paragraphs=summary),
            Section(heading="预算明细", table=rows),
            Section(
                heading="执行规则",
                paragraphs=[
                    "单科目超支 10% 以内由项目经理审批调剂，超过 10% 须重新报财务经理审批。",
                ],
            ),
        ],
    )


PROJECT_X_BUDGET = SeedDoc(
    doc_id="d0018",
    name="项目X预算表.docx",
    folder="/finance/budget",
    file_type="docx",
    secret_level="internal",
    owner="u005",
    department="finance",
    language="zh",
    length="medium",
    versions=[
        SeedVersion(created_at="2026-05-28T03:00:00+00:00", author="u005", spec=_budget(1)),
        SeedVersion(
            created_at="2026-09-20T03:00:00+00:00",
            author="u005",
            note="预算调整为365万元",
            spec=_budget(2),
        ),
    ],
)

DEPT_BUDGET_SHEET = SeedDoc(
    doc_id="d0028",
    name="2026年部门费用预算执行表.xlsx",
    folder="/finance/budget",
    file_type="xlsx",
    secret_level="internal",
    owner="u005",
    department="finance",
    language="zh",
    length="medium",
    versions=[
        SeedVersion(
            created_at="2026-10-10T02:00:00+00:00",
            author="u005",
            spec=DocSpec(
                title="2026年部门费用预算执行表",
                file_type="xlsx",
                language="zh",
                author="财务部 刘洋",
                sections=[
                    Section(
                        heading="执行汇总",
                        paragraphs=["数据截至 2026 年 9 月 30 日，单位：万元。"],
                        table=[
                            ["部门", "年度预算", "1-9月实际", "执行率"],
                            ["研发部", "2600", "1984", "76.3%"],
                            ["财务部", "420", "301", "71.7%"],
                            ["人力资源部", "680", "552", "81.2%"],
                            ["法务部", "260", "171", "65.8%"],
                            ["信息中心", "540", "447", "82.8%"],
                        ],
                    ),
                    Section(
                        heading="说明",
                        paragraphs=[
                            "人力资源部执行率偏高，主要原因是 2027 届校园招聘宣讲会提前至 9 月举办。",
                            "信息中心执行率最高，主要原因是网盘存储扩容在第三季度一次性付款。",
                        ],
                    ),
                ],
            ),
        )
    ],
)

GPU_CONTRACT = SeedDoc(
    doc_id="d0019",
    name="华云科技GPU云服务采购合同摘要.pdf",
    folder="/finance/contracts",
    file_type="pdf",
    secret_level="confidential",
    owner="u005",
    department="finance",
    language="zh",
    length="medium",
    versions=[
        SeedVersion(
            created_at="2026-06-25T06:00:00+00:00",
            author="u005",
            spec=DocSpec(
                title="华云科技GPU云服务采购合同摘要",
                file_type="pdf",
                language="zh",
                author="财务部 刘洋",
                sections=[
                    Section(
                        heading="合同要素",
                        table=[
                            ["项目", "内容"],
                            ["合同编号", "XC-CG-2026-0412"],
                            ["供应商", "华云科技（上海）有限公司"],
                            ["采购内容", "GPU 云服务器租用（项目X推理与训练）"],
                            ["合同金额", "人民币138万元（含税）"],
                            ["服务期限", "2026-07-01 至 2027-06-30"],
                            ["付款方式", "按季度预付，每季度34.5万元"],
                        ],
                    ),
                    Section(
                        heading="服务水平",
                        paragraphs=[
                            "供应商承诺月度可用性不低于 99.9%；每低于 0.1 个百分点，按当月服务费的 5% 予以赔偿，"
                            "赔偿总额不超过当月服务费的 30%。",
                        ],
                    ),
                    Section(
                        heading="法务审查意见",
                        paragraphs=[
                            "审查人：法务部周杰，2026-06-20。",
                            "主要风险：合同第9.2条将供应商责任上限约定为“当期已支付的季度服务费”，仅 34.5万元，"
                            "远低于合同总金额；原合同未约定服务终止后的数据删除期限。",
                            "处理结果：已要求供应商将责任上限提高至合同总金额，并补充“服务终止后30日内删除全部客户数据并出具删除证明”条款，"
                            "供应商已同意修改。",
                        ],
                    ),
                ],
            ),
        )
    ],
)

FUNDRAISING_PLAN = SeedDoc(
    doc_id="d0020",
    name="2027年度融资计划.docx",
    folder="/finance/confidential",
    file_type="docx",
    secret_level="confidential",
    owner="u004",
    department="finance",
    language="zh",
    length="medium",
    versions=[
        SeedVersion(
            created_at="2026-10-08T07:00:00+00:00",
            author="u004",
            spec=DocSpec(
                title="2027年度融资计划",
                file_type="docx",
                language="zh",
                author="财务经理 陈静",
                sections=[
                    Section(
                        heading="一、融资规模",
                        paragraphs=[
                            "公司计划于 2027 年上半年完成 B 轮融资，融资规模为 3亿元人民币，投前估值 25亿元。",
                        ],
                    ),
                    Section(
                        heading="二、资金用途",
                        table=[
                            ["用途", "占比"],
                            ["研发投入（含项目X二期）", "55%"],
                            ["市场拓展", "25%"],
                            ["补充流动资金", "20%"],
                        ],
                    ),
                    Section(
                        heading="三、时间安排",
                        paragraphs=[
                            "2026 年 12 月选定财务顾问；2027 年 3 月完成投资人尽职调查；2027 年 6 月完成交割。",
                        ],
                    ),
                    Section(
                        heading="四、保密要求",
                        paragraphs=[
                            "本计划仅限财务经理及以上人员查阅，存放于财务部保密文件夹，不得转发或打印。",
                        ],
                    ),
                ],
            ),
        )
    ],
)

TAX_MEMO = SeedDoc(
    doc_id="d0021",
    name="Tax Audit Settlement Memo.docx",
    folder="/finance-secret",
    file_type="docx",
    secret_level="confidential",
    owner="u004",
    department="finance",
    language="en",
    length="short",
    versions=[
        SeedVersion(
            created_at="2026-08-14T05:00:00+00:00",
            author="u004",
            spec=DocSpec(
                title="Tax Audit Settlement Memo",
                file_type="docx",
                language="en",
                author="Chen Jing, Finance Manager",
                sections=[
                    Section(
                        heading="Background",
                        paragraphs=[
                            "In March 2026 the Shanghai tax bureau opened a transfer pricing review of the company's "
                            "2023 and 2024 service fees paid to its Hong Kong subsidiary.",
                        ],
                    ),
                    Section(
                        heading="Outcome",
                        paragraphs=[
                            "The review closed with a settlement of RMB 4.7 million in additional corporate income "
                            "tax and late payment surcharges, paid on 2026-08-10. No penalty was imposed.",
                        ],
                    ),
                    Section(
                        heading="Next steps",
                        paragraphs=[
                            "From 2027 the intercompany service agreement uses a cost-plus 8% markup, documented in "
                            "an annual transfer pricing report prepared by the finance manager.",
                        ],
                    ),
                ],
            ),
        )
    ],
)

DOCS: list[SeedDoc] = [Q3_REPORT, PROJECT_X_BUDGET, DEPT_BUDGET_SHEET, GPU_CONTRACT, FUNDRAISING_PLAN, TAX_MEMO]
