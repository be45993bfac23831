"""Fixtures of the small builders for eval-set queries and run records (``tests.support.evalrecords``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from drivebench.formats.evalset import EvalQuery, RunRecord
from tests.support.evalrecords import make_query, make_record


@pytest.fixture
def mkq() -> Callable[..., EvalQuery]:
    return make_query


@pytest.fixture
def mkr() -> Callable[..., RunRecord]:
    return make_record
