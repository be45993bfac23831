"""Errors for humans: every CLI input error is one `error:` line (with file:line where there is one) plus a
`hint:` line on stderr, exit code 2, and no traceback unless --debug."""

from __future__ import annotations

import json
import socket
import stat
from pathlib import Path

import pytest

from drivebench.errors import DrivebenchError, describe
from tests.support.clirun import clean_env, run


def error_lines(stderr: str) -> tuple[str, str]:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 2, stderr
    assert lines[0].startswith("error: ") and lines[1].startswith("hint: "), stderr
    assert "Traceback" not in stderr
    return lines[0], lines[1]


def test_unknown_corpus_is_one_line_and_exit_2() -> None:
    done = run("serve", "--corpus", "no-such-corpus", "--port", "0")
    assert done.returncode == 2
    first, hint = error_lines(done.stderr)
    assert first == "error: unknown corpus 'no-such-corpus'"
    assert "seed, acme-zh, acme-en" in hint and "corpus directory" in hint


def test_unknown_corpus_with_debug_shows_the_traceback() -> None:
    done = run("serve", "--corpus", "no-such-corpus", "--port", "0", "--debug")
    assert done.returncode not in (0, 2)
    assert "Traceback" in done.stderr and "DrivebenchError" in done.stderr


def test_port_in_use_is_reported_before_loading_anything() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run("serve", "--corpus", "seed", "--port", str(port), timeout=60)
    assert done.returncode == 2
    first, hint = error_lines(done.stderr)
    assert first == f"error: port {port} on 127.0.0.1 is already in use"
    assert "--port" in hint and "DRIVEBENCH_SERVE_PORT" in hint
    assert "loaded" not in done.stderr  # the corpus was never loaded


def test_missing_token_names_the_option_and_where_tokens_come_from(tmp_path: Path) -> None:
    evalset = tmp_path / "evalset.jsonl"
    evalset.write_text('{"query_id": "q1", "query": "x", "user_id": "u1", "gold": []}\n', encoding="utf-8")
    done = run("eval", "run", "--target", "http://127.0.0.1:9", "--evalset", str(evalset))
    assert done.returncode == 2
    first, hint = error_lines(done.stderr)
    assert "no token: give --token" in first
    assert "DRIVEBENCH_TOKEN" in hint and "drivebench tokens" in hint


def test_unreadable_files_say_which_and_why(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    evalset, config = folder / "evalset.jsonl", folder / "drivebench.toml"
    evalset.write_text('{"query_id": "q1", "query": "x", "user_id": "u1", "gold": []}\n', encoding="utf-8")
    config.write_text('corpus = "seed"\n', encoding="utf-8")
    for path in (evalset, config):
        path.chmod(0)
        assert not stat.S_IMODE(path.stat().st_mode)
    done = run("eval", "score", "--evalset", str(evalset), "--run", str(evalset), unprivileged=True)
    assert done.returncode == 2, done.stderr
    first, hint = error_lines(done.stderr)
    assert first == f"error: Invalid value for '--evalset': file '{evalset}' is not readable"
    assert "drivebench eval score --help" in hint
    done = run("--config", str(config), "info", unprivileged=True)
    assert done.returncode == 2, done.stderr
    first, hint = error_lines(done.stderr)
    assert first == f"error: {config}: cannot read the config file: Permission denied"
    assert "may read it" in hint


def test_bad_eval_set_line_names_file_and_line(tmp_path: Path) -> None:
    evalset = tmp_path / "evalset.jsonl"
    good = {"query_id": "q1", "query": "x", "user_id": "u1", "gold": [{"doc_id": "d1"}]}
    evalset.write_text(json.dumps(good) + "\n{not json\n", encoding="utf-8")
    done = run("eval", "score", "--evalset", str(evalset), "--run", str(evalset))
    assert done.returncode == 2
    first, hint = error_lines(done.stderr)
    assert first.startswith(f"error: {evalset}:2: ")
    assert "line 2" in hint or "Evaluation files" in hint


def test_usage_errors_keep_exit_2_and_get_a_hint() -> None:
    done = run("serve", "--prot", "1")
    assert done.returncode == 2
    first, hint = error_lines(done.stderr)
    assert "No such option: --prot" in first and "--port" in first
    assert hint == "hint: `drivebench serve --help` lists the options"
    done = run("servee")
    first, hint = error_lines(done.stderr)
    assert "Did you mean 'serve'" in first and "lists the commands" in hint


def test_bad_option_value_from_the_environment_is_an_input_error() -> None:
    done = run("serve", env=clean_env(DRIVEBENCH_SERVE_PORT="eighty"))
    assert done.returncode == 2
    first, _ = error_lines(done.stderr)
    assert "--port" in first


class VendorError(Exception):
    """An error type from another module that carries the same information by attribute."""

    def __init__(self) -> None:
        super().__init__("results path data.items not found")
        self.hint = "set [response] results in the target profile"
        self.path = "profile.toml"
        self.line = 7


@pytest.mark.parametrize(
    ("exc", "lines", "code"),
    [
        (
            DrivebenchError("bad value", hint="do this", path="a.jsonl", line=3),
            ["error: a.jsonl:3: bad value", "hint: do this"],
            2,
        ),
        (
            VendorError(),
            [
                "error: profile.toml:7: results path data.items not found",
                "hint: set [response] results in the target profile",
            ],
            2,
        ),
        (
            ValueError("runs/r.jsonl:12: results[0].rank: Input should be\n  a valid integer"),
            [
                "error: runs/r.jsonl:12: results[0].rank: Input should be; a valid integer",
                "hint: fix line 12; docs/evaluation-files.md gives the eval-set and run formats",
            ],
            2,
        ),
        (
            PermissionError(13, "Permission denied", "/x/e.jsonl"),
            ["error: cannot read /x/e.jsonl: Permission denied", "hint: check the path and that this user may read it"],
            2,
        ),
    ],
)
def test_describe_renders_errors_of_any_type_that_carry_a_message(
    exc: BaseException, lines: list[str], code: int
) -> None:
    described = describe(exc)
    assert described.lines() == lines
    assert described.exit_code == code


def test_an_unexpected_exception_is_a_bug_with_exit_70() -> None:
    described = describe(ZeroDivisionError("division by zero"))
    assert described.exit_code == 70
    assert described.lines()[0] == "error: internal error: ZeroDivisionError: division by zero"
    assert "--debug" in described.lines()[1]


def test_drivebench_alone_prints_the_help_and_no_error_line() -> None:
    done = run()
    assert "Usage: drivebench" in done.stdout + done.stderr and "error:" not in done.stderr
    assert "[tool.drivebench]" in done.stdout + done.stderr  # help text is not eaten as Rich markup
