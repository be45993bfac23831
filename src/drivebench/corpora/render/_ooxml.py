"""Make an OOXML package (docx/xlsx/pptx) byte-for-byte deterministic.

python-docx, openpyxl and python-pptx stamp zip entries with the wall clock and
write ``docProps/core.xml`` with the current time. ``pin_package`` rewrites the
package: every entry gets ``ZIP_DATE_TIME``, entries keep the writer's (deterministic)
order with ``[Content_Types].xml`` first, and the core properties' created/modified/
lastModifiedBy/revision are replaced with pinned values.
"""

from __future__ import annotations

import io
import re
import zipfile

from drivebench.corpora.render._fixed import DEFAULT_AUTHOR, FIXED_DATETIME, ZIP_DATE_TIME

_CORE = "docProps/core.xml"
_W3CDTF = FIXED_DATETIME.strftime("%Y-%m-%dT%H:%M:%SZ")


def _xml_escape(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _pin_core(xml: str, last_modified_by: str) -> str:
    for tag in ("dcterms:created", "dcterms:modified"):
        xml = re.sub(rf"(<{tag}\b[^>]*>)[^<]*(</{tag}>)", rf"\g<1>{_W3CDTF}\g<2>", xml)
    who = _xml_escape(last_modified_by)
    if "<cp:lastModifiedBy" in xml:
        xml = re.sub(
            r"<cp:lastModifiedBy\s*/>|<cp:lastModifiedBy>[^<]*</cp:lastModifiedBy>",
            lambda _m: f"<cp:lastModifiedBy>{who}</cp:lastModifiedBy>",
            xml,
        )
    xml = re.sub(r"<cp:revision>[^<]*</cp:revision>", "<cp:revision>1</cp:revision>", xml)
    return xml


def pin_package(data: bytes, last_modified_by: str | None = None) -> bytes:
    """Return ``data`` (an OOXML zip) rewritten with pinned timestamps and stable entry order."""
    who = last_modified_by or DEFAULT_AUTHOR
    src = zipfile.ZipFile(io.BytesIO(data))
    names = src.namelist()
    ordered = [n for n in names if n == "[Content_Types].xml"] + [n for n in names if n != "[Content_Types].xml"]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for name in ordered:
            payload = src.read(name)
            if name == _CORE:
                payload = _pin_core(payload.decode("utf-8"), who).encode("utf-8")
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o600 << 16
            info.create_system = 0
            dst.writestr(info, payload, compresslevel=6)
    return out.getvalue()
