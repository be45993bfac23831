"""Expiring user tokens (``POST /_sim/tokens``): a JWT the simulator signs, judged against the drive's clock. A
live one acts as its user; once the clock reaches ``exp`` (or when minted already expired) it is a 401 like
any invalid token, on recall and the drive API; an altered one (``exp`` pushed forward, the
signature kept) or one for a user that does not exist never resolves."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta

import pytest

from drivebench.evaluator.probe.failsafe_cases import expired_jwt
from drivebench.simulator.backend import Simulator
from tests.support.sims import auth, client_for, hit_ids

QUERY = {"query": "Information Security Policy", "top_k": 5}


def _mint(client, sim: Simulator, **body) -> dict:  # type: ignore[no-untyped-def]
    r = client.post("/_sim/tokens", json=body, headers=auth(sim, "admin"))
    assert r.status_code == 201, r.text
    return r.json()


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_live_token_acts_as_its_user_until_the_drives_clock_reaches_exp(fresh_sim: Simulator) -> None:
    client = client_for(fresh_sim)
    minted = _mint(client, fresh_sim, subject="u001", ttl_seconds=60)
    assert minted["subject"] == "u001" and minted["scopes"] == ["recall"] and minted["expired"] is False
    assert datetime.fromisoformat(minted["expires_at"]) == fresh_sim.drive.clock.now() + timedelta(seconds=60)
    token = minted["token"]
    live = client.post("/api/mcp/recall", json=QUERY, headers=_bearer(token))
    assert live.status_code == 200 and "d0003" in hit_ids(live.json())
    own = client.post("/api/mcp/recall", json=QUERY, headers=auth(fresh_sim, "u001")).json()
    assert hit_ids(live.json()) == hit_ids(own)  # exactly the user's own view
    assert client.get("/api/v1/files/d0003", headers=_bearer(token)).status_code == 200
    assert client.get("/_sim/stats", headers=_bearer(token)).status_code == 403  # a user's scope, nothing more
    fresh_sim.advance_clock(timedelta(seconds=59))
    assert client.post("/api/mcp/recall", json=QUERY, headers=_bearer(token)).status_code == 200
    fresh_sim.advance_clock(timedelta(seconds=1))  # the clock reaches exp
    for r in (
        client.post("/api/mcp/recall", json=QUERY, headers=_bearer(token)),
        client.get("/api/v1/files/d0003", headers=_bearer(token)),
    ):
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized", r.text


def test_a_token_minted_already_expired_is_refused_from_the_start(fresh_sim: Simulator) -> None:
    client = client_for(fresh_sim)
    past = (fresh_sim.drive.clock.now() - timedelta(hours=1)).isoformat()
    minted = _mint(client, fresh_sim, subject="u001", expires_at=past)
    assert minted["expired"] is True
    r = client.post("/api/mcp/recall", json=QUERY, headers=_bearer(minted["token"]))
    assert r.status_code == 401 and "results" not in r.json()
    assert fresh_sim.tokens.resolve(minted["token"]) is None
    # the same token with exp a day ahead and its own signature: an attacker cannot re-sign
    pushed = expired_jwt(minted["token"], datetime(2100, 1, 1, tzinfo=UTC))
    assert pushed is not None and pushed != minted["token"]
    payload = json.loads(base64.urlsafe_b64decode(pushed.split(".")[1] + "=="))
    assert payload["exp"] > fresh_sim.drive.clock.now().timestamp()
    assert client.post("/api/mcp/recall", json=QUERY, headers=_bearer(pushed)).status_code == 401


def test_minted_tokens_are_bound_to_the_secret_and_the_corpus(fresh_sim: Simulator) -> None:
    token = fresh_sim.tokens.mint("u001", fresh_sim.drive.clock.now() + timedelta(hours=1)).token
    assert fresh_sim.tokens.resolve(token) is not None
    fresh_sim.use_token_secret(b"another secret of at least thirty-two characters")
    assert fresh_sim.tokens.resolve(token) is None  # signed with a key of the old secret


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"subject": "u999", "ttl_seconds": 60}, 404),  # no such user
        ({"subject": "svc:admin", "ttl_seconds": 60}, 404),  # user tokens only: never a service scope
        ({"subject": "u001"}, (400, 422)),  # no expiry
        ({"subject": "u001", "ttl_seconds": 60, "expires_at": "2027-01-01T00:00:00+00:00"}, (400, 422)),
        ({"subject": "u001", "ttl_seconds": -1}, (400, 422)),
        ({"subject": "u001", "ttl_seconds": 1e300}, (400, 422)),
        ({"subject": "u001", "expires_at": "2027-01-01"}, 422),  # a date without a time
        ({"subject": "u001", "expires_at": "9999-12-31T00:00:00+00:00"}, (400, 422)),
        ({"subject": "", "ttl_seconds": 1}, (400, 422)),
    ],
)
def test_bad_mint_requests_are_4xx_and_change_nothing(fresh_sim: Simulator, body: dict, status: object) -> None:
    client = client_for(fresh_sim)
    before = client.get("/_sim/stats", headers=auth(fresh_sim, "admin")).json()
    r = client.post("/_sim/tokens", json=body, headers=auth(fresh_sim, "admin"))
    assert r.status_code in (status if isinstance(status, tuple) else (status,)), r.text
    assert "token" not in r.json()
    after = client.get("/_sim/stats", headers=auth(fresh_sim, "admin")).json()
    assert (after["snapshot"], after["clock"], after["changes"]) == (before["snapshot"], before["clock"], 0)


@pytest.mark.parametrize(
    "junk",
    ["a.b.c", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1MDAxIn0.", "x" * 5000 + ".y.z", "..", "é.é.é"],
)
def test_junk_in_the_shape_of_a_jwt_is_a_401(fresh_sim: Simulator, junk: str) -> None:
    assert fresh_sim.tokens.resolve(junk) is None
    header = {"Authorization": f"Bearer {junk}".encode()}  # bytes: a header may carry any octets
    r = client_for(fresh_sim).post("/api/mcp/recall", json=QUERY, headers=header)  # type: ignore[arg-type]
    assert r.status_code == 401


def test_a_reset_or_a_clock_moved_back_never_revives_an_expired_token(fresh_sim: Simulator) -> None:
    client = client_for(fresh_sim)
    token = _mint(client, fresh_sim, subject="u001", ttl_seconds=60)["token"]
    fresh_sim.advance_clock(timedelta(hours=2))
    assert client.post("/api/mcp/recall", json=QUERY, headers=_bearer(token)).status_code == 401
    # moving the clock back (no change happened since) does not make it live again
    fresh_sim.set_clock(fresh_sim.drive.clock.now() - timedelta(hours=2))
    assert fresh_sim.tokens.resolve(token) is None
    # a reset returns the clock to the corpus's time, before exp: the token belongs to the replaced history
    reset = client.post("/_sim/reset", headers=auth(fresh_sim, "admin"))
    assert reset.status_code == 200, reset.text
    assert fresh_sim.drive.clock.now().timestamp() < float(str(_claims(token)["exp"]))
    for r in (
        client.post("/api/mcp/recall", json=QUERY, headers=_bearer(token)),
        client.get("/api/v1/files/d0003", headers=_bearer(token)),
    ):
        assert r.status_code == 401, r.text
    # a token minted after the reset lives in the new history
    fresh = _mint(client, fresh_sim, subject="u001", ttl_seconds=60)
    assert fresh["expired"] is False
    assert client.post("/api/mcp/recall", json=QUERY, headers=_bearer(fresh["token"])).status_code == 200


def _claims(token: str) -> dict[str, object]:
    return dict(json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "==")))
