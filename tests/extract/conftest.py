"""Fixtures for the extractor tests."""

from __future__ import annotations

import pytest

from drivebench.corpora.render import render
from tests.support.file_builders import small_spec


@pytest.fixture(scope="session")
def good_docx() -> bytes:
    return render(small_spec("docx", "好文档"))


@pytest.fixture(scope="session")
def good_pdf() -> bytes:
    return render(small_spec("pdf", "好PDF"))
