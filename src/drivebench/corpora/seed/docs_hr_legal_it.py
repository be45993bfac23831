"""HR (``/hr``), Legal (``/legal``) and Information Center (``/it``) documents."""

from __future__ import annotations

from drivebench.corpora.render.spec import DocSpec, Section
from drivebench.corpora.seed.model import SeedDoc, SeedVersion

CAMPUS_HIRING = SeedDoc(
    doc_id="d0022",
    name="2027届校园招聘计划.docx",
    folder="/hr",
    file_type="docx",
    secret_level="internal",
    owner="u011",
    department="hr",
    language="zh",
    length="medium",
    versions=[
        SeedVersion(
            created_at="2026-08-03T02:00:00+00:00",
            author="u011",
            spec=DocSpec(
                title="2027届校园招聘计划",
                file_type="docx",
                language="zh",
                author="人力资源部 钱丽",
                sections=[
                    Section(
                        heading="一、招聘规模",
                        paragraphs=["2027 届校园招聘共计划招聘 60人，各岗位分布如下。"],
                        table=[
                            ["岗位类别", "计划人数", "用人部门"],
                            ["研发类（算法、后端、测试开发）", "38", "研发部"],
                            ["产品类", "8", "产品部"],
                            ["销售类", "10", "销售部"],
                            ["职能类", "4", "财务部、法务部、人力资源部"],
                        ],
                    ),
                    Section(
                        heading="二、时间安排",
                        paragraphs=[
                            "2026 年 9 月启动秋季校园招聘，在 12 所高校举办宣讲会；10 月完成笔试和面试；"
                            "2026 年 11 月 30 日前发放全部录用通知。",
                        ],
                    ),
                    Section(
                        heading="三、薪酬标准",
                        paragraphs=[
                            "研发类岗位本科起薪 18k/月，硕士起薪 22k/月；其他岗位按公司职级薪酬表执行。",
                        ],
                    ),
                    Section(
                        heading="四、职责分工",
                        paragraphs=[
                            "招聘经理钱丽负责整体执行，人力资源部经理赵敏审批录用名单，各用人部门经理负责终面。",
                        ],
                    ),
                ],
            ),
        )
    ],
)

EXEC_COMP = SeedDoc(
    doc_id="d0023",
    name="2027年高管薪酬方案.pdf",
    folder="/hr",
    file_type="pdf",
    secret_level="secret",
    owner="u006",
    department="hr",
    language="zh",
    length="medium",
    versions=[
        SeedVersion(
            created_at="2026-10-20T09:00:00+00:00",
            author="u006",
            spec=DocSpec(
                title="2027年高管薪酬方案",
                file_type="pdf",
                language="zh",
                author="人力资源部 赵敏",
                sections=[
                    Section(
                        heading="一、适用范围",
                        paragraphs=["本方案适用于公司首席执行官（CEO）、技术总监、财务负责人及各副总裁。"],
                    ),
                    Section(
                        heading="二、薪酬结构",
                        paragraphs=[
                            "高管薪酬由基本年薪、年度目标奖金和长期激励三部分构成。",
                            "CEO 的年度目标奖金为基本年薪的 60%，副总裁及技术总监为基本年薪的 40%；"
                            "实际发放比例根据公司年度业绩完成情况在 0% 至 150% 之间浮动。",
                        ],
                    ),
                    Section(
                        heading="三、长期激励",
                        paragraphs=["长期激励以股票期权形式授予，分 4 年归属，每年归属 25%。"],
                    ),
                    Section(
                        heading="四、审批程序",
                        paragraphs=["本方案经董事会薪酬委员会于 2026 年 12 月审议通过后执行。"],
                    ),
                ],
            ),
        )
    ],
)

ONBOARDING = SeedDoc(
    doc_id="d0024",
    name="New Hire Onboarding Checklist.md",
    folder="/hr",
    file_type="md",
    secret_level="internal",
    owner="u011",
    department="hr",
    language="en",
    length="short",
    versions=[
        SeedVersion(
            created_at="2026-03-05T02:00:00+00:00",
            author="u011",
            spec=DocSpec(
                title="New Hire Onboarding Checklist",
                file_type="md",
                language="en",
                author="Qian Li, HR",
                sections=[
                    Section(
                        heading="Before day one",
                        paragraphs=[
                            "HR sends the offer pack and the labor contract draft; the Information Center creates "
                            "the e-mail, VPN and drive accounts.",
                        ],
                    ),
                    Section(
                        heading="Day one",
                        paragraphs=[
                            "Sign the labor contract, collect the badge and book the security awareness training.",
                        ],
                    ),
                    Section(
                        heading="First month",
                        paragraphs=[
                            "Meet the assigned mentor in week one and finish the security awareness training within "
                            "30 days.",
                        ],
                    ),
                    Section(
                        heading="Probation",
                        paragraphs=[
                            "Regular employees have a probation period of three months, reviewed by their manager. "
                            "Interns have no probation period.",
                        ],
                    ),
                ],
            ),
        )
    ],
)

