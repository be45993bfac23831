"""Fixtures for the render tests."""

from __future__ import annotations

import pytest

from tests.support.render_specs import FORMATS


@pytest.fixture(params=FORMATS)
def file_type(request: pytest.FixtureRequest) -> str:
    return str(request.param)
