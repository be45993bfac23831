"""R&D documents: ``/rd`` (研发部) and ``/rd/platform`` (平台组)."""

from __future__ import annotations

from drivebench.corpora.render.spec import DocSpec, Section
from drivebench.corpora.seed.model import SeedDoc, SeedVersion

RD_PLAN_2026 = SeedDoc(
    doc_id="d0005",
    name="研发部2026年度工作计划.docx",
    folder="/rd",
    file_type="docx",
    secret_level="internal",
    owner="u002",
    department="rd",
    language="zh",
    length="medium",
    versions=[
        SeedVersion(
            created_at="2026-01-15T06:00:00+00:00",
            author="u002",
            spec=DocSpec(
                title="研发部2026年度工作计划",
                file_type="docx",
                language="zh",
                author="研发部 李强",
                sections=[
                    Section(
                        heading="一、年度目标",
                        paragraphs=[
                            "2026 年研发部围绕“产品智能化、平台稳定化、交付标准化”开展工作，年度目标如下：",
                            "（1）完成项目X（企业知识库智能问答系统）一期上线，并启动客户私有化部署版本的研发；",
                            "（2）平台组完成 Kubernetes 集群升级至 1.30 版本，核心服务可用性达到 99.95%；",
                            "（3）全年 P1 级以上线上故障不超过 4 次，故障复盘报告在 3 个工作日内完成。",
                        ],
                    ),
                    Section(
                        heading="二、季度重点",
                        paragraphs=["各季度重点工作及负责人如下表。"],
                        table=[
                            ["季度", "重点工作", "负责人"],
                            ["Q1", "完成研发项目管理办法修订，推行代码评审规范", "李强"],
                            ["Q2", "项目X立项与技术方案审批；Kubernetes 1.30 升级", "王芳"],
                            ["Q3", "项目X内部试运行；加密模块 crypto-core 接入网盘存储", "张伟"],
                            ["Q4", "项目X一期上线及私有化部署版本交付；研发效能度量平台上线", "李强"],
                        ],
                    ),
                    Section(
                        heading="三、人员与预算",
                        paragraphs=[
                            "截至 2026 年 1 月，研发部共有员工 46 人（含平台组 12 人），计划年底增至 52 人，"
                            "新增岗位以算法工程师和测试开发工程师为主。",
                            "研发部 2026 年度部门预算为 2,600 万元，其中人力成本占 78%，云资源及软件许可占 15%。",
                        ],
                    ),
                    Section(
                        heading="四、组织与职责",
                        paragraphs=[
                            "研发部经理李强负责部门日常管理和项目交付；技术总监王芳负责技术路线、架构评审和重大技术方案审批；"
                            "平台组负责基础设施、存储与安全组件。",
                        ],
                    ),
                ],
            ),
        )
    ],
)

RD_PROJECT_RULES = SeedDoc(
    doc_id="d0006",
    name="研发项目管理办法.pdf",
    folder="/rd",
    file_type="pdf",
    secret_level="internal",
    owner="u003",
    department="rd",
    language="zh",
    length="medium",
    versions=[
        SeedVersion(
            created_at="2026-03-02T02:00:00+00:00",
            author="u003",
            spec=DocSpec(
                title="研发项目管理办法",
                file_type="pdf",
                language="zh",
                author="技术总监 王芳",
                sections=[
                    Section(
                        heading="第一章 总则",
                        paragraphs=[
                            "为规范研发项目从立项到结项的全过程管理，提高交付质量，制定本办法。"
                            "本办法适用于研发部牵头的全部研发项目，由技术总监负责解释。",
                        ],
                    ),
                    Section(
                        heading="第二章 立项",
                        paragraphs=[
                            "项目立项须提交立项书，内容包括项目背景、目标、范围、组织、预算和里程碑。",
                            "立项书经研发部经理审核、财务部确认预算后，报技术总监批准。",
                        ],
                    ),
                    Section(
                        heading="第三章 技术方案评审与审批",
                        paragraphs=[
                            "项目预算不超过350万元的，技术方案由研发部经理审批；"
                            "项目预算超过350万元或涉及客户私有化部署的，技术方案须由技术总监审批。",
                            "技术方案发生重大变更（范围、架构调整或预算调整超过10%）时，须重新履行审批手续，"
                            "审批结论以书面审批记录为准，审批记录归档在项目文件夹中。",
                        ],
                    ),
                    Section(
                        heading="第四章 开发与发布",
                        paragraphs=[
                            "全部代码变更须遵循《Code Review Guidelines》，经评审后方可合入主干。",
                            "生产发布须在变更窗口（每周二、周四 20:00—22:00）内进行，紧急修复除外。",
                        ],
                    ),
                    Section(
                        heading="第五章 结项",
                        paragraphs=[
                            "项目完成全部里程碑后 30 日内提交结项报告，由技术总监组织结项评审。",
                        ],
                    ),
                ],
            ),
        )
    ],
)

