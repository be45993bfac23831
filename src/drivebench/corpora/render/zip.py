"""Zip writer: each ``spec.members`` entry rendered (recursively: a member may itself be a zip)
and stored under its name, in spec order, with a fixed date_time and fixed attributes. The
archive comment holds the title (UTF-8).

If the spec has sections too, they are written as ``README.md`` first, so that nothing in the
spec is lost. Member names are used as given (after ``/`` normalisation): the writer is for
well-formed corpora; hostile archives are built by tests, not by this module.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable

from drivebench.corpora.render._fixed import ZIP_DATE_TIME
from drivebench.corpora.render.md import render_md
from drivebench.corpora.render.spec import DocSpec

README = "README.md"


def _info(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name.replace("\\", "/"), date_time=ZIP_DATE_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.create_system = 3
    info.external_attr = 0o644 << 16
    info.flag_bits |= 0x800  # names are UTF-8
    return info


def render_zip(spec: DocSpec, render: Callable[[DocSpec], bytes]) -> bytes:
    """``render`` is the dispatcher, passed in to render members of any format."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        if spec.sections or spec.title_block:
            readme = DocSpec(
                title=spec.title,
                file_type="md",
                language=spec.language,
                sections=spec.sections,
                author=spec.author,
                title_block=spec.title_block,
            )
            zf.writestr(_info(README), render_md(readme), compresslevel=6)
        for member in spec.members:
            zf.writestr(_info(member.name), render(member.spec), compresslevel=6)
        zf.comment = spec.title.encode("utf-8")[:65535]
    return buf.getvalue()
