"""项目X (Project X) documents in ``/projects/project-x``: readable by the project's current members."""

from __future__ import annotations

from drivebench.corpora.render.spec import DocSpec, Section
from drivebench.corpora.seed.model import SeedDoc, SeedVersion

FOLDER = "/projects/project-x"

CHARTER = SeedDoc(
    doc_id="d0013",
    name="项目X立项书.docx",
    folder=FOLDER,
    file_type="docx",
    secret_level="internal",
    owner="u002",
    department="rd",
    language="zh",
    length="long",
    versions=[
        SeedVersion(
            created_at="2026-05-20T02:00:00+00:00",
            author="u002",
            spec=DocSpec(
                title="项目X立项书",
                file_type="docx",
                language="zh",
                author="项目经理 李强",
                sections=[
                    Section(
                        heading="一、项目概述",
                        paragraphs=[
                            "项目名称：项目X——企业知识库智能问答系统（内部代号“项目X”）。",
                            "客服与实施团队每月处理超过 1.2 万次内部文档查询，平均每次查找耗时约 15 分钟。"
                            "项目X将公司网盘中的制度、方案和案例文档接入智能问答，员工用自然语言提问即可获得"
                            "带出处的答案，且只能看到自己有权限预览的文档内容。",
                        ],
                    ),
                    Section(
                        heading="二、项目目标",
                        paragraphs=[
                            "一期：在 2026 年 10 月 31 日前上线公司内部版本，内部测试集上的问答准确率达到 85%，"
                            "检索结果 100% 遵守网盘权限。",
                            "二期：2027 年上半年支持客户私有化部署，作为产品功能对外销售。",
                        ],
                    ),
                    Section(
                        heading="三、项目组织",
                        paragraphs=["项目组成员及职责如下表。"],
                        table=[
                            ["角色", "姓名", "部门"],
                            ["项目发起人", "王芳", "研发部（技术总监）"],
                            ["项目经理", "李强", "研发部"],
                            ["技术负责人", "张伟", "研发部"],
                            ["平台支持", "Emily Carter", "研发部平台组"],
                            ["财务BP", "刘洋", "财务部"],
                            ["实习生（数据标注）", "孙磊", "研发部平台组，参与至2026年9月30日"],
                        ],
                    ),
                    Section(
                        heading="四、预算",
                        paragraphs=[
                            "立项预算为 320万元，其中人力成本 180万元、GPU 云资源 110万元、数据标注与测试 18万元、"
                            "差旅及其他 12万元。预算明细以财务部维护的《项目X预算表》为准。",
                        ],
                    ),
                    Section(
                        heading="五、里程碑",
                        table=[
                            ["里程碑", "内容", "计划日期"],
                            ["M1", "需求冻结", "2026-06-15"],
                            ["M2", "技术方案审批通过", "2026-06-30"],
                            ["M3", "内部试运行", "2026-09-15"],
                            ["M4", "一期上线", "2026-10-31"],
                        ],
                    ),
                    Section(
                        heading="六、主要风险",
                        paragraphs=[
                            "（1）大模型生成内容可能出现幻觉，须在答案中标注出处并设置置信度阈值；",
                            "（2）GPU 资源价格波动，可能导致云资源预算超支；",
                            "（3）权限过滤若实现不当，可能造成越权泄露，须在上线前通过安全评审。",
                        ],
                    ),
                ],
            ),
        )
    ],
)


