"""The seed evaluation set, written by hand against the seed documents and permissions.

Each query names its asker (``user_id``). ``gold`` entries are ``"d0014"`` or, where the version
matters, ``"d0014@2"`` (-> ``version_id`` ``d0014-v2``). Tags:

* ``kind``: ``single`` | ``multi_hop`` | ``permission`` | ``version``;
* ``department``, ``file_type``: of the first gold document (of the first forbidden one when the
  asker may see no relevant document); ``length``: the query's length bucket (short/medium/long,
  ``drivebench.formats.query_length.length_bucket``);
* ``role``: the asker's first role; ``lang``: the query's language (``zh``/``en``);
* permission queries also carry ``pair`` (both askers of a pair share it), ``access``
  (``allowed``/``denied``) and ``mechanism`` (what grants or blocks the access).

Queries whose asker may see none of the relevant documents have ``gold == []`` and no
``answer_facts``: the right behaviour is to return nothing relevant.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from drivebench.corpora.seed.content import DOCS_BY_ID, USERS
from drivebench.formats.evalset import EvalQuery, GoldDoc
from drivebench.formats.query_length import length_bucket


@dataclass(frozen=True)
class Q:
    qid: str
    query: str
    user: str
    kind: str
    gold: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    hops: tuple[str, ...] | None = None
    forbidden: tuple[str, ...] = ()
    as_of: str | None = None
    extra: dict[str, str] = field(default_factory=dict)


def _pair(pair: str, mechanism: str, allowed: bool) -> dict[str, str]:
    return {"pair": pair, "mechanism": mechanism, "access": "allowed" if allowed else "denied"}


QUERIES: list[Q] = [
    # ---- single-document questions -------------------------------------------------------------
    Q("q001", "项目X的技术方案审批人", "u001", "single", ("d0015", "d0014@2"), ("王芳",)),
    Q("q002", "年假怎么规定的？工作满10年有几天年假？", "u011", "single", ("d0001",), ("满10年不满20年", "10天")),
    Q(
        "q003",
        "What is the minimum password length for company accounts?",
        "u009",
        "single",
        ("d0003",),
        ("at least 12 characters",),
    ),
    Q("q004", "研发部2026年第四季度的重点工作是什么？", "u002", "single", ("d0005",), ("研发效能度量平台",)),
    Q("q005", "What is the maximum size of a pull request?", "u010", "single", ("d0007",), ("400 lines",)),
    Q("q006", "Which Kubernetes cluster runs GPU inference?", "u010", "single", ("d0010",), ("prod-sh-02",)),
    Q("q007", "What caused the file preview outage INC-2026-0917?", "u001", "single", ("d0011",), ("TLS certificate",)),
    Q("q008", "开发环境要求安装哪个版本的Python？", "u007", "single", ("d0012",), ("Python 3.11",)),
    Q("q009", "VPN连不上应该找谁？", "u007", "single", ("d0012",), ("吴昊", "8021")),
    Q("q010", "项目X一期计划什么时候上线？", "u010", "single", ("d0013",), ("2026-10-31",)),
    Q("q011", "When is the Project X weekly status meeting?", "u005", "single", ("d0016",), ("Tuesday at 10:00",)),
    Q("q012", "2027届校园招聘计划招多少人？", "u006", "single", ("d0022",), ("60人",)),
    Q("q013", "合同金额超过500万元的合同由谁最终批准？", "u008", "single", ("d0025",), ("总经理",)),
    Q(
        "q014",
        "How long do the confidentiality obligations of our mutual NDA survive?",
        "u008",
        "single",
        ("d0026",),
        ("three years",),
    ),
    Q("q015", "How long are drive audit logs kept?", "u009", "single", ("d0027",), ("180 days",)),
    Q("q016", "项目X一期上线后的问答准确率是多少？", "u001", "single", ("d0029",), ("87.5%",)),
    Q("q017", "2026年1-9月哪个部门的费用预算执行率最高？", "u004", "single", ("d0028",), ("信息中心", "82.8%")),
    Q(
        "q018",
        "What is the recovery time objective of the platform's disaster recovery?",
        "u001",
        "single",
        ("d0010",),
        ("1 hour",),
    ),
    Q("q019", "公司婚假有几天？", "u012", "single", ("d0001",), ("婚假为 3 天",)),
    # ---- version questions -----------------------------------------------------------------------
    Q("q020", "项目X的技术方案审批人", "u001", "version", ("d0014@1",), ("李强",), as_of="2026-08-01T00:00:00+00:00"),
    Q("q021", "一线城市出差住宿标准是多少？", "u001", "version", ("d0002@2",), ("600元/晚",)),
    Q(
        "q022",
        "一线城市出差住宿标准是多少？",
        "u001",
        "version",
        ("d0002@1",),
        ("500元/晚",),
        as_of="2026-03-01T00:00:00+00:00",
    ),
    Q("q023", "项目X的预算总额是多少？", "u005", "version", ("d0018@2",), ("365万元",)),
    Q(
        "q024",
        "项目X的预算总额是多少？",
        "u005",
        "version",
        ("d0018@1", "d0013"),
        ("320万元",),
        as_of="2026-07-01T00:00:00+00:00",
    ),
    Q("q025", "How many days per week can I work remotely?", "u010", "version", ("d0004@2",), ("three days per week",)),
    Q(
        "q026",
        "How many days per week can I work remotely?",
        "u010",
        "version",
        ("d0004@1",),
        ("two days per week",),
        as_of="2026-05-01T00:00:00+00:00",
    ),
    Q("q027", "出差伙食补助每天多少钱？", "u002", "version", ("d0002@2",), ("120 元",)),
    # ---- multi-hop questions (hops in reading order) ---------------------------------------------
    Q(
        "q028",
        "项目X技术方案的审批人在立项书中担任什么角色？",
        "u001",
        "multi_hop",
        ("d0015", "d0013"),
        ("王芳", "项目发起人"),
        hops=("d0015", "d0013"),
    ),
    Q(
        "q029",
        "项目X使用的向量数据库部署在哪个集群？",
        "u001",
        "multi_hop",
        ("d0014@2", "d0010"),
        ("Milvus", "prod-sh-02"),
        hops=("d0014", "d0010"),
    ),
    Q(
        "q030",
        "项目X技术方案v2.0为什么改由技术总监审批？",
        "u002",
        "multi_hop",
        ("d0015", "d0006"),
        ("私有化部署", "350万元"),
        hops=("d0015", "d0006"),
    ),
    Q(
        "q031",
        "项目X租用GPU的云服务供应商是谁？合同金额是多少？",
        "u005",
        "multi_hop",
        ("d0014@2", "d0019"),
        ("华云科技", "138万元"),
        hops=("d0014", "d0019"),
    ),
    Q(
        "q032",
        "Under which rule was the hotfix for INC-2026-0917 merged without review, and how soon must it be "
        "reviewed afterwards?",
        "u010",
        "multi_hop",
        ("d0011", "d0007"),
        ("Emergency changes", "24 hours"),
        hops=("d0011", "d0007"),
    ),
    Q(
        "q033",
        "员工手册要求的信息安全培训以哪份制度为准？该制度规定密码至少多少位？",
        "u011",
        "multi_hop",
        ("d0001", "d0003"),
        ("Information Security Policy", "12 characters"),
        hops=("d0001", "d0003"),
    ),
    Q(
        "q034",
        "华云科技合同的责任上限条款有什么问题？按合同审查指引应如何处理？",
        "u008",
        "multi_hop",
        ("d0019", "d0025"),
        ("9.2", "法务负责人书面批准"),
        hops=("d0019", "d0025"),
    ),
    Q(
        "q035",
        "How much had Project X spent by the end of Q3 2026, and what is its current total budget?",
        "u004",
        "multi_hop",
        ("d0017", "d0018@2"),
        ("198万元", "365万元"),
        hops=("d0017", "d0018"),
    ),
    # ---- permission pairs: same question, one asker may see the answer, the other may not ----------
    Q(
        "q036",
        "Who approved the technical plan of Project X?",
        "u010",
        "permission",
        ("d0015", "d0014@2"),
        ("王芳",),
        extra=_pair("p01", "project_member", True),
    ),
    Q(
        "q037",
        "Who approved the technical plan of Project X?",
        "u007",
        "permission",
        (),
        (),
        forbidden=("d0015", "d0014"),
        extra=_pair("p01", "expired_membership", False),
    ),
    Q(
        "q038",
        "2027年融资计划的融资规模是多少？",
        "u004",
        "permission",
        ("d0020",),
        ("3亿元",),
        extra=_pair("p02", "role_grant_on_break_folder", True),
    ),
    Q(
        "q039",
        "2027年融资计划的融资规模是多少？",
        "u005",
        "permission",
        (),
        (),
        forbidden=("d0020",),
        extra=_pair("p02", "break_inheritance", False),
    ),
    Q(
        "q040",
        "How much was the tax audit settlement?",
        "u004",
        "permission",
        ("d0021",),
        ("RMB 4.7 million",),
        extra=_pair("p03", "role_grant", True),
    ),
    Q(
        "q041",
        "How much was the tax audit settlement?",
        "u005",
        "permission",
        (),
        (),
        forbidden=("d0021",),
        extra=_pair("p03", "path_prefix", False),
    ),
    Q(
        "q042",
        "加密模块的数据密钥多久轮换一次？",
        "u001",
        "permission",
        ("d0009",),
        ("每 90 天轮换一次",),
        extra=_pair("p04", "department_grant", True),
    ),
    Q(
        "q043",
        "加密模块的数据密钥多久轮换一次？",
        "u010",
        "permission",
        (),
        (),
        forbidden=("d0009",),
        extra=_pair("p04", "explicit_deny", False),
    ),
    Q(
        "q044",
        "CEO的年度目标奖金占基本年薪的比例是多少？",
        "u006",
        "permission",
        ("d0023",),
        ("60%",),
        extra=_pair("p05", "clearance_ok", True),
    ),
    Q(
        "q045",
        "CEO的年度目标奖金占基本年薪的比例是多少？",
        "u011",
        "permission",
        (),
        (),
        forbidden=("d0023",),
        extra=_pair("p05", "clearance", False),
    ),
    Q(
        "q046",
        "核心推荐算法专利的创新点有哪些？",
        "u003",
        "permission",
        ("d0008",),
        ("自适应权重",),
        extra=_pair("p06", "clearance_ok", True),
    ),
    Q(
        "q047",
        "核心推荐算法专利的创新点有哪些？",
        "u002",
        "permission",
        (),
        (),
        forbidden=("d0008",),
        extra=_pair("p06", "clearance", False),
    ),
    Q(
        "q048",
        "项目X预算中GPU云资源调整为多少？",
        "u005",
        "permission",
        ("d0018@2",),
        ("150万元",),
        extra=_pair("p07", "department_grant", True),
    ),
    Q(
        "q049",
        "项目X预算中GPU云资源调整为多少？",
        "u010",
        "permission",
        (),
        (),
        forbidden=("d0018",),
        extra=_pair("p07", "expired_grant", False),
    ),
    Q(
        "q050",
        "华云科技GPU云服务合同金额是多少？",
        "u008",
        "permission",
        ("d0019",),
        ("138万元",),
        extra=_pair("p08", "temporary_grant", True),
    ),
    Q(
        "q051",
        "华云科技GPU云服务合同金额是多少？",
        "u001",
        "permission",
        (),
        (),
        forbidden=("d0019",),
        extra=_pair("p08", "no_grant", False),
    ),
    Q(
        "q052",
        "What was the company's revenue in Q3 2026?",
        "u002",
        "permission",
        ("d0017",),
        ("1.86亿元",),
        extra=_pair("p09", "document_grant", True),
    ),
    Q(
        "q053",
        "What was the company's revenue in Q3 2026?",
        "u009",
        "permission",
        (),
        (),
        forbidden=("d0017",),
        extra=_pair("p09", "list_only", False),
    ),
    Q(
        "q054",
        "新员工试用期多长？",
        "u011",
        "permission",
        ("d0024",),
        ("three months",),
        extra=_pair("p10", "department_grant", True),
    ),
    Q(
        "q055",
        "新员工试用期多长？",
        "u012",
        "permission",
        (),
        (),
        forbidden=("d0024",),
        extra=_pair("p10", "clearance", False),
    ),
]


def _gold(ref: str) -> GoldDoc:
    doc_id, _, version = ref.partition("@")
    return GoldDoc(doc_id=doc_id, version_id=f"{doc_id}-v{version}" if version else None)


def _lang(text: str) -> str:
    return "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in text) else "en"


def to_eval_query(q: Q) -> EvalQuery:
    """Turn one hand-written row into an ``EvalQuery``, filling the descriptive tags from the documents."""
    users = {u.user_id: u for u in USERS}
    gold = [_gold(g) for g in q.gold]
    primary = DOCS_BY_ID[gold[0].doc_id if gold else q.forbidden[0]]
    tags = {
        "kind": q.kind,
        "department": primary.department,
        "file_type": primary.file_type,
        "length": length_bucket(q.query),
        "role": users[q.user].roles[0],
        "lang": _lang(q.query),
        **q.extra,
    }
    return EvalQuery.model_validate(
        {
            "query_id": q.qid,
            "query": q.query,
            "user_id": q.user,
            "gold": [g.model_dump() for g in gold],
            "hops": list(q.hops) if q.hops else None,
            "forbidden": list(q.forbidden),
            "tags": tags,
            "as_of": q.as_of,
            "answer_facts": list(q.facts),
        }
    )


def eval_queries() -> list[EvalQuery]:
    return [to_eval_query(q) for q in QUERIES]