CODE_REVIEW = SeedDoc(
    doc_id="d0007",
    name="Code Review Guidelines.md",
    folder="/rd",
    file_type="md",
    secret_level="internal",
    owner="u001",
    department="rd",
    language="en",
    length="medium",
    versions=[
        SeedVersion(
            created_at="2026-02-20T08:00:00+00:00",
            author="u001",
            spec=DocSpec(
                title="Code Review Guidelines",
                file_type="md",
                language="en",
                author="Zhang Wei",
                sections=[
                    Section(
                        heading="1. Who reviews",
                        paragraphs=[
                            "Every change needs approval from at least one reviewer of the owning team before it is "
                            "merged into the main branch.",
                            "Changes to the encryption module (crypto-core), authentication or permission checks need "
                            "two reviewers, one of them from the platform team.",
                        ],
                    ),
                    Section(
                        heading="2. Size of a change",
                        paragraphs=[
                            "Keep a pull request under 400 lines of changed code. Split larger work into a chain of "
                            "pull requests that can be reviewed one by one.",
                        ],
                    ),
                    Section(
                        heading="3. Response time",
                        paragraphs=[
                            "Reviewers respond within one business day. If a review is blocked for more than two "
                            "business days, the author escalates to the team lead.",
                        ],
                    ),
                    Section(
                        heading="4. Emergency changes",
                        paragraphs=[
                            "During a P1 incident the on-call engineer may merge a hotfix without prior review. "
                            "The change must receive a retrospective review within 24 hours after the merge, and "
                            "the pull request must be linked from the incident postmortem.",
                        ],
                    ),
                    Section(
                        heading="5. Reviewer checklist",
                        paragraphs=["Check at least the following before approving:"],
                        table=[
                            ["Item", "Question"],
                            ["Correctness", "Does the change do what the ticket asks, with tests?"],
                            ["Security", "Are inputs validated and secrets kept out of the code?"],
                            ["Permissions", "Does every new endpoint check the caller's access?"],
                            ["Operability", "Are logs, metrics and alerts in place?"],
                        ],
                    ),
                ],
            ),
        )
    ],
)

PATENT_DISCLOSURE = SeedDoc(
    doc_id="d0008",
    name="核心推荐算法专利技术交底书.pdf",
    folder="/rd",
    file_type="pdf",
    secret_level="secret",
    owner="u003",
    department="rd",
    language="zh",
    length="medium",
    versions=[
        SeedVersion(
            created_at="2026-04-10T07:00:00+00:00",
            author="u003",
            spec=DocSpec(
                title="核心推荐算法专利技术交底书",
                file_type="pdf",
                language="zh",
                author="技术总监 王芳",
                sections=[
                    Section(
                        heading="一、发明名称",
                        paragraphs=["一种基于权限感知的企业文档混合检索排序方法。"],
                    ),
                    Section(
                        heading="二、技术背景",
                        paragraphs=[
                            "现有企业检索系统通常先检索后过滤权限，导致高相关但无权限的文档占据候选集，"
                            "过滤后有效结果不足，且存在通过摘要泄露无权限内容的风险。",
                        ],
                    ),
                    Section(
                        heading="三、创新点",
                        paragraphs=[
                            "（1）在召回阶段引入按用户权限分片的前置倒排索引，检索只在用户可预览的文档集合内进行；",
                            "（2）对 BM25 得分与向量相似度采用自适应权重融合，权重由查询长度和查询中的专有名词比例动态确定；",
                            "（3）对多版本文档按版本生效时间进行时间感知排序，优先返回查询时点的有效版本。",
                        ],
                    ),
                    Section(
                        heading="四、发明人与申请安排",
                        paragraphs=[
                            "发明人：王芳。专利代理机构：华诚知识产权代理事务所，代理人陆明。",
                            "计划于 2026 年 12 月前提交发明专利申请，申请前本交底书内容不得对外披露。",
                        ],
                    ),
                ],
            ),
        )
    ],
)

