"""Company-wide policies in ``/company``: readable by everyone (subject to clearance)."""

from __future__ import annotations

from drivebench.corpora.render.spec import DocSpec, Section
from drivebench.corpora.seed.model import SeedDoc, SeedVersion

EMPLOYEE_HANDBOOK = SeedDoc(
    doc_id="d0001",
    name="员工手册（2026版）.docx",
    folder="/company",
    file_type="docx",
    secret_level="public",
    owner="u006",
    department="hr",
    language="zh",
    length="long",
    versions=[
        SeedVersion(
            created_at="2026-01-04T02:00:00+00:00",
            author="u006",
            note="2026年度修订版",
            spec=DocSpec(
                title="星辰科技有限公司员工手册（2026版）",
                file_type="docx",
                language="zh",
                author="人力资源部 赵敏",
                sections=[
                    Section(
                        heading="一、总则",
                        paragraphs=[
                            "本手册适用于星辰科技有限公司（以下简称“公司”）全体正式员工、试用期员工及实习生，"
                            "是员工在公司工作期间的基本行为规范。手册由人力资源部负责解释，每年一月修订一次。",
                            "本手册与公司其他管理制度不一致的，以专项制度为准；专项制度未作规定的，按本手册执行。",
                        ],
                    ),
                    Section(
                        heading="二、工作时间与考勤",
                        paragraphs=[
                            "公司实行标准工时制，工作时间为周一至周五 9:00—18:00，其中 12:00—13:00 为午休时间。",
                            "公司实行弹性打卡：员工可在 8:30—9:30 之间到岗，并相应顺延下班时间，每日工作满 8 小时。",
                            "当月迟到累计超过 3 次的，由部门经理进行绩效面谈；无故旷工 3 日以上的，按严重违纪处理。",
                            "远程办公的申请条件与审批流程见《Remote Work Policy》。",
                        ],
                    ),
                    Section(
                        heading="三、假期",
                        paragraphs=[
                            "员工享有国家规定的法定节假日。带薪年休假按员工累计工作年限确定，"
                            "具体天数见下表；当年未休完的年假可顺延至次年 3 月 31 日，逾期作废。",
                            "病假须在 OA 系统提交申请并附二级以上医院诊断证明；婚假为 3 天，另享公司额外婚假 7 天；"
                            "产假、陪产假按《上海市人口与计划生育条例》执行。",
                        ],
                        table=[
                            ["累计工作年限", "年休假天数"],
                            ["满1年不满10年", "5天"],
                            ["满10年不满20年", "10天"],
                            ["满20年", "15天"],
                        ],
                    ),
                    Section(
                        heading="四、薪酬与福利",
                        paragraphs=[
                            "公司每月 10 日以银行转账方式发放上月工资，遇节假日提前发放。",
                            "公司依法为员工缴纳五险一金，住房公积金缴存比例为 12%。"
                            "此外，公司为全体正式员工购买补充医疗保险，并每年组织一次免费体检。",
                            "年终奖根据公司经营业绩和个人年度绩效确定，于次年春节前发放。",
                        ],
                    ),
                    Section(
                        heading="五、信息安全",
                        paragraphs=[
                            "所有员工须在入职 30 天内完成信息安全培训，具体要求以信息中心发布的"
                            "《Information Security Policy》为准。",
                            "员工不得将标注为“秘密”或“机密”的文件上传至个人网盘或通过个人邮箱发送。"
                            "离职员工的网盘权限由信息中心在最后工作日当天回收。",
                        ],
                    ),
                    Section(
                        heading="六、行为准则与举报",
                        paragraphs=[
                            "员工应诚实守信，不得收受供应商的礼品、礼金或宴请；价值 200 元以上的礼品须上交人力资源部登记。",
                            "任何违反公司制度或法律法规的行为，均可通过合规举报邮箱 compliance@xingchen.example 实名或匿名举报，"
                            "公司对举报人信息严格保密。",
                        ],
                    ),
                ],
            ),
        )
    ],
)


