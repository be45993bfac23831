"""Offline API docs: Swagger UI at ``/docs`` and ReDoc at ``/redoc``, served from the assets that ship inside the
``fastapi-offline`` package (swagger-ui-bundle.js, swagger-ui.css, redoc.standalone.js, favicon.png) instead of a
CDN, so the pages work on a machine with no network. ReDoc is asked not to load Google Fonts.

The app is created with ``docs_url=None, redoc_url=None`` and ``mount_offline_docs(app)`` adds the three pages
(Swagger UI, its OAuth2 redirect, ReDoc) and the asset mount. Checked in headless Chromium with every non-local
host unresolvable (tests/e2e/test_docs_offline_browser.py).
"""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS_DIR = Path(fastapi_offline.__file__).resolve().parent / "static"
ASSETS = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png")
ASSETS_URL = "/_docs-assets"
DOCS_URL = "/docs"
REDOC_URL = "/redoc"
OAUTH2_REDIRECT_URL = "/docs/oauth2-redirect"


def mount_offline_docs(app: FastAPI) -> None:
    """Serve Swagger UI and ReDoc for ``app.openapi_url`` from packaged assets (no CDN)."""
    missing = [name for name in ASSETS if not (ASSETS_DIR / name).is_file()]
    if missing:  # a repackaged fastapi-offline: fail at start, not with a blank page
        raise RuntimeError(f"fastapi-offline's assets are missing from {ASSETS_DIR}: {', '.join(missing)}")
    app.mount(ASSETS_URL, StaticFiles(directory=ASSETS_DIR), name="docs-assets")
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get(DOCS_URL, include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{openapi_url}",
            title=f"{app.title} - Swagger UI",
            oauth2_redirect_url=f"{root}{OAUTH2_REDIRECT_URL}",
            swagger_js_url=f"{root}{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            swagger_ui_parameters=app.swagger_ui_parameters,
        )

    @app.get(OAUTH2_REDIRECT_URL, include_in_schema=False)
    async def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get(REDOC_URL, include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_redoc_html(
            openapi_url=f"{root}{openapi_url}",
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{root}{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            with_google_fonts=False,
        )