CRYPTO_DESIGN = SeedDoc(
    doc_id="d0009",
    name="加密模块设计说明.docx",
    folder="/rd/platform",
    file_type="docx",
    secret_level="internal",
    owner="u001",
    department="rd-platform",
    language="zh",
    length="medium",
    versions=[
        SeedVersion(
            created_at="2026-04-20T03:00:00+00:00",
            author="u001",
            spec=DocSpec(
                title="加密模块 crypto-core 设计说明",
                file_type="docx",
                language="zh",
                author="平台组 张伟",
                sections=[
                    Section(
                        heading="一、背景",
                        paragraphs=[
                            "crypto-core 是平台组提供的统一加密模块，为企业网盘的文件存储、项目X的检索索引"
                            "以及内部服务之间的敏感数据传输提供加解密能力。",
                        ],
                    ),
                    Section(
                        heading="二、算法与密钥管理",
                        paragraphs=[
                            "文件内容采用 AES-256-GCM 加密，每个文件使用独立的数据密钥；数据密钥由 KMS 中的主密钥加密后存储。",
                            "数据密钥每 90 天轮换一次，主密钥每年轮换一次；轮换期间新旧密钥并存 7 天，以保证存量数据可读。",
                            "密钥访问全部记录审计日志，审计日志保存 180 天。",
                        ],
                    ),
                    Section(
                        heading="三、接口",
                        paragraphs=["模块对外提供以下接口："],
                        table=[
                            ["接口", "说明"],
                            ["encrypt(tenant_id, plaintext)", "返回密文和数据密钥编号"],
                            ["decrypt(tenant_id, ciphertext)", "校验调用方权限后返回明文"],
                            ["rotate(tenant_id)", "触发数据密钥轮换"],
                        ],
                    ),
                    Section(
                        heading="四、出口管制说明",
                        paragraphs=[
                            "本模块包含商用密码算法实现。根据公司出口管制合规要求，本设计说明及源码仅限经合规审查的人员访问，"
                            "外籍员工的访问权限由法务部单独审批。",
                        ],
                    ),
                ],
            ),
        )
    ],
)

PLATFORM_ARCH = SeedDoc(
    doc_id="d0010",
    name="Platform Architecture Overview.md",
    folder="/rd/platform",
    file_type="md",
    secret_level="internal",
    owner="u010",
    department="rd-platform",
    language="en",
    length="long",
    versions=[
        SeedVersion(
            created_at="2026-06-30T09:00:00+00:00",
            author="u010",
            spec=DocSpec(
                title="Platform Architecture Overview",
                file_type="md",
                language="en",
                author="Emily Carter",
                sections=[
                    Section(
                        heading="Clusters",
                        paragraphs=[
                            "The platform team runs three Kubernetes clusters, all upgraded to Kubernetes 1.30 in "
                            "June 2026.",
                        ],
                        table=[
                            ["Cluster", "Region", "Purpose", "Nodes"],
                            ["prod-sh-01", "Shanghai", "online services: drive, preview, OA", "120"],
                            [
                                "prod-sh-02",
                                "Shanghai",
                                "data and AI workloads: Milvus, Elasticsearch, GPU inference",
                                "48",
                            ],
                            ["prod-bj-01", "Beijing", "disaster recovery standby", "60"],
                        ],
                    ),
                    Section(
                        heading="Data and AI services",
                        paragraphs=[
                            "The shared Milvus vector database runs on prod-sh-02 with three query nodes and is "
                            "operated by the platform team for every product team that needs vector search.",
                            "Elasticsearch 8 serves keyword search for the drive. GPU inference runs on 16 GPU nodes "
                            "in prod-sh-02, rented from the Huayun GPU cloud.",
                        ],
                    ),
                    Section(
                        heading="Storage",
                        paragraphs=[
                            "Drive files live in Ceph object storage with three replicas. File contents are "
                            "encrypted by crypto-core before they are written.",
                        ],
                    ),
                    Section(
                        heading="Observability and on-call",
                        paragraphs=[
                            "Metrics are collected by Prometheus and shown in Grafana; logs go to Loki. "
                            "The platform on-call rotation changes every Monday at 10:00 and covers all three clusters.",
                        ],
                    ),
                    Section(
                        heading="Disaster recovery",
                        paragraphs=[
                            "prod-bj-01 receives asynchronous replication from both Shanghai clusters. "
                            "The recovery point objective (RPO) is 15 minutes and the recovery time objective "
                            "(RTO) is 1 hour. A failover drill is held every quarter.",
                        ],
                    ),
                ],
            ),
        )
    ],
)