def _tech_plan(version: int) -> DocSpec:
    if version == 1:
        info = [
            ["项目", "内容"],
            ["文档版本", "v1.0"],
            ["编写人", "张伟"],
            ["审批人", "李强"],
            ["日期", "2026-06-10"],
        ]
        deployment = [
            "一期仅提供公司内部 SaaS 部署，服务运行在平台组 Kubernetes 集群上，通过公司统一登录访问。",
        ]
        gpu = "GPU 算力租用华云科技的 GPU 云服务，一期规划 8 张推理卡。"
        changes: list[str] = []
    else:
        info = [
            ["项目", "内容"],
            ["文档版本", "v2.0"],
            ["编写人", "张伟"],
            ["审批人", "王芳"],
            ["日期", "2026-09-05"],
        ]
        deployment = [
            "内部版本继续采用 SaaS 部署，服务运行在平台组 Kubernetes 集群上。",
            "新增客户私有化部署方案：提供离线安装包，支持在客户机房的 3 节点 GPU 服务器上独立运行，"
            "检索索引与模型权重全部本地化，不依赖公司公有云服务。",
        ]
        gpu = "GPU 算力租用华云科技的 GPU 云服务，为支持私有化部署测试环境，推理卡由 8 张扩容至 16 张。"
        changes = [
            "v2.0 相对 v1.0 的主要变更：新增客户私有化部署方案；GPU 资源扩容；其余架构保持不变。",
        ]
    sections = [
        Section(heading="文档信息", table=info),
        Section(
            heading="一、总体架构",
            paragraphs=[
                "系统分为五层：文档接入层（对接网盘事件与文件）、解析与切分层、混合检索层（BM25 与向量检索）、"
                "权限过滤层、答案生成层。",
                "检索结果在返回给生成层之前，必须按提问用户在网盘中的预览权限过滤，不得把无权限文档的任何片段放入提示词。",
            ],
        ),
        Section(
            heading="二、检索与存储",
            paragraphs=[
                "向量数据库选用 Milvus，由平台组统一托管，部署位置见平台组《Platform Architecture Overview》。",
                "关键词检索复用网盘现有的 Elasticsearch 集群；索引数据使用平台加密模块 crypto-core 加密存储。",
            ],
        ),
        Section(
            heading="三、模型与算力",
            paragraphs=[
                "答案生成使用 14B 参数的开源中文大模型，经公司知识库问答数据微调后私有部署。",
                gpu,
            ],
        ),
        Section(heading="四、部署方案", paragraphs=deployment),
        Section(
            heading="五、验收指标",
            paragraphs=[
                "内部测试集问答准确率不低于 85%；P95 响应时间不超过 3 秒；越权返回数为 0。",
            ],
        ),
    ]
    if changes:
        sections.append(Section(heading="六、变更说明", paragraphs=changes))
    return DocSpec(title="项目X技术方案", file_type="docx", language="zh", author="技术负责人 张伟", sections=sections)


TECH_PLAN = SeedDoc(
    doc_id="d0014",
    name="项目X技术方案.docx",
    folder=FOLDER,
    file_type="docx",
    secret_level="internal",
    owner="u001",
    department="rd",
    language="zh",
    length="long",
    versions=[
        SeedVersion(created_at="2026-06-10T07:00:00+00:00", author="u001", note="v1.0", spec=_tech_plan(1)),
        SeedVersion(
            created_at="2026-09-05T07:00:00+00:00",
            author="u001",
            note="v2.0：新增私有化部署，审批人改为王芳",
            spec=_tech_plan(2),
        ),
    ],
)

APPROVAL_RECORD = SeedDoc(
    doc_id="d0015",
    name="项目X技术方案审批记录.pdf",
    folder=FOLDER,
    file_type="pdf",
    secret_level="internal",
    owner="u002",
    department="rd",
    language="zh",
    length="short",
    versions=[
        SeedVersion(
            created_at="2026-09-12T06:00:00+00:00",
            author="u002",
            spec=DocSpec(
                title="项目X技术方案审批记录",
                file_type="pdf",
                language="zh",
                author="项目经理 李强",
                sections=[
                    Section(
                        heading="审批信息",
                        table=[
                            ["项目", "内容"],
                            ["审批事项", "项目X技术方案 v2.0"],
                            ["审批人", "王芳（技术总监）"],
                            ["审批日期", "2026-09-12"],
                            ["审批结论", "有条件同意"],
                        ],
                    ),
                    Section(
                        heading="审批意见",
                        paragraphs=[
                            "同意技术方案 v2.0。附加条件：私有化部署版本对外交付前，须完成法务部参与的安全与合规评审。",
                            "技术方案 v2.0 新增客户私有化部署，依据《研发项目管理办法》第三章，改由技术总监审批。",
                        ],
                    ),
                    Section(
                        heading="审批历史",
                        table=[
                            ["方案版本", "审批人", "日期", "结论"],
                            ["v1.0", "李强（研发部经理）", "2026-06-18", "同意"],
                            ["v2.0", "王芳（技术总监）", "2026-09-12", "有条件同意"],
                        ],
                    ),
                ],
            ),
        )
    ],
)

