"""`--extract TYPE=STRATEGY` chooses a per-type strategy; bad values are clear errors."""

from __future__ import annotations

import pytest
import typer

from drivebench.cli.options import parse_extract


def test_parse_extract_sets_only_the_named_types() -> None:
    cfg = parse_extract(["dxf=filename-only", "pdf=layout"])
    assert cfg.dxf == "filename-only" and cfg.pdf == "layout" and cfg.docx == "paragraphs+tables"
    assert parse_extract([]).as_dict()["dxf"] == "entities+titleblock"


@pytest.mark.parametrize(
    ("pair", "needle"), [("dxf", "TYPE=STRATEGY"), ("exe=raw", "TYPE one of"), ("dxf=ocr", "dxf strategies")]
)
def test_parse_extract_rejects_bad_pairs(pair: str, needle: str) -> None:
    with pytest.raises(typer.BadParameter, match=needle):
        parse_extract([pair])
