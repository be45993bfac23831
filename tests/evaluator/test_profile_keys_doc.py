"""docs/evaluating.md documents every target-profile key, with the table generated from the profile's models
(``evaluator.targets.profile_keys``): the page holds exactly what the code generates, so a key added, renamed
or redescribed without regenerating the page fails here."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from drivebench.evaluator.targets.profile import TargetProfile, load_profile
from drivebench.evaluator.targets.profile_keys import BEGIN, END, key_rows, key_table, main, rewrite

PAGE = Path(__file__).resolve().parents[2] / "docs" / "evaluating.md"
REGENERATE = "python -m drivebench.evaluator.targets.profile_keys docs/evaluating.md"


def test_the_page_holds_the_generated_table() -> None:
    text = PAGE.read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    assert text[start:end] == key_table(), f"docs/evaluating.md's profile keys are stale: run `{REGENERATE}`"


def test_every_key_the_profile_accepts_is_a_row_with_its_default() -> None:
    rows = {key.strip("`"): (default, text) for key, default, text in key_rows()}
    accepted = {
        f"[{table}] {name}" if name != "body" else "[request.body]"
        for table, section in TargetProfile.model_fields.items()
        if table != "source"
        for name in section.annotation.model_fields  # type: ignore[union-attr]
    }
    assert accepted | {"[response] ok_when.path", "[response] ok_when.equals"} == set(rows)
    # the two keys --answers needs, which only a docstring named
    assert rows["[request] answer_url"][0] == "none" and "--answers" in rows["[request] answer_url"][1]
    assert "/api/mcp/answer on the recall URL's host" in rows["[request] answer_url"][1].replace("`", "")
    assert rows["[response] answer"][0] == '`"answer"`' and "Source Recall Coverage" in rows["[response] answer"][1]
    assert rows["[request] timeout_s"][0] == "`30.0`" and rows["[auth] scheme"][0] == '`"Bearer"`'


def test_a_profile_using_every_documented_key_loads(tmp_path: Path) -> None:
    """The keys are the ones a profile file takes: one written with each row's key (a token source at a time)."""
    profile = tmp_path / "every-key.toml"
    profile.write_text(
        """
[request]
url = "http://127.0.0.1:9000/v1/search"
method = "GET"
headers = { "X-Tenant" = "acme" }
timeout_s = 5
concurrency = 2
answer_url = "http://127.0.0.1:9000/v1/answer"
[request.body]
q = "${query}"
[auth]
token_env = "VENDOR_KEY"
header = "X-Api-Key"
scheme = ""
[response]
results = "data.items"
doc_id = "fileId"
version_id = "versionId"
version = "versionNo"
score = "score"
rank = "rank"
text = "content"
name = "fileName"
answer = "data.answer"
ok_when = { path = "code", equals = 0 }
message = "msg"
[ids]
match = "path"
""",
        encoding="utf-8",
    )
    data = tomllib.loads(profile.read_text(encoding="utf-8"))
    written = {f"[{t}] {k}" for t, keys in data.items() for k in keys if k != "body"} | {"[request.body]"}
    written |= {f"[response] ok_when.{k}" for k in data["response"]["ok_when"]}
    documented = {key.strip("`") for key, _, _ in key_rows()}
    assert written | {"[auth] token", "[auth] tokens_file"} == documented
    loaded = load_profile(profile)
    assert loaded.request.answer_url == "http://127.0.0.1:9000/v1/answer" and loaded.response.answer == "data.answer"


def test_regenerating_restores_a_stale_table_and_refuses_a_page_without_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "evaluating.md"
    stale = re.sub(r"\| `\[request\] answer_url` \|[^\n]*\n", "", PAGE.read_text(encoding="utf-8"))
    page.write_text(stale, encoding="utf-8")
    assert main([str(page)]) == 0
    assert page.read_text(encoding="utf-8") == PAGE.read_text(encoding="utf-8")
    assert rewrite(page) is False  # already current: the file is left alone
    page.write_text("# no table here\n", encoding="utf-8")
    assert main([str(page)]) == 2
    assert "no generated profile-key table" in capsys.readouterr().err