def _travel_policy(version: int) -> DocSpec:
    if version == 1:
        lodging = [
            ["城市类别", "普通员工", "经理及以上"],
            ["一线城市（北京、上海、广州、深圳）", "500元/晚", "700元/晚"],
            ["二线城市（省会及计划单列市）", "400元/晚", "550元/晚"],
            ["其他城市", "300元/晚", "450元/晚"],
        ]
        allowance = "出差伙食补助为每人每天 100 元，按实际出差天数计算，无需提供发票。"
        effective = "本办法自 2026 年 1 月 5 日起施行。"
    else:
        lodging = [
            ["城市类别", "普通员工", "经理及以上"],
            ["一线城市（北京、上海、广州、深圳）", "600元/晚", "800元/晚"],
            ["二线城市（省会及计划单列市）", "400元/晚", "550元/晚"],
            ["其他城市", "300元/晚", "450元/晚"],
        ]
        allowance = "出差伙食补助为每人每天 120 元，按实际出差天数计算，无需提供发票。"
        effective = (
            "本办法自 2026 年 7 月 1 日起施行，2026 年 1 月版同时废止。本次修订上调了一线城市住宿标准和伙食补助标准。"
        )
    return DocSpec(
        title="差旅与费用报销管理办法",
        file_type="pdf",
        language="zh",
        author="财务部 陈静",
        sections=[
            Section(
                heading="第一章 总则",
                paragraphs=[
                    "为规范公司差旅及日常费用报销管理，控制费用支出，制定本办法。本办法适用于公司全体员工。",
                    "财务部负责本办法的制定、解释和监督执行，各部门经理对本部门费用的真实性和合理性负责。",
                ],
            ),
            Section(
                heading="第二章 住宿标准",
                paragraphs=[
                    "员工出差住宿应在下表标准内据实报销，超出部分由个人承担；确因会议安排等原因超标的，"
                    "须事先在 OA 系统提交超标申请并经部门经理批准。",
                ],
                table=lodging,
            ),
            Section(
                heading="第三章 交通与伙食补助",
                paragraphs=[
                    "城际交通原则上乘坐高铁二等座；单程高铁时间超过 4 小时的，可乘坐飞机经济舱。",
                    allowance,
                    "市内交通优先使用公共交通，加班至 21:00 以后可凭打车软件行程单报销回家车费。",
                ],
            ),
            Section(
                heading="第四章 报销流程",
                paragraphs=[
                    "员工应在出差结束后 15 个工作日内通过 OA 系统提交报销申请，并上传电子发票。",
                    "报销申请由部门经理审批；单笔金额超过 5000 元的，还须经财务经理复核。"
                    "财务部在审批完成后 5 个工作日内将款项支付至员工工资卡。",
                ],
            ),
            Section(heading="第五章 附则", paragraphs=[effective]),
        ],
    )


TRAVEL_POLICY = SeedDoc(
    doc_id="d0002",
    name="差旅与费用报销管理办法.pdf",
    folder="/company",
    file_type="pdf",
    secret_level="internal",
    owner="u004",
    department="finance",
    language="zh",
    length="medium",
    versions=[
        SeedVersion(created_at="2026-01-05T01:30:00+00:00", author="u004", spec=_travel_policy(1)),
        SeedVersion(
            created_at="2026-07-01T01:30:00+00:00",
            author="u004",
            note="上调一线城市住宿标准和伙食补助",
            spec=_travel_policy(2),
        ),
    ],
)