KICKOFF_MINUTES = SeedDoc(
    doc_id="d0016",
    name="Project X Kickoff Meeting Minutes.md",
    folder=FOLDER,
    file_type="md",
    secret_level="internal",
    owner="u010",
    department="rd",
    language="en",
    length="medium",
    versions=[
        SeedVersion(
            created_at="2026-05-25T10:00:00+00:00",
            author="u010",
            spec=DocSpec(
                title="Project X Kickoff Meeting Minutes (2026-05-25)",
                file_type="md",
                language="en",
                author="Emily Carter",
                sections=[
                    Section(
                        heading="Attendees",
                        paragraphs=[
                            "Wang Fang (sponsor), Li Qiang (project manager), Zhang Wei (tech lead), Emily Carter "
                            "(platform), Liu Yang (finance BP), Sun Lei (intern).",
                        ],
                    ),
                    Section(
                        heading="Decisions",
                        paragraphs=[
                            "1. The weekly status meeting is held every Tuesday at 10:00 in meeting room 3F-Orion.",
                            "2. The team labels 5,000 question-answer pairs from real support tickets as the "
                            "evaluation set; Sun Lei owns the labeling with Zhang Wei as mentor.",
                            "3. Phase 1 must reach 85% answer accuracy on the internal test set.",
                            "4. Customer on-premise deployment is out of scope for phase 1 and deferred to phase 2.",
                        ],
                    ),
                    Section(
                        heading="Action items",
                        table=[
                            ["Action", "Owner", "Due"],
                            ["Draft the technical plan", "Zhang Wei", "2026-06-10"],
                            ["Reserve GPU capacity with the cloud vendor", "Emily Carter", "2026-06-20"],
                            ["Finish labeling 5,000 QA pairs", "Sun Lei", "2026-07-31"],
                            ["Set up the project budget sheet", "Liu Yang", "2026-05-31"],
                        ],
                    ),
                ],
            ),
        )
    ],
)

PHASE1_REVIEW = SeedDoc(
    doc_id="d0029",
    name="项目X一期上线汇报.pptx",
    folder=FOLDER,
    file_type="pptx",
    secret_level="internal",
    owner="u002",
    department="rd",
    language="zh",
    length="medium",
    versions=[
        SeedVersion(
            created_at="2026-10-30T09:00:00+00:00",
            author="u002",
            spec=DocSpec(
                title="项目X一期上线汇报",
                file_type="pptx",
                language="zh",
                author="项目经理 李强",
                sections=[
                    Section(
                        heading="上线情况",
                        paragraphs=[
                            "项目X一期于 2026 年 10 月 28 日正式上线，比计划提前 3 天",
                            "首周累计提问 4,312 次，覆盖客服、实施、研发三个部门",
                        ],
                        notes="强调上线过程中没有发生越权事件。",
                    ),
                    Section(
                        heading="效果指标",
                        paragraphs=[
                            "内部测试集问答准确率 87.5%，高于 85% 的验收目标",
                            "P95 响应时间 2.4 秒，越权返回数为 0",
                        ],
                    ),
                    Section(
                        heading="下一步计划",
                        paragraphs=[
                            "2026 年 12 月完成私有化部署版本的安全与合规评审",
                            "2027 年第一季度在两家试点客户完成私有化部署",
                        ],
                        notes="试点客户名单待销售部确认。",
                    ),
                ],
            ),
        )
    ],
)

DOCS: list[SeedDoc] = [CHARTER, TECH_PLAN, APPROVAL_RECORD, KICKOFF_MINUTES, PHASE1_REVIEW]
