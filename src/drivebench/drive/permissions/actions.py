"""The drive's actions and what each implies.

An allow of an action also allows every action it implies; a deny of an action also denies
every action that implies it (you cannot download what you may not preview). ``list`` is the
weakest: denying it makes an item invisible (the vendor's "invisible").

implies:
    manage   -> everything
    edit     -> upload, download, preview, list
    download, delete, share, upload -> preview, list
    preview  -> list
"""

from __future__ import annotations

from functools import cache

ACTIONS: tuple[str, ...] = ("list", "preview", "download", "upload", "edit", "delete", "share", "manage")

_DIRECT: dict[str, tuple[str, ...]] = {
    "list": (),
    "preview": ("list",),
    "download": ("preview",),
    "upload": ("preview",),
    "delete": ("preview",),
    "share": ("preview",),
    "edit": ("upload", "download"),
    "manage": ("edit", "delete", "share"),
}


@cache
def allowed_by(action: str) -> frozenset[str]:
    """Every action an allow of ``action`` grants (itself included)."""
    if action not in _DIRECT:
        raise ValueError(f"unknown action {action!r}; known: {', '.join(ACTIONS)}")
    out = {action}
    for weaker in _DIRECT[action]:
        out |= allowed_by(weaker)
    return frozenset(out)


@cache
def denied_by(action: str) -> frozenset[str]:
    """Every action a deny of ``action`` takes away (itself and every action implying it)."""
    if action not in _DIRECT:
        raise ValueError(f"unknown action {action!r}; known: {', '.join(ACTIONS)}")
    return frozenset(a for a in ACTIONS if action in allowed_by(a))
