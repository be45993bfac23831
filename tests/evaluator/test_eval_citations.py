"""Citation extraction: every syntax, full-width forms, case folding, reference lists, non-citations."""

from __future__ import annotations

import pytest

from drivebench.evaluator.catalog import Catalog, CatalogDoc
from drivebench.evaluator.citations import extract_citations, has_doc_extension


@pytest.fixture
def cat() -> Catalog:
    return Catalog(
        [
            CatalogDoc("d0001", "报价单.PDF", "/财务/报价单.PDF", "二季度报价"),
            CatalogDoc("d0002", "README.md", "/a/README.md"),
            CatalogDoc("d0003", "README.md", "/b/README.md"),
            CatalogDoc("d0007", "技术方案.docx", "/研发/项目X/技术方案.docx", "Project X Design"),
        ]
    )


def cited(text: str, cat: Catalog, prefer=()) -> tuple[list[str], list[str]]:
    found = extract_citations(text, cat, prefer)
    return found.cited, found.unresolvable


def test_square_bracket_file_name(cat) -> None:
    assert cited("审批人见[技术方案.docx]。", cat) == (["d0007"], [])


def test_wiki_doc_id_and_alias(cat) -> None:
    assert cited("见 [[d0007]] 与 [[报价单.pdf|报价]]", cat) == (["d0007", "d0001"], [])


def test_wiki_unknown_is_unresolvable(cat) -> None:
    assert cited("见 [[d9999]]", cat) == ([], ["d9999"])


def test_lenticular_brackets_by_name_and_title(cat) -> None:
    assert cited("依据【技术方案.docx】和【二季度报价】", cat) == (["d0007", "d0001"], [])


def test_full_width_square_brackets_and_letters_fold(cat) -> None:
    assert cited("见［ＲＥＡＤＭＥ．ｍｄ］", cat, prefer={"d0002"}) == (["d0002"], [])


def test_case_folding(cat) -> None:
    assert cited("[报价单.pdf] [PROJECT X DESIGN]", cat) == (["d0001", "d0007"], [])


def test_path_citation(cat) -> None:
    assert cited("[/研发/项目X/技术方案.docx]", cat) == (["d0007"], [])


def test_markdown_footnotes_with_definitions(cat) -> None:
    text = "方案[^1]，价格[^2]。\n\n[^1]: 技术方案.docx\n[^2]: 不存在.xlsx\n"
    assert cited(text, cat) == (["d0007"], ["不存在.xlsx"])


def test_numbered_reference_list_at_the_end(cat) -> None:
    text = "方案[1]，价格[2]。\n\n参考资料：\n[1] 技术方案.docx (第3页)\n[2] /财务/报价单.pdf"
    assert cited(text, cat) == (["d0007", "d0001"], [])


def test_reference_entry_with_wiki_or_link(cat) -> None:
    text = "见[1][2]\n\nSources:\n1. ignored line\n[1]: [[d0001]]\n[2] [方案](https://drive.example/files/d0007)"
    assert cited(text, cat) == (["d0001", "d0007"], [])


def test_reference_entry_that_resolves_to_nothing_is_unresolvable(cat) -> None:
    assert cited("答案[1]\n\n[1] 某个文件", cat) == ([], ["某个文件"])


def test_dangling_footnote_marker_is_unresolvable(cat) -> None:
    assert cited("答案[^3]", cat) == ([], ["[^3]"])


def test_numbers_in_brackets_without_a_reference_list_are_prose(cat) -> None:
    assert cited("步骤[1]和数组 a[0] 以及 [see above]", cat) == ([], [])


def test_unresolved_markdown_link_is_not_a_citation(cat) -> None:
    assert cited("见[指南.pdf](https://example.com/guide.pdf)", cat) == ([], [])


def test_resolving_markdown_link_counts(cat) -> None:
    assert cited("见[这里](https://drive.example/d/d0007)", cat) == (["d0007"], [])


def test_bracket_with_unknown_file_extension_is_unresolvable_else_ignored(cat) -> None:
    assert cited("[缺失.pdf] [注意] 【提示】 [Node.js]", cat) == ([], ["缺失.pdf"])


def test_list_in_one_bracket(cat) -> None:
    assert cited("[技术方案.docx, 报价单.pdf；其他.xlsx]", cat) == (["d0007", "d0001"], ["其他.xlsx"])


def test_code_is_ignored(cat) -> None:
    assert cited("`[报价单.pdf]`\n```\n[[d0007]]\n```\n", cat) == ([], [])


def test_ambiguous_name_prefers_retrieved_doc(cat) -> None:
    found = extract_citations("[README.md]", cat, prefer={"d0003"})
    assert found.cited == ["d0003"] and found.ambiguous == 1
    assert extract_citations("[README.md]", cat).cited == ["d0002"]


def test_same_document_cited_many_ways_counts_once(cat) -> None:
    assert cited("[[d0007]] [技术方案.docx] 【Project X Design】", cat) == (["d0007"], [])


def test_empty_or_none_answer(cat) -> None:
    assert cited("", cat) == ([], [])
    assert extract_citations(None, cat).cited == []


def test_extension_list() -> None:
    assert has_doc_extension("a.PDF") and has_doc_extension("图纸.dxf")
    assert not has_doc_extension("Node.js") and not has_doc_extension("v1.2") and not has_doc_extension("注意")
