"""The console's routes (``/ui/``): thin, like the API routers. Each page resolves who asks
(``session.identify``), asks the plain-Python views (``drive_view``, ``recall_view``, ``runs_view``, the fault
set) and renders a Jinja2 template. Errors render the API's own status, code and message
(``api.boundary.error_parts``), so a document the principal may not preview answers exactly like a missing one.

Pages: ``/ui/`` (who you are), ``/ui/drive`` and ``/ui/doc/{id}`` (the drive as the principal), ``/ui/recall``
(the playground), ``/ui/runs`` (history: reports, trend, comparison; service tokens), ``/ui/faults`` (admin).
``?as=<user_id>`` (a service token's "view as") and ``?as_of=<ISO 8601>`` are carried on every link.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from drivebench import __version__
from drivebench.drive.errors import InvalidRequest
from drivebench.drive.permissions.engine import Principal
from drivebench.formats.corpus import SECRET_LEVELS
from drivebench.resources import package_dir
from drivebench.server.api import faults as faults_api
from drivebench.server.api.boundary import error_parts
from drivebench.server.api.request import NotAdmin
from drivebench.server.api.schemas import RecallRequest
from drivebench.server.console import recall_view, runs_view
from drivebench.server.console.session import COOKIE, Identity, check_csrf, check_origin, identify, sessions
from drivebench.simulator import drive_view
from drivebench.simulator.faults import FaultSpecError, parse_fault_spec

HERE = package_dir("drivebench.server.console")
templates = Jinja2Templates(directory=str(HERE / "templates"))
templates.env.globals["version"] = __version__
router = APIRouter(prefix="/ui", include_in_schema=False)
CSP = (
    "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


class SignIn(Exception):
    """No identity on a page request: the browser goes to the sign-in form."""


class Page:
    """One console request: who asks, as whom, as of when; builds links that keep ``as`` and ``as_of``."""

    def __init__(self, request: Request, identity: Identity) -> None:
        self.request, self.identity = request, identity
        self.sim = request.app.state.sim
        token = identity.token
        self.can_view_as = token.user_id is None and token.has("evaluate-as")
        self.is_admin = token.has("admin")
        wanted = (request.query_params.get("as") or "").strip() or None
        self.view_as = wanted if self.can_view_as or (wanted is not None and wanted != token.user_id) else None
        self.as_of_text = (request.query_params.get("as_of") or "").strip()
        self.as_of = parse_as_of(self.as_of_text)
        self.moment = drive_view.instant(self.sim, self.as_of)
        self.principal: Principal | None = None
        if token.user_id is not None or self.view_as is not None:
            self.principal = self.sim.principal_for(token, user_id=self.view_as)

    def url(self, path: str, **params: Any) -> str:
        merged = {"as": self.view_as, "as_of": self.as_of_text or None, **params}
        query = urlencode({k: v for k, v in merged.items() if v not in (None, "")})
        return f"/ui{path}" + (f"?{query}" if query else "")

    @property
    def users(self) -> list[Any]:
        return sorted(self.sim.drive.users.values(), key=lambda u: u.user_id) if self.can_view_as else []

    @property
    def who(self) -> str:
        token = self.identity.token
        return token.user_id or token.subject

    @property
    def csrf(self) -> str:
        return self.identity.session.csrf if self.identity.session is not None else ""

    def render(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        p = self.principal
        clearance = SECRET_LEVELS[p.clearance] if p is not None else None
        ctx = {"page": self, "clock": self.moment.now, "at": self.moment.at, "clearance": clearance, **context}
        return html(self.request, template, ctx, status)


def html(request: Request, template: str, context: dict[str, Any], status: int = 200) -> HTMLResponse:
    response = templates.TemplateResponse(request, template, context, status_code=status)
    response.headers.update(SECURITY_HEADERS)
    return response


def parse_as_of(text: str) -> datetime | None:
    """``as_of`` from a query string: ISO 8601 (a datetime-local value has no zone: UTC). Bad: 400."""
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidRequest(f"as_of: not an ISO 8601 date and time: {text[:64]!r}") from None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def error_page(request: Request, exc: BaseException) -> Response:
    if isinstance(exc, SignIn):
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/ui/signin?{urlencode({'next': target})}", status_code=303)
    status, code, message, _, headers = error_parts(exc)
    identity = None
    with contextlib.suppress(Exception):  # an invalid bearer header: the page shows no identity
        identity = identify(request)
    response = html(
        request, "error.html", {"status": status, "code": code, "message": message, "who": identity}, status
    )
    response.headers.update(headers)
    return response


def console_page(fn: Callable[..., Response]) -> Callable[..., Response]:
    """Every route: errors become the error page (the API's status and message), no identity a sign-in."""

    @functools.wraps(fn)
    def wrapper(request: Request, *args: Any, **kwargs: Any) -> Response:
        try:
            return fn(request, *args, **kwargs)
        except Exception as exc:
            return error_page(request, exc)

    return wrapper


def page_for(request: Request) -> Page:
    identity = identify(request)
    if identity is None:
        raise SignIn()
    return Page(request, identity)


# ---------------------------------------------------------------------------- sign in / out
@router.get("/signin")
@console_page
def signin_form(request: Request, next: str = "/ui/") -> Response:
    return html(request, "signin.html", {"next": _safe_next(next), "error": None, "page": None})


def _safe_next(target: str) -> str:
    """Only a path inside the console (never another origin, never ``//host``)."""
    return target if target.startswith("/ui/") and not target.startswith("//") and "\\" not in target else "/ui/"


@router.post("/signin")
@console_page
def signin(request: Request, token: str = Form(..., max_length=200), next: str = Form("/ui/")) -> Response:
    check_origin(request)
    store = sessions(request)
    info = request.app.state.sim.tokens.resolve(token.strip())
    address = request.client.host if request.client is not None else "unknown"
    wait = store.signin_wait(address, info.token if info is not None else None)
    if wait is not None:  # too many attempts from this address, or with this token
        retry = max(1, math.ceil(wait))
        ctx = {"next": _safe_next(next), "error": f"Too many sign-in attempts: try again in {retry} s.", "page": None}
        response = html(request, "signin.html", ctx, 429)
        response.headers["Retry-After"] = str(retry)
        return response
    if info is None:
        ctx = {"next": _safe_next(next), "error": "That token is not valid on this server.", "page": None}
        return html(request, "signin.html", ctx, 401)
    sid, _ = store.create(info.token)
    redirect = RedirectResponse(_safe_next(next), status_code=303)
    # https directly or through a proxy the server trusts (uvicorn's proxy headers: serve --forwarded-allow-ips)
    secure = request.url.scheme == "https"
    max_age = int(store.settings.lifetime_s)  # the browser forgets it when the server would refuse it anyway
    redirect.set_cookie(COOKIE, sid, max_age=max_age, httponly=True, samesite="strict", path="/ui", secure=secure)
    return redirect


@router.post("/signout")
@console_page
def signout(request: Request, csrf: str = Form("")) -> Response:
    identity = identify(request)
    if identity is not None:
        check_csrf(request, identity, csrf)
        sid = request.cookies.get(COOKIE)
        if sid:
            sessions(request).drop(sid)
    response = RedirectResponse("/ui/signin", status_code=303)
    response.delete_cookie(COOKIE, path="/ui")
    return response


# ---------------------------------------------------------------------------- pages
@router.get("/")
@console_page
def home(request: Request) -> Response:
    page = page_for(request)
    user = page.sim.drive.users.get(page.principal.user_id) if page.principal and page.principal.user_id else None
    return page.render("home.html", user=user)


@router.get("/drive")
@console_page
def drive(request: Request, folder: str = "/") -> Response:
    page = page_for(request)
    if page.principal is None:
        return page.render("drive.html", view=None)
    folder = "/" + "/".join(p for p in folder.split("/") if p)
    view = drive_view.drive_view(page.sim, page.principal, folder, page.moment)
    return page.render("drive.html", view=view)


@router.get("/doc/{doc_id}")
@console_page
def document(request: Request, doc_id: str, version: str | None = None) -> Response:
    page = page_for(request)
    if page.principal is None:
        return page.render("drive.html", view=None)
    view = drive_view.document_view(page.sim, page.principal, doc_id, page.moment, version or None)
    return page.render("document.html", doc=view)


@router.get("/recall")
@console_page
def recall(request: Request, q: str = "", top_k: str = "10", pipeline: str = "") -> Response:
    page = page_for(request)
    pipeline = pipeline or page.sim.config.pipeline
    form = {"q": q, "top_k": top_k, "pipeline": pipeline, "pipelines": recall_view.PIPELINES}
    if not q or page.principal is None:
        return page.render("recall.html", form=form, result=None, error=None)
    try:
        if pipeline not in recall_view.PIPELINES:
            raise InvalidRequest(f"pipeline: one of {', '.join(recall_view.PIPELINES)}")
        req = RecallRequest.model_validate({"query": q, "top_k": _int(top_k, "top_k"), "as_of": page.as_of})
        explain = page.is_admin and page.view_as is not None
        result = recall_view.playground(page.sim, page.principal, req, pipeline, explain=explain)
    except Exception as exc:
        status, code, message, _, _ = error_parts(exc)
        return page.render("recall.html", status, form=form, result=None, error=f"{status} {code}: {message}")
    return page.render("recall.html", form=form, result=result, error=None)


def _int(text: str, name: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InvalidRequest(f"{name}: a whole number") from None


# ---------------------------------------------------------------------------- runs (service tokens)
def _runs_page(request: Request) -> tuple[Page, Any, Path]:
    page = page_for(request)
    if not page.identity.token.has("evaluate-as"):
        raise NotAdmin(
            "the run history needs the admin or the evaluation token (runs name every principal's documents)"
        )
    path = runs_view.history_path(getattr(request.app.state, "ui_history", None))
    return page, runs_view.open_store(path), path


@router.get("/runs")
@console_page
def runs(request: Request) -> Response:
    page, store, path = _runs_page(request)
    rows = runs_view.run_rows(store) if store is not None else []
    metrics = store.metric_names() if store is not None else []
    return page.render("runs.html", rows=rows, metrics=metrics, path=path, headline=runs_view.HEADLINE)


@router.get("/runs/trend")
@console_page
def runs_trend(request: Request, metric: str = runs_view.HEADLINE, include_failed: bool = False) -> Response:
    page, store, path = _runs_page(request)
    if store is None:
        raise InvalidRequest(f"no run history at {path}")
    shown = runs_view.trend(store, metric, include_failed)
    return page.render("trend.html", trend=shown, metrics=store.metric_names(), path=path)


@router.get("/runs/compare")
@console_page
def runs_compare(request: Request, a: str = "latest", b: str = "latest~1") -> Response:
    page, store, path = _runs_page(request)
    if store is None:
        raise InvalidRequest(f"no run history at {path}")
    ida, idb, queries, rows = runs_view.comparison(store, a, b)
    return page.render("compare.html", a=ida, b=idb, queries=queries, rows=rows)


@router.get("/runs/{ref}/report")
@console_page
def run_report(request: Request, ref: str) -> Response:
    _, store, path = _runs_page(request)
    if store is None:
        raise InvalidRequest(f"no run history at {path}")
    return HTMLResponse(runs_view.report_html(store, ref), headers=SECURITY_HEADERS)


# ---------------------------------------------------------------------------- faults (admin)
def _faults_page(request: Request) -> Page:
    page = page_for(request)
    if not page.is_admin:
        raise NotAdmin("fault control needs the admin token")
    return page


@router.get("/faults")
@console_page
def faults(request: Request) -> Response:
    page = _faults_page(request)
    return page.render("faults.html", state=page.sim.faults.describe(), error=None)


@router.post("/faults")
@console_page
def switch_faults(
    request: Request,
    csrf: str = Form(""),
    action: str = Form(..., max_length=16),
    name: str = Form("", max_length=64),
    params: str = Form("", max_length=500),
) -> Response:
    page = _faults_page(request)
    check_csrf(request, page.identity, csrf)
    current = {f.name: f for f in page.sim.faults.active}
    try:
        if action == "enable":
            spec = params.strip().replace(",", ":")
            fault = parse_fault_spec(f"{name}:{spec}" if spec else name)
            current[fault.name] = fault
        elif action == "disable":
            current.pop(name, None)
        elif action == "clear":
            current = {}
        else:
            raise InvalidRequest("action: enable, disable or clear")
    except FaultSpecError as exc:
        raise InvalidRequest(str(exc)) from None
    faults_api._check_bounds(list(current.values()))
    page.sim.faults.replace(list(current.values()))
    return RedirectResponse(page.url("/faults"), status_code=303)
