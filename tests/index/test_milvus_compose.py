"""The compose profile that runs the simulator against a standalone Milvus server: checked without a
container engine (none here or in CI), as tests/cli/test_container_files.py checks the default service."""

from __future__ import annotations

import yaml

from drivebench.search.index.vector_store import parse_index_spec
from tests.support.clirun import REPO, run


def test_the_milvus_profile_serves_the_simulator_against_the_server() -> None:
    compose = yaml.safe_load((REPO / "compose.yaml").read_text(encoding="utf-8"))
    server, sim = compose["services"]["milvus"], compose["services"]["drivebench-milvus"]
    assert server["profiles"] == ["milvus"] == sim["profiles"]  # `docker compose up` alone starts neither
    assert "milvus-data:/var/lib/milvus" in server["volumes"] and "milvus-data" in compose["volumes"]
    assert "19530:19530" in server["ports"][0] and "9091/healthz" in " ".join(server["healthcheck"]["test"])
    assert sim["depends_on"]["milvus"]["condition"] == "service_healthy"
    command = sim["command"]
    spec = parse_index_spec(command[command.index("--index") + 1])
    assert spec.kind == "milvus" and spec.uri == "http://milvus:19530" and spec.label == "milvus-server"
    assert command[command.index("--data-dir") + 1].startswith("/data/")
    help_text = run("serve", "--help").stdout
    for option in (a for a in command if a.startswith("--")):
        assert option in help_text, option
    assert sim["environment"]["DRIVEBENCH_TOKEN_SECRET"].startswith("${DRIVEBENCH_TOKEN_SECRET:?")


def test_index_comes_from_the_command_line_and_the_config_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert "--index" in run("serve", "--help").stdout
    bad = run("serve", "--corpus", "seed", "--embedder", "hash", "--index", "annoy")
    assert bad.returncode == 2 and "unknown index 'annoy'" in bad.stderr
    config = tmp_path / "drivebench.toml"
    config.write_text('[serve]\nindex = "faiss:x"\n', encoding="utf-8")
    from_file = run("--config", str(config), "serve", "--corpus", "seed")
    assert from_file.returncode == 2 and f"{config}:2" in from_file.stderr and "takes no URI" in from_file.stderr
