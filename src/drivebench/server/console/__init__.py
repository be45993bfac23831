"""The web console under ``/ui/``: server-rendered pages over the same plain-Python drive, permission,
recall, history and fault functions the API uses (``router``). ``mount_console(app)`` adds it to an app."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from drivebench.resources import package_dir
from drivebench.server.console.router import router
from drivebench.server.console.session import ConsoleSettings, Sessions

STATIC = package_dir("drivebench.server.console") / "static"


def mount_console(app: FastAPI) -> None:
    """``/ui/`` pages, ``/ui/static/`` (the console's own CSS), ``/ui`` redirecting to ``/ui/``, an empty
    ``/favicon.ico``. The session store's settings come from ``DRIVEBENCH_CONSOLE_*`` (read here, so a bad
    value stops the server at start, not at a sign-in)."""
    app.state.ui_sessions = Sessions(ConsoleSettings.from_env())
    app.mount("/ui/static", StaticFiles(directory=STATIC), name="ui-static")
    app.include_router(router)

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:  # browsers ask for it on every page (the run reports have no icon link)
        return Response(status_code=204)

    @app.get("/ui", include_in_schema=False)
    def ui_root() -> RedirectResponse:
        return RedirectResponse("/ui/", status_code=307)
