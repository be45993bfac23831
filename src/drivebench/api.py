"""The Python API: load a simulator, serve it, evaluate a target.

    from drivebench.api import evaluate, load_simulator
    sim = load_simulator("seed")
    outcome = sim.recall(sim.engine.user_principal("u01"), "项目X的技术方案审批人", top_k=5)
    evaluation = evaluate(sim, "evalset.jsonl")             # in process, through the simulator's own rules
    evaluation = evaluate("http://127.0.0.1:8000", "evalset.jsonl", token=TOKEN, corpus="seed")
    evaluation = evaluate(my_retriever, "evalset.jsonl", corpus="seed")   # fn(query, principal, top_k, as_of)
    evaluation.result                                        # what `eval run` writes as metrics.json

Imports stay lazy: evaluating an HTTP target or a function loads the evaluator only, never the simulator's index,
permission engine or server (their packages are heavy and a team evaluating its own endpoint does not need them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drivebench.evaluator.evaluate import Evaluation
    from drivebench.evaluator.gates import Gate
    from drivebench.evaluator.idmap import IdMapper
    from drivebench.evaluator.preflight import Preflight
    from drivebench.evaluator.runner import Interrupt
    from drivebench.evaluator.targets.profile import TargetProfile
    from drivebench.formats.evalset import EvalQuery, RunRecord
    from drivebench.server.process import RunningServer
    from drivebench.simulator.backend import SimConfig, Simulator

__all__ = ["evaluate", "load_simulator", "serve"]


def load_simulator(
    corpus: str | Path | None = None,
    *,
    config: SimConfig | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Simulator:
    """Build (if needed) and load a corpus (default: the default corpus), extract and index every version.
    ``progress(done, total)`` counts versions indexed."""
    from drivebench.corpora.builtin import DEFAULT_CORPUS
    from drivebench.simulator.loader import load_simulator as load

    return load(DEFAULT_CORPUS if corpus is None else corpus, config=config, progress=progress)


def serve(sim: Simulator, host: str = "127.0.0.1", port: int | None = None) -> RunningServer:
    """Serve ``sim`` with a real uvicorn server in a background thread (a free port unless given); returns the
    running server (``.url``; ``.stop()`` ends it)."""
    from drivebench.server.process import start_in_thread

    return start_in_thread(sim, host=host, port=port)


def _is_simulator(target: Any) -> bool:
    return all(hasattr(target, a) for a in ("drive", "recall", "principal_for", "tokens"))


def make_target(
    target: Any,
    token: str | None = None,
    *,
    timeout: float | None = None,
    profile: TargetProfile | str | Path | None = None,
    tokens: dict[str, str] | None = None,
    fields: Sequence[str] = (),
    citation_style: str = "brackets",
    mcp: bool = False,
) -> Any:
    """An evaluator target from what ``evaluate`` accepts: a URL (with an optional target ``profile``: its body,
    auth, response mapping and ids), a target profile file (``.toml``), an MCP endpoint (``mcp=True``), a
    simulator, an object with ``async recall(query, top_k)``, or a function ``fn(query, principal, top_k, as_of)
    -> hits``. ``fields``: response mapping overrides ``FIELD=KEY``. Bad input raises ValueError."""
    from drivebench.evaluator.targets.profile import TargetProfile, load_profile, with_target

    if isinstance(target, str | Path) and str(target).endswith(".toml"):
        profile, target = Path(target), None
    if isinstance(profile, str | Path):
        profile = load_profile(profile)
    if target is None or isinstance(target, str):
        given = profile is not None
        profile = profile or TargetProfile()
        url = target if mcp and target else (with_target(profile, target) if target else profile.request.url)
        if not url:
            raise ValueError("no target: give a URL or a target profile with [request] url")
        mapping = profile.response.override(list(fields))
        single, per_principal = (token, tokens or {}) if token is not None or tokens else profile.tokens()
        wait = timeout if timeout is not None else profile.request.timeout_s
        if mcp:
            from drivebench.evaluator.targets.mcp import McpTarget

            return McpTarget(url, single, mapping=mapping, timeout=wait, citation_style=citation_style)
        from drivebench.evaluator.targets.http import HttpTarget

        return HttpTarget(
            url,
            single,
            mapping=mapping,
            timeout=wait,
            citation_style=citation_style,
            profile=profile if given else None,
            tokens=per_principal,
        )
    if _is_simulator(target):
        from drivebench.simulator.target import InProcessTarget

        return InProcessTarget(target, citation_style=citation_style)
    if hasattr(target, "recall") and hasattr(target, "aclose"):
        return target
    if callable(target):
        from drivebench.evaluator.targets.function import FunctionTarget

        return FunctionTarget(target)
    raise TypeError(
        f"cannot evaluate a {type(target).__name__}: give a URL, a target profile (.toml), a simulator, "
        "or a function (query, principal, top_k, as_of) -> hits"
    )


def load_queries(evalset: str | Path | Sequence[EvalQuery | dict[str, Any]]) -> list[EvalQuery]:
    """An eval set from a JSONL file or a list of queries (``EvalQuery`` or dicts); ValueError when empty."""
    from drivebench.formats.evalset import EvalQuery, load_evalset

    if isinstance(evalset, str | Path):
        queries = load_evalset(Path(evalset))
    else:
        queries = [q if isinstance(q, EvalQuery) else EvalQuery.model_validate(q) for q in evalset]
    if not queries:
        raise ValueError(
            f"{evalset if isinstance(evalset, str | Path) else 'the eval set'}: the eval set has no queries"
        )
    return queries


def evaluate(
    target: Any,
    evalset: str | Path | Sequence[EvalQuery | dict[str, Any]],
    *,
    corpus: str | Path | None = None,
    token: str | None = None,
    tokens: dict[str, str] | None = None,
    profile: TargetProfile | str | Path | None = None,
    fields: Sequence[str] = (),
    mcp: bool = False,
    citation_style: str = "brackets",
    match: str | None = None,
    ks: Sequence[int] = (1, 3, 5, 10),
    concurrency: int | None = None,
    timeout: float | None = None,
    answers: bool = False,
    preflight: bool = True,
    max_error_rate: float = 0.0,
    out: str | Path | None = None,
    progress: Callable[[], None] | None = None,
    scoring_progress: Callable[[int, int], None] | None = None,
    on_preflight: Callable[[Preflight], None] | None = None,
    loading: Callable[[str], AbstractContextManager[Any]] | None = None,
    on_run_start: Callable[[int], None] | None = None,
    by: Sequence[str] = (),
    label: str | None = None,
    done: Sequence[RunRecord] = (),
    interrupt: Interrupt | None = None,
    on_record: Callable[[RunRecord], None] | None = None,
    fail_on: Sequence[str] = (),
    allow_leaks: bool = False,
    allow_no_oracle: bool = False,
) -> Evaluation:
    """Run ``evalset`` against ``target`` and score it: what ``drivebench eval run`` does (it is this function
    plus reports). ``.result`` is the metrics.json it writes; with ``out``, run.jsonl and metrics.json are written.

    ``corpus`` (a built-in name or a corpus directory) gives the leak oracle, the catalog and the ids ``match``
    maps to (``doc_id``, ``path``, ``name`` or a map file); for a simulator target it defaults to the simulator's
    own corpus, judged by a fresh permission engine built from the corpus files (never the engine under test).
    Without one, leaks are judged from the eval set's ``forbidden``/``allowed`` lists.

    With ``preflight`` one query is sent first; a fatal answer sends nothing else (every query is recorded as a
    ``preflight`` error) and ``on_preflight`` sees it first. ``progress()`` per answered query,
    ``scoring_progress(done, total)`` while the leak oracle judges, ``loading(what)`` wraps the slow corpus load
    (the CLI's spinner), ``on_run_start(n)`` comes before the first of the n queries is sent.

    ``by``: eval-set tags (``tags[TAG]``) to break metrics down by in ``result["strata"]``, besides the built-in
    strata and ``phrasing``/``style``/``noise`` (included whenever the eval set has them); a tag no query carries
    raises ``UnknownTagError`` (a ValueError naming the eval set's tags) before anything is sent.

    ``label`` names the run (``run_info.label`` in metrics.json, a column of the history, a line of ``eval trend``).

    With a ``corpus`` (given, or the simulator's own), the eval set must fit it: every document and gold version it
    names must be in the corpus, as ``eval run`` checks. One that does not raises
    ``drivebench.corpora.evalset_fit.EvalsetMismatchError`` (a ValueError; ``.unknown`` lists the ids the corpus
    lacks, ``.fits`` the built-in corpora the eval set fits) before anything is sent.

    ``done``: records of queries already answered (a resumed run's run.jsonl): not sent again, scored with the rest.
    ``interrupt`` (``evaluator.runner.Interrupt``) stops the run early: the result is then partial (metrics over the
    queries answered, ``"partial": true``). ``on_record`` sees each new record as it arrives.

    The verdict is judged as ``eval run`` judges it: the leak gates (a leak fails the run unless ``allow_leaks``;
    leaks that could not be measured fail it unless ``allow_no_oracle``) and the ``fail_on`` gates (``--fail-on``
    expressions). ``.verdict``, ``.gates``, ``.passed`` and ``.exit_code`` read them (``result["verdict"]`` and
    ``result["gates"]`` in metrics.json); a run that completed but failed a gate has ``status.state ==
    "gates_failed"``, never ``"ok"``.

    Bad input raises ValueError (or ``IdMapError``, ``ProfileError``, ``UnknownTagError``, ``EvalsetMismatchError``,
    ``GateError`` for a ``fail_on`` expression that cannot be parsed or names no metric: all ValueErrors), before
    anything is sent."""
    from drivebench.evaluator.evaluate import evalset_hash, with_status_first, write_outputs
    from drivebench.evaluator.evaluate import evaluate as run_evaluation
    from drivebench.evaluator.gates import apply_verdict
    from drivebench.evaluator.preflight import preflight as probe
    from drivebench.evaluator.runner import RunConfig
    from drivebench.evaluator.strata import tag_strata

    queries = load_queries(evalset)
    tag_strata(queries, by)  # an unknown tag fails before the corpus is loaded or a query is sent
    gates = _gates(fail_on, ks)  # so does a gate naming no metric: a bad gate never costs a run
    info: dict[str, Any] = {"label": label} if label else {}
    if isinstance(evalset, str | Path):
        info.update(evalset=str(evalset), evalset_hash=evalset_hash(Path(evalset)))
    if isinstance(profile, str | Path):
        from drivebench.evaluator.targets.profile import load_profile

        info["target_profile"] = str(profile)
        profile = load_profile(profile)
    elif isinstance(target, str | Path) and str(target).endswith(".toml"):
        from drivebench.evaluator.targets.profile import load_profile

        info["target_profile"] = str(target)
        target, profile = None, load_profile(target)
    if corpus is None and _is_simulator(target) and getattr(target, "corpus_dir", None) is not None:
        corpus = target.corpus_dir
    corpus_dir = None
    facts, no_facts_reason = None, None
    if corpus is not None:
        from drivebench.corpora.builtin import corpus_version, resolve_corpus

        corpus_dir = resolve_corpus(corpus)
        info.update(corpus=str(corpus), corpus_version=corpus_version(corpus_dir))
        from drivebench.corpora.evalset_fit import check_evalset_fits

        check_evalset_fits(queries, corpus_dir, str(corpus))  # an eval set of another corpus: before any query
        from drivebench.evaluator.evaluate import corpus_facts

        facts, no_facts_reason = corpus_facts(corpus_dir)  # answer leaks; a malformed facts.jsonl before any query
    match = match or (profile.ids.match if profile is not None else "doc_id")
    id_mapper = _id_mapper(match, corpus_dir, getattr(profile, "source", None))

    def build() -> Any:
        return make_target(
            target,
            token,
            timeout=timeout,
            profile=profile,
            tokens=tokens,
            fields=fields,
            citation_style=citation_style,
            mcp=mcp,
        )

    first = build()
    missing = first.missing_tokens(queries) if hasattr(first, "missing_tokens") else []
    if missing:
        raise ValueError(f"[auth] tokens_file has no token for: {', '.join(missing[:10])}")
    mode = "answer" if answers else "recall"
    top_k = max(10, *ks)
    pre = None
    answered = {r.query_id for r in done}
    pending = [q for q in queries if q.query_id not in answered]  # the probe asks a query the run will ask

    async def send_probe() -> Preflight:
        try:
            return await probe(first, pending, top_k, mode)
        finally:
            await first.aclose()

    if preflight and pending and not (interrupt is not None and interrupt.requested):
        pre = asyncio.run(send_probe()).check_ids(id_mapper)
        if on_preflight is not None:
            on_preflight(pre)
    else:
        asyncio.run(first.aclose())
    oracle = catalog = None
    if corpus_dir is not None and not (pre is not None and pre.fatal):
        from drivebench.evaluator.catalog import Catalog
        from drivebench.evaluator.oracle import corpus_oracle
        from drivebench.formats.corpus import load_manifest

        with loading("loading the corpus's policies (leak oracle) and catalog …") if loading else nullcontext():
            oracle = corpus_oracle(corpus_dir)  # the corpus's own policies, not the target's
            catalog = Catalog.from_manifest(load_manifest(corpus_dir))  # resolves cited file names, strata
    conc = concurrency or (profile.request.concurrency if profile is not None else 8)
    if on_run_start is not None:
        on_run_start(len(pending))
    evaluation = run_evaluation(
        build(),
        queries,
        ks=ks,
        run_config=RunConfig(top_k=top_k, concurrency=conc, mode=mode),
        oracle=oracle,
        catalog=catalog,
        progress=progress,
        run_info=info,
        id_mapper=id_mapper,
        preflight_result=pre,
        max_error_rate=max_error_rate,
        scoring_progress=scoring_progress,
        by=by,
        done=done,
        interrupt=interrupt,
        on_record=on_record,
        facts=facts,
        no_facts_reason=no_facts_reason,
    )
    apply_verdict(evaluation.result, gates, allow_no_oracle=allow_no_oracle, allow_leaks=allow_leaks)
    evaluation.result = with_status_first(evaluation.result)
    if out is not None:
        write_outputs(evaluation, Path(out))
    return evaluation


def _gates(fail_on: Sequence[str], ks: Sequence[int]) -> list[Gate]:
    """The ``fail_on`` gates, each checked to parse and to name a metric of a run with these ``ks``."""
    from drivebench.evaluator.gates import check_gates, parse_gate
    from drivebench.evaluator.scoring import score

    gates = [parse_gate(expr) for expr in fail_on]
    if gates:
        check_gates(score([], [], ks, bootstrap=False), gates)  # the names a run with these ks has
    return gates


def _id_mapper(match: str, corpus_dir: Path | None, profile_source: Any = None) -> IdMapper | None:
    """How result ids map to the corpus; None when ids are the corpus's doc ids and no corpus checks them."""
    if match == "doc_id" and corpus_dir is None:
        return None
    from drivebench.evaluator.idmap import id_mapper_for

    return id_mapper_for(match, corpus_dir, profile_source)
