"""``drivebench mcp``: the simulator as an MCP server on stdio, for MCP clients that start a local process
(Claude Desktop, Claude Code, Cursor, VS Code...). The same tools and resources as ``/mcp/`` of ``serve``
(``simulator.mcp.server``); stdout carries the protocol only, everything else goes to stderr.

Whose token the client holds: ``--user USER_ID`` acts as that user (what it may preview, nothing else);
without it, the corpus's evaluation token, whose tool calls must name ``user_id`` or ``user_role`` (audited).
"""

from __future__ import annotations

import contextlib
import sys

import typer

from drivebench.cli.common import err_console, load_with_progress
from drivebench.cli.options import (
    AnswerCitationOpt,
    AnswerLengthOpt,
    AnswerPassagesOpt,
    CorpusOpt,
    EmbedderOpt,
    ExtractOpt,
    PipelineOpt,
    RerankOpt,
    answer_config,
    parse_extract,
)


def mcp(
    corpus: str = CorpusOpt,
    user: str | None = typer.Option(
        None, "--user", help="Act as this user (its token); default: the evaluation token (tools name the user)."
    ),
    pipeline: str = PipelineOpt,
    rerank: str | None = RerankOpt,
    embedder: str = EmbedderOpt,
    extract: list[str] = ExtractOpt,
    answer_citation: str = AnswerCitationOpt,
    answer_length: int = AnswerLengthOpt,
    answer_passages: int = AnswerPassagesOpt,
) -> None:
    """Serve the corpus as an MCP server over stdio (tools recall, answer, get_document, list_versions)."""
    from drivebench.errors import DrivebenchError
    from drivebench.server.mcp.server import build_mcp_server
    from drivebench.simulator.backend import SimConfig

    with contextlib.redirect_stdout(sys.stderr):  # stdout is the protocol: nothing else may reach it
        levers = answer_config(answer_citation, answer_length, answer_passages)
        sim = load_with_progress(
            corpus,
            SimConfig(pipeline=pipeline, rerank=rerank, embedder=embedder, extract=parse_extract(extract), **levers),
        )
        if user is not None:
            if user not in sim.drive.users:
                raise DrivebenchError(
                    f"unknown user {user!r} in corpus {sim.drive.name}",
                    hint=f"`drivebench tokens --corpus {corpus}` lists the users",
                )
            token = sim.tokens.for_subject(user).token
        else:
            token = sim.tokens.eval_token
        server = build_mcp_server(sim, token=token)
    who = f"user {user}" if user else "the evaluation token (name user_id or user_role in tool calls)"
    err_console.print(f"MCP server for {sim.drive.name} on stdio, acting as {who}")
    server.run("stdio")
