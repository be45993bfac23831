"""``drivebench milvus-server`` (the launcher) and the ownership of collections on a shared Milvus server: an
in-memory simulator drops its collection when it closes, and ``drivebench milvus gc`` drops only orphans."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
import typer

from drivebench.cli import serve
from drivebench.search.index import milvus_store
from drivebench.search.index.chunk_store import ChunkStore
from drivebench.search.index.milvus_store import MilvusVectors, client_for, collect_garbage, owner_record
from drivebench.search.index.vector_store import IndexSpec
from drivebench.server import milvus_server
from drivebench.server.milvus_server import MilvusServerError, free_base, ports_for, start_binary
from drivebench.server.process import free_port
from tests.support.milvus import server_uri

pytestmark = pytest.mark.milvus_server


def test_a_busy_port_is_an_error_that_names_it_never_a_silent_move() -> None:
    base = free_base()
    busy = ports_for(base)["query_coord_port"]
    with socket.socket() as s:
        s.bind(("0.0.0.0", busy))
        s.listen()
        started = time.monotonic()
        with pytest.raises(MilvusServerError, match=rf"port {busy} \(query coord\) is in use"):
            start_binary(None, base)
    assert time.monotonic() - started < 5


def test_a_child_that_dies_at_start_is_an_error_within_seconds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "milvus"
    fake.write_text("#!/bin/sh\necho 'panic: the binary could not start'\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setattr(milvus_server, "_write_config", lambda root, ports: (fake, dict(os.environ)))
    (tmp_path / "data" / "logs").mkdir(parents=True)
    started = time.monotonic()
    with pytest.raises(MilvusServerError, match=r"exited with code 3 while starting(.|\n)*panic: the binary"):
        start_binary(tmp_path / "data", free_base())
    assert time.monotonic() - started < 5
    assert (tmp_path / "data").exists()  # a directory it was given is kept


def test_a_missing_package_is_an_error_with_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "milvus", None)  # import milvus raises ImportError
    with pytest.raises(MilvusServerError, match="the Milvus server package is not installed") as err:
        start_binary(None, free_base())
    assert err.value.hint is not None and "drivebench[milvus-server]" in err.value.hint


def test_workers_with_a_milvus_server_are_refused_with_the_reason() -> None:
    for index, data_dir, reason in (
        ("milvus:http://127.0.0.1:9", None, "follow a data directory's writer"),
        ("milvus", None, "milvus-lite keeps one file per process"),
        ("faiss", Path("/nonexistent"), "read replicas of a data directory need --index milvus:URI"),
    ):
        with pytest.raises(typer.BadParameter, match=reason) as err:
            serve._serve_replicas("seed", "127.0.0.1", free_port(), "dense", "hash", [], index, [], data_dir, 2)
        assert ("milvus-lite" in str(err.value)) is (index == "milvus")


def _tiny_store(n: int = 40) -> ChunkStore:
    rng = np.random.default_rng(0)
    xb = rng.standard_normal((n, 8), dtype=np.float32)
    store = ChunkStore(8, index_mode="flat")
    store.index.add_with_ids(xb, np.arange(n, dtype=np.int64))
    store.texts, store.parts = [""] * n, [""] * n
    store.doc_ids = [f"doc{i}" for i in range(n)]
    store.version_ids = [f"doc{i}-v1" for i in range(n)]
    store.ordinals = [0] * n
    store.alive = np.ones(n, dtype=bool)
    store.by_version = {f"doc{i}-v1": [i] for i in range(n)}
    return store


def test_an_in_memory_collection_records_its_owner_and_is_dropped_on_release() -> None:
    uri = server_uri()
    store = _tiny_store()
    vec = MilvusVectors.open(store, IndexSpec("milvus", uri), None, reconcile=False)
    vec.sync_always_valid()
    name = vec.collection
    client = client_for(uri)
    assert name is not None and client.has_collection(name)
    owner = json.loads(client.describe_collection(name)["description"])
    assert owner["pid"] == os.getpid() and owner["data_dir"] is None
    assert vec in milvus_store._in_memory  # dropped at exit if nobody released it
    assert collect_garbage(uri, dry_run=True)  # listed...
    assert not next(v for v in collect_garbage(uri) if v["collection"] == name)["orphan"]  # ...kept: owner alive
    vec.release()
    assert not client.has_collection(name) and vec not in milvus_store._in_memory


def _collection(uri: str, owner: dict[str, object] | None) -> str:
    from pymilvus import DataType, MilvusClient

    name = f"drivebench_gctest_{uuid.uuid4().hex[:10]}"
    schema = MilvusClient.create_schema(auto_id=False, description=json.dumps(owner) if owner else "")
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=4)
    client_for(uri).create_collection(name, schema=schema)
    return name


def test_gc_drops_orphans_only(tmp_path: Path) -> None:
    uri = server_uri()
    client = client_for(uri)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    me = owner_record(None)
    gone = {**me, "pid": dead.pid, "pid_start": 1}  # a process of this machine that is gone
    data = tmp_path / "data"
    (data / "milvus").mkdir(parents=True)
    names = {
        "dead in-memory": _collection(uri, gone),
        "live in-memory": _collection(uri, me),
        "other machine": _collection(uri, {**gone, "machine": "elsewhere/boot"}),
        "no owner": _collection(uri, None),
        "dead, data dir names another": _collection(uri, {**gone, "data_dir": str(data)}),
        "dead, data dir gone": _collection(uri, {**gone, "data_dir": str(tmp_path / "missing")}),
    }
    current = _collection(uri, {**gone, "data_dir": str(data)})
    (data / "milvus" / "COLLECTION").write_text(current)
    names["dead, data dir names it"] = current
    other = f"not_drivebench_{uuid.uuid4().hex[:8]}"
    client.create_collection(other, dimension=4)
    try:
        dry = {v["collection"]: v["orphan"] for v in collect_garbage(uri, dry_run=True)}
        assert all(client.has_collection(n) for n in names.values())  # a dry run drops nothing
        verdicts = {v["collection"]: v for v in collect_garbage(uri)}
        orphans = {"dead in-memory", "dead, data dir names another", "dead, data dir gone"}
        for what, name in names.items():
            assert verdicts[name]["orphan"] is (what in orphans) is dry[name], (what, verdicts[name])
            assert client.has_collection(name) is (what not in orphans), what
        assert other not in verdicts and client.has_collection(other)
    finally:
        for name in [*names.values(), other]:
            if client.has_collection(name):
                client.drop_collection(name)


def _refused(call: object) -> str:
    """The errors a call raises, its causes included (it must raise): pymilvus says "Fail connecting", the
    gRPC error under it says why."""
    from pymilvus.exceptions import MilvusException

    try:
        call()  # type: ignore[operator]
    except MilvusException as exc:
        chain: list[str] = []
        cause: BaseException | None = exc
        while cause is not None and len(chain) < 10:
            chain.append(str(cause))
            cause = cause.__cause__ or cause.__context__
        return "\n".join(chain)
    raise AssertionError("the call was answered")


def test_the_server_refuses_a_client_without_the_credential_and_keeps_it_in_a_0600_file() -> None:
    from pymilvus import MilvusClient

    uri = server_uri()

    def anonymous() -> object:
        return MilvusClient(uri, timeout=5).list_collections(timeout=5)

    def default_root() -> object:
        return MilvusClient(uri, token="root:Milvus", timeout=5).list_collections(timeout=5)

    for call in (anonymous, default_root):  # nothing listed, so nothing read or written either
        assert re.search(r"UNAUTHENTICATED|auth", _refused(call)), call.__name__
    assert isinstance(client_for(uri).list_collections(), list)  # drivebench's client has the credential
    token_file = Path(os.environ[milvus_store.TOKEN_FILE_ENV])
    assert token_file.stat().st_mode & 0o777 == 0o600
    user, _, password = token_file.read_text().strip().partition(":")
    assert user == "root" and len(password) >= 24 and password != "Milvus"


def test_the_server_listens_on_the_loopback_only() -> None:
    port = int(server_uri().rsplit(":", 1)[1])
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: it picks the address of the default route
        outside = probe.getsockname()[0]
    assert not outside.startswith("127."), outside
    for p in (port, *ports_for(19530).values()):  # the relay, and Milvus's own nine ports (inside its namespace)
        with socket.socket() as s, pytest.raises(ConnectionRefusedError):
            s.settimeout(2)
            s.connect((outside, p))
