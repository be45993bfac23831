"""The control plane, ``/_sim`` (admin token only: 401 without a token, 403 with another one).

Like moto's ``/moto-api/reset`` and LocalStack's ``/_localstack/state/reset``: test harnesses drive
the simulator's state and clock from outside. The same operations exist on ``Simulator`` (``reset``,
``seed``, ``set_clock``, ``advance_clock``, ``stats``; ``tokens.mint``) for the in-process pytest fixture.
Fault profiles (``/_sim/faults``) live in their own router.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import BaseModel, ConfigDict, Field, model_validator

from drivebench.drive.clock import as_utc
from drivebench.drive.errors import InvalidRequest, NotFound
from drivebench.drive.tokens import TokenInfo
from drivebench.server.api.request import NotAdmin, bearer, current_token
from drivebench.server.api.schemas import BoundedDatetime, ErrorResponse, Number
from drivebench.simulator.backend import Simulator
from drivebench.simulator.persistence import lifecycle

router = APIRouter(prefix="/_sim", tags=["control"])
MAX_ADVANCE_DAYS = 36_500  # one step of at most a century (the clock itself stays below MAX_TIME)

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorResponse, "description": "Missing or invalid bearer token."},
    403: {"model": ErrorResponse, "description": "Not the admin token."},
}


def admin(request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> TokenInfo:
    token = current_token(request, credentials)
    if not token.has("admin"):
        raise NotAdmin("the control plane needs the admin token")
    return token


class SeedIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    corpus: str = Field(
        min_length=1,
        max_length=4096,
        description="A built-in corpus name (seed, acme-zh, acme-en) or a corpus directory.",
    )


class ClockIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    now: BoundedDatetime = Field(description="The new simulated time (ISO 8601); not before the latest change.")


class AdvanceIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    days: Number = Field(default=0, ge=0, le=MAX_ADVANCE_DAYS, allow_inf_nan=False)
    hours: Number = Field(default=0, ge=0, le=MAX_ADVANCE_DAYS * 24, allow_inf_nan=False)
    minutes: Number = Field(default=0, ge=0, le=MAX_ADVANCE_DAYS * 24 * 60, allow_inf_nan=False)
    seconds: Number = Field(default=0, ge=0, le=MAX_ADVANCE_DAYS * 24 * 3600, allow_inf_nan=False)

    @model_validator(mode="after")
    def _non_negative(self) -> AdvanceIn:
        if min(self.days, self.hours, self.minutes, self.seconds) < 0:
            raise ValueError("the clock only moves forward: give non-negative amounts")
        return self

    @property
    def delta(self) -> timedelta:
        return timedelta(days=self.days, hours=self.hours, minutes=self.minutes, seconds=self.seconds)


MAX_TTL_S = 36_500 * 86_400  # a century of simulated time


class MintIn(BaseModel):
    # exactly one of expires_at and ttl_seconds, stated in the schema (neither is nullable: null would be absent)
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"oneOf": [{"required": ["expires_at"]}, {"required": ["ttl_seconds"]}]}
    )
    subject: str = Field(min_length=1, max_length=128, description="The user the token acts as (a user_id).")
    expires_at: BoundedDatetime = Field(  # type: ignore[assignment]  # left out: None; not nullable in the schema
        default=None,
        description="When the token stops resolving, on the drive's clock (ISO 8601; without an offset: UTC); may "
        "be in the past: the token is then refused from the start.",
    )
    ttl_seconds: Number = Field(  # type: ignore[assignment]  # left out: None; not nullable in the schema
        default=None, ge=0, le=MAX_TTL_S, allow_inf_nan=False, description="Or: seconds from the drive's clock now."
    )

    @model_validator(mode="after")
    def _one_expiry(self) -> MintIn:
        if (self.expires_at is None) == (self.ttl_seconds is None):
            raise ValueError("give exactly one of expires_at or ttl_seconds")
        return self


class MintOut(BaseModel):
    token: str
    subject: str
    scopes: list[str]
    expires_at: datetime
    expired: bool = Field(description="The drive's clock has already reached expires_at: the token resolves to 401.")


class ClockOut(BaseModel):
    now: datetime
    deleted_versions: int = 0
    purged_documents: int = 0


def _sim(request: Request) -> Simulator:
    return request.app.state.sim


@router.post("/reset", responses=_ERRORS, summary="Back to the loaded corpus state (documents, grants, clock, feed)")
async def reset(request: Request, _: TokenInfo = Depends(admin)) -> dict[str, Any]:
    return await run_in_threadpool(_sim(request).reset)


@router.post("/seed", responses=_ERRORS, summary="Load another corpus (by name or path); tokens follow its name")
async def seed(request: Request, body: SeedIn, _: TokenInfo = Depends(admin)) -> dict[str, Any]:
    sim = _sim(request)
    try:
        return await run_in_threadpool(sim.seed, body.corpus)
    except KeyError as exc:
        raise InvalidRequest(str(exc.args[0]) if exc.args else str(exc)) from None
    except (OSError, ValueError) as exc:  # a path the OS refuses (too long, NUL...), a corpus that is not one
        raise InvalidRequest(f"cannot load corpus {body.corpus[:200]!r}: {type(exc).__name__}") from None


@router.get("/clock", response_model=ClockOut, responses=_ERRORS, summary="The simulated time")
async def get_clock(request: Request, _: TokenInfo = Depends(admin)) -> ClockOut:
    return ClockOut(now=_sim(request).drive.clock.now())


@router.put("/clock", response_model=ClockOut, responses=_ERRORS, summary="Set the simulated time; retention runs")
async def put_clock(request: Request, body: ClockIn, token: TokenInfo = Depends(admin)) -> ClockOut:
    if body.now.tzinfo is None:
        raise InvalidRequest("give the time with a UTC offset, e.g. 2026-12-01T00:00:00+00:00")
    out = await run_in_threadpool(lifecycle.set_clock, _sim(request), body.now, token.subject)
    return ClockOut(**out)


@router.post("/clock/advance", response_model=ClockOut, responses=_ERRORS, summary="Move the simulated time forward")
async def advance_clock(request: Request, body: AdvanceIn, token: TokenInfo = Depends(admin)) -> ClockOut:
    out = await run_in_threadpool(lifecycle.advance_clock, _sim(request), body.delta, token.subject)
    return ClockOut(**out)


@router.post(
    "/tokens",
    status_code=201,
    response_model=MintOut,
    responses={**_ERRORS, 404: {"model": ErrorResponse, "description": "No such user (tokens are minted for users)."}},
    summary="Mint an expiring user token (a JWT judged against the drive's clock; may be minted already expired)",
)
async def mint_token(request: Request, body: MintIn, _: TokenInfo = Depends(admin)) -> MintOut:
    sim = _sim(request)
    now = sim.drive.clock.now()
    if body.expires_at is not None:
        expires_at = as_utc(body.expires_at)
    else:
        expires_at = now + timedelta(seconds=body.ttl_seconds or 0.0)
    try:
        info = sim.tokens.mint(body.subject, expires_at)
    except KeyError as exc:
        raise NotFound(str(exc.args[0])) from None
    assert info.expires_at is not None
    return MintOut(
        token=info.token,
        subject=info.subject,
        scopes=list(info.scopes),
        expires_at=info.expires_at,
        expired=sim.tokens.expiry_clock() >= info.expires_at,
    )


@router.get(
    "/stats",
    responses=_ERRORS,
    summary="Counts, index_version, policy_version, snapshot fingerprint, active faults (names, params, seeds)",
)
async def stats(request: Request, _: TokenInfo = Depends(admin)) -> dict[str, Any]:
    sim = _sim(request)
    out = await run_in_threadpool(sim.stats)
    return {**out, "faults": sim.faults.summary()}  # faults are part of a run's record


@router.post("/checkpoint", responses=_ERRORS, summary="Write the index snapshot now (with --data-dir)")
async def checkpoint(request: Request, _: TokenInfo = Depends(admin)) -> dict[str, Any]:
    sim = _sim(request)
    await run_in_threadpool(sim.checkpoint)
    return {"index_cursor": sim._index_cursor, "durable": sim.durable is not None}