SECURITY_POLICY = SeedDoc(
    doc_id="d0003",
    name="Information Security Policy.md",
    folder="/company",
    file_type="md",
    secret_level="internal",
    owner="u009",
    department="it",
    language="en",
    length="medium",
    versions=[
        SeedVersion(
            created_at="2026-01-10T03:00:00+00:00",
            author="u009",
            spec=DocSpec(
                title="Information Security Policy",
                file_type="md",
                language="en",
                author="Information Center (Wu Hao)",
                sections=[
                    Section(
                        heading="1. Purpose and scope",
                        paragraphs=[
                            "This policy sets the minimum security rules for every employee, intern and contractor of "
                            "Xingchen Technology Co., Ltd. It covers company laptops, the corporate cloud drive, "
                            "source code repositories and any personal device used for work.",
                            "The Information Center owns this policy and reviews it every January.",
                        ],
                    ),
                    Section(
                        heading="2. Passwords and authentication",
                        paragraphs=[
                            "Passwords must be at least 12 characters long and contain letters, digits and symbols.",
                            "Passwords are rotated every 180 days and may not repeat any of the last five passwords.",
                            "Multi-factor authentication is mandatory for the VPN, e-mail and the cloud drive.",
                        ],
                    ),
                    Section(
                        heading="3. Data classification",
                        paragraphs=[
                            "Every document carries one of four levels: Public (公开), Internal (内部), "
                            "Confidential (秘密) and Secret (机密). An employee may only open documents at or below "
                            "their own clearance, whatever folder permissions say.",
                            "Confidential and Secret documents may not be downloaded to personal devices, printed "
                            "outside the office or sent to external e-mail addresses.",
                        ],
                    ),
                    Section(
                        heading="4. Training",
                        paragraphs=[
                            "All employees complete the security awareness training within 30 days of joining and "
                            "repeat it every year. Managers are notified of overdue training.",
                        ],
                    ),
                    Section(
                        heading="5. Incident reporting",
                        paragraphs=[
                            "Report a lost device, a phishing e-mail or any suspected data leak to "
                            "security@xingchen.example within 1 hour of noticing it. Do not try to investigate "
                            "on your own.",
                        ],
                    ),
                ],
            ),
        )
    ],
)


def _remote_policy(version: int) -> DocSpec:
    if version == 1:
        days = "Eligible employees may work remotely up to two days per week, agreed in advance with their manager."
        interns = "Interns are not eligible for remote work."
    else:
        days = (
            "Eligible employees may work remotely up to three days per week, agreed in advance with their manager. "
            "This limit applies from 1 September 2026."
        )
        interns = "Interns may work remotely one day per week with their mentor's approval."
    return DocSpec(
        title="Remote Work Policy",
        file_type="docx",
        language="en",
        author="HR Department",
        sections=[
            Section(
                heading="Eligibility",
                paragraphs=[
                    "Employees who have passed probation and whose role does not require on-site presence may "
                    "apply for remote work through the OA system.",
                    interns,
                ],
            ),
            Section(
                heading="How much remote work",
                paragraphs=[
                    days,
                    "Core collaboration hours are 10:00 to 16:00 (UTC+8); remote employees must be reachable on "
                    "the company messenger during these hours.",
                ],
            ),
            Section(
                heading="Security",
                paragraphs=[
                    "Remote work is only allowed on company laptops connected through the company VPN. "
                    "Working from public Wi-Fi without the VPN is forbidden.",
                ],
            ),
        ],
    )


REMOTE_POLICY = SeedDoc(
    doc_id="d0004",
    name="Remote Work Policy.docx",
    folder="/company",
    file_type="docx",
    secret_level="public",
    owner="u006",
    department="hr",
    language="en",
    length="short",
    versions=[
        SeedVersion(created_at="2026-02-01T02:00:00+00:00", author="u006", spec=_remote_policy(1)),
        SeedVersion(
            created_at="2026-09-01T02:00:00+00:00",
            author="u006",
            note="remote days raised from two to three per week",
            spec=_remote_policy(2),
        ),
    ],
)

DOCS: list[SeedDoc] = [EMPLOYEE_HANDBOOK, TRAVEL_POLICY, SECURITY_POLICY, REMOTE_POLICY]