CONTRACT_REVIEW = SeedDoc(
    doc_id="d0025",
    name="合同审查指引.docx",
    folder="/legal",
    file_type="docx",
    secret_level="internal",
    owner="u008",
    department="legal",
    language="zh",
    length="long",
    versions=[
        SeedVersion(
            created_at="2026-02-15T03:00:00+00:00",
            author="u008",
            spec=DocSpec(
                title="合同审查指引",
                file_type="docx",
                language="zh",
                author="法务部 周杰",
                sections=[
                    Section(
                        heading="一、审查流程",
                        paragraphs=[
                            "业务部门在 OA 系统提交合同审查申请并上传合同文本，法务部在 3 个工作日内出具初审意见；"
                            "重大合同的审查期限可延长至 5 个工作日。",
                        ],
                    ),
                    Section(
                        heading="二、分级审查",
                        table=[
                            ["合同金额", "审查人", "最终批准"],
                            ["50万元以下", "法务专员", "部门经理"],
                            ["50万元至500万元", "法务负责人", "分管副总裁"],
                            ["500万元以上", "法务负责人", "总经理"],
                        ],
                    ),
                    Section(
                        heading="三、重点条款审查要求",
                        paragraphs=[
                            "（1）责任上限：供应商的责任上限原则上不得低于合同总金额；对方坚持低于合同总金额的，"
                            "须要求对方修改，或报法务负责人书面批准后方可签署。",
                            "（2）数据保护：涉及公司或客户数据的合同，须约定服务终止后30日内删除全部数据并出具删除证明。",
                            "（3）争议解决：优先约定提交上海国际仲裁中心仲裁，避免约定对方所在地法院管辖。",
                            "（4）知识产权：委托开发合同须约定成果知识产权归公司所有。",
                        ],
                    ),
                    Section(
                        heading="四、保密协议",
                        paragraphs=[
                            "与合作方交换保密信息前，须签署保密协议，原则上使用法务部的《Mutual Non-Disclosure "
                            "Agreement Template》，对模板的任何修改须经法务部确认。",
                        ],
                    ),
                    Section(
                        heading="五、用印与归档",
                        paragraphs=[
                            "合同经审批后由行政部统一用印，签署完成的合同原件交财务部归档，电子版上传至网盘对应合同文件夹。",
                        ],
                    ),
                ],
            ),
        )
    ],
)

NDA_TEMPLATE = SeedDoc(
    doc_id="d0026",
    name="Mutual NDA Template.docx",
    folder="/legal",
    file_type="docx",
    secret_level="internal",
    owner="u008",
    department="legal",
    language="en",
    length="medium",
    versions=[
        SeedVersion(
            created_at="2026-02-16T03:00:00+00:00",
            author="u008",
            spec=DocSpec(
                title="Mutual Non-Disclosure Agreement Template",
                file_type="docx",
                language="en",
                author="Legal Department",
                sections=[
                    Section(
                        heading="1. Confidential information",
                        paragraphs=[
                            "Confidential information means any business, technical or financial information "
                            "disclosed by one party to the other, in any form, that is marked confidential or would "
                            "reasonably be understood to be confidential.",
                        ],
                    ),
                    Section(
                        heading="2. Obligations",
                        paragraphs=[
                            "The receiving party uses confidential information only to evaluate the proposed "
                            "cooperation and discloses it only to employees who need to know it.",
                        ],
                    ),
                    Section(
                        heading="3. Term",
                        paragraphs=[
                            "This agreement runs for two years. The confidentiality obligations survive for three "
                            "years after the agreement ends.",
                        ],
                    ),
                    Section(
                        heading="4. Governing law and disputes",
                        paragraphs=[
                            "This agreement is governed by the laws of the People's Republic of China. Disputes are "
                            "submitted to the Shanghai International Arbitration Center.",
                        ],
                    ),
                ],
            ),
        )
    ],
)

ADMIN_RUNBOOK = SeedDoc(
    doc_id="d0027",
    name="Drive Administration Runbook.md",
    folder="/it",
    file_type="md",
    secret_level="internal",
    owner="u009",
    department="it",
    language="en",
    length="short",
    versions=[
        SeedVersion(
            created_at="2026-04-01T02:00:00+00:00",
            author="u009",
            spec=DocSpec(
                title="Drive Administration Runbook",
                file_type="md",
                language="en",
                author="Wu Hao, Information Center",
                sections=[
                    Section(
                        heading="Administrator accounts",
                        paragraphs=[
                            "Drive administrators can list every folder but cannot open document contents. "
                            "Opening a document needs a business grant approved by the folder's owning department.",
                        ],
                    ),
                    Section(
                        heading="Grants",
                        paragraphs=[
                            "Grant requests are filed as tickets. Temporary grants must carry an expiry date no more "
                            "than 90 days after the start date.",
                        ],
                    ),
                    Section(
                        heading="Offboarding and audit",
                        paragraphs=[
                            "Access of a leaving employee is revoked within 24 hours of the last working day. "
                            "Audit logs of every grant change and document access are kept for 180 days.",
                        ],
                    ),
                ],
            ),
        )
    ],
)

DOCS: list[SeedDoc] = [CAMPUS_HIRING, EXEC_COMP, ONBOARDING, CONTRACT_REVIEW, NDA_TEMPLATE, ADMIN_RUNBOOK]