POSTMORTEM = SeedDoc(
    doc_id="d0011",
    name="Postmortem INC-2026-0917.md",
    folder="/rd/platform",
    file_type="md",
    secret_level="internal",
    owner="u010",
    department="rd-platform",
    language="en",
    length="medium",
    versions=[
        SeedVersion(
            created_at="2026-09-19T08:00:00+00:00",
            author="u010",
            spec=DocSpec(
                title="Postmortem INC-2026-0917: file preview outage",
                file_type="md",
                language="en",
                author="Emily Carter",
                sections=[
                    Section(
                        heading="Summary",
                        paragraphs=[
                            "On 2026-09-17 from 14:05 to 15:20 (UTC+8) file previews failed for about 38% of drive "
                            "users. The incident was classified P1.",
                        ],
                    ),
                    Section(
                        heading="Root cause",
                        paragraphs=[
                            "The TLS certificate of the internal preview service expired. The automatic renewal job "
                            "had been disabled during the Kubernetes upgrade in June and was never re-enabled.",
                        ],
                    ),
                    Section(
                        heading="Timeline",
                        table=[
                            ["Time", "Event"],
                            ["14:05", "Preview error rate alert fires"],
                            ["14:20", "On-call engineer Zhang Wei identifies the expired certificate"],
                            ["14:50", "Hotfix PR #4821 merged and deployed"],
                            ["15:20", "Error rate back to normal; incident closed"],
                        ],
                    ),
                    Section(
                        heading="Resolution",
                        paragraphs=[
                            "Zhang Wei merged hotfix PR #4821 without prior review, as allowed by section 4 "
                            '"Emergency changes" of the Code Review Guidelines. Emily Carter completed the '
                            "retrospective review on 2026-09-18.",
                        ],
                    ),
                    Section(
                        heading="Action items",
                        table=[
                            ["Action", "Owner", "Due"],
                            ["Alert 30 days before any certificate expires", "Emily Carter", "2026-10-15"],
                            ["Re-enable and test the renewal job in every cluster", "Zhang Wei", "2026-09-30"],
                        ],
                    ),
                ],
            ),
        )
    ],
)

DEV_SETUP = SeedDoc(
    doc_id="d0012",
    name="新员工开发环境搭建指南.md",
    folder="/rd/platform",
    file_type="md",
    secret_level="public",
    owner="u001",
    department="rd-platform",
    language="zh",
    length="short",
    versions=[
        SeedVersion(
            created_at="2026-03-10T02:00:00+00:00",
            author="u001",
            spec=DocSpec(
                title="新员工开发环境搭建指南",
                file_type="md",
                language="zh",
                author="平台组 张伟",
                sections=[
                    Section(
                        heading="1. 账号开通",
                        paragraphs=[
                            "入职当天由信息中心开通企业邮箱、VPN 和网盘账号，初始密码通过短信发送，首次登录须修改。",
                        ],
                    ),
                    Section(
                        heading="2. 代码仓库",
                        paragraphs=[
                            "代码托管在公司 GitLab（git.xingchen.example），仓库权限由导师在入职第一周内申请。",
                        ],
                    ),
                    Section(
                        heading="3. 本地环境",
                        paragraphs=[
                            "统一使用 Python 3.11 和 Docker Desktop；克隆仓库后执行 pre-commit install 安装提交检查。",
                        ],
                    ),
                    Section(
                        heading="4. 常见问题",
                        paragraphs=[
                            "VPN 连接失败或网盘无法登录，请联系信息中心吴昊（分机 8021）。",
                        ],
                    ),
                ],
            ),
        )
    ],
)

DOCS: list[SeedDoc] = [
    RD_PLAN_2026,
    RD_PROJECT_RULES,
    CODE_REVIEW,
    PATENT_DISCLOSURE,
    CRYPTO_DESIGN,
    PLATFORM_ARCH,
    POSTMORTEM,
    DEV_SETUP,
]
