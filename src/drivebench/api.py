"""The Python API: load a simulator, serve it, evaluate a target.

    from drivebench.api import EvalOptions, evaluate, load_simulator
    sim = load_simulator("seed")
    outcome = sim.recall(sim.engine.user_principal("u01"), "项目X的技术方案审批人", top_k=5)
    evaluation = evaluate(sim, "evalset.jsonl")             # in process, through the simulator's own rules
    evaluation = evaluate("http://127.0.0.1:8000", "evalset.jsonl", EvalOptions(token=TOKEN, corpus="seed"))
    evaluation = evaluate(my_retriever, "evalset.jsonl", EvalOptions(corpus="seed"))  # fn(query, principal, top_k, as_of)
    evaluation.result                                        # what `eval run` writes as metrics.json
    evaluation.run_result                                    # the same, typed (RunResult)

Imports stay lazy: evaluating an HTTP target or a function loads the evaluator only, never the simulator's index,
permission engine or server (their packages are heavy and a team evaluating its own endpoint does not need them).
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drivebench.evaluator.options import EvalHooks, EvalOptions, EvalSet

if TYPE_CHECKING:
    from drivebench.evaluator.evaluate import Evaluation
    from drivebench.evaluator.gates import Gate
    from drivebench.evaluator.idmap import IdMapper
    from drivebench.evaluator.loaded_corpus import LoadedCorpus
    from drivebench.evaluator.preflight import Preflight
    from drivebench.evaluator.targets.profile import TargetProfile
    from drivebench.formats.evalset import EvalQuery
    from drivebench.server.process import RunningServer
    from drivebench.simulator.backend import SimConfig, Simulator

__all__ = ["EvalHooks", "EvalOptions", "EvalSet", "evaluate", "load_simulator", "serve"]


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


def load_corpus(corpus: str | Path | LoadedCorpus) -> LoadedCorpus:
    """A corpus (a built-in name, built on first use, or a directory) read once for a run."""
    from drivebench.evaluator.loaded_corpus import LoadedCorpus

    if isinstance(corpus, LoadedCorpus):
        return corpus
    from drivebench.corpora.builtin import resolve_corpus

    return LoadedCorpus.load(resolve_corpus(corpus), str(corpus))


def check_fits(queries: Sequence[EvalQuery], corpus: LoadedCorpus) -> None:
    """Raise ``EvalsetMismatchError`` when the eval set names ids the corpus lacks; each eval set is checked once
    per loaded corpus (``eval run`` checks it early, for its message, and ``evaluate`` does not repeat it)."""
    from drivebench.corpora.evalset_fit import check_evalset_fits

    if not corpus.fits_checked(queries):
        check_evalset_fits(queries, corpus.corpus_dir, corpus.name, corpus.manifest)
        corpus.mark_fits(queries)


def evaluate(
    target: Any,
    evalset: str | Path | Sequence[EvalQuery | dict[str, Any]] | EvalSet,
    options: EvalOptions | None = None,
    **keywords: Any,
) -> Evaluation:
    """Run ``evalset`` against ``target`` and score it: what ``drivebench eval run`` does (it is this function
    plus reports). ``.result`` is the metrics.json it writes; with ``options.out``, run.jsonl and metrics.json are
    written. ``options`` (``EvalOptions``) holds every setting, each with ``eval run``'s default; keyword
    arguments (``corpus=``, ``fail_on=``, ...: the former signature) still work for this release, with a
    DeprecationWarning.

    ``corpus`` (a built-in name, a corpus directory or a ``LoadedCorpus``) gives the leak oracle, the catalog and
    the ids ``match`` maps to (``doc_id``, ``path``, ``name`` or a map file); for a simulator target it defaults to
    the simulator's own corpus, judged by a fresh permission engine built from the corpus files (never the engine
    under test). Without one, leaks are judged from the eval set's ``forbidden``/``allowed`` lists.

    With ``preflight`` one query is sent first; a fatal answer sends nothing else (every query is recorded as a
    ``preflight`` error) and ``hooks.on_preflight`` sees it first (``EvalHooks``: what the caller sees as the run
    goes).

    ``by``: eval-set tags (``tags[TAG]``) to break metrics down by in ``result["strata"]``, besides the built-in
    strata and ``phrasing``/``style``/``noise`` (included whenever the eval set has them); a tag no query carries
    raises ``UnknownTagError`` (a ValueError naming the eval set's tags) before anything is sent.

    ``label`` names the run (``run_info.label`` in metrics.json, a column of the history, a line of ``eval trend``).

    With a ``corpus`` (given, or the simulator's own), the eval set must fit it: every document and gold version it
    names must be in the corpus, as ``eval run`` checks. One that does not raises
    ``drivebench.corpora.evalset_fit.EvalsetMismatchError`` (a ValueError; ``.unknown`` lists the ids the corpus
    lacks, ``.fits`` the built-in corpora the eval set fits) before anything is sent.

    ``done``: records of queries already answered (a resumed run's run.jsonl): not sent again, scored with the rest.
    ``hooks.interrupt`` stops the run early: the result is then partial (metrics over the queries answered,
    ``"partial": true``).

    The verdict is judged as ``eval run`` judges it: the leak gates (a leak fails the run unless ``allow_leaks``;
    leaks that could not be measured fail it unless ``allow_no_oracle``) and the ``fail_on`` gates (``--fail-on``
    expressions). ``.verdict``, ``.gates``, ``.passed`` and ``.exit_code`` read them (``result["verdict"]`` and
    ``result["gates"]`` in metrics.json); a run that completed but failed a gate has ``status.state ==
    "gates_failed"``, never ``"ok"``.

    Bad input raises ValueError (or ``IdMapError``, ``ProfileError``, ``UnknownTagError``, ``EvalsetMismatchError``,
    ``GateError`` for a ``fail_on`` expression that cannot be parsed or names no metric: all ValueErrors), before
    anything is sent."""
    if keywords:
        if options is not None:
            raise TypeError("evaluate() takes options or keyword arguments, not both")
        # warned, not refused: scripts written against the keyword signature keep running for this release
        warnings.warn(
            "evaluate(target, evalset, **keywords) is deprecated: pass evaluate(target, evalset, EvalOptions(...))",
            DeprecationWarning,
            stacklevel=2,
        )
        options = EvalOptions.from_keywords(**keywords)
    return _run(target, EvalSet.load(evalset), options or EvalOptions())


def _run(target: Any, evalset: EvalSet, options: EvalOptions) -> Evaluation:
    """``evaluate`` once its eval set is loaded: check everything that can be wrong, probe, run, judge, write."""
    from drivebench.evaluator.evaluate import with_status_first, write_outputs
    from drivebench.evaluator.gates import apply_verdict
    from drivebench.evaluator.strata import tag_strata

    queries, hooks = evalset.queries, options.hooks
    tag_strata(queries, options.by)  # an unknown tag fails before the corpus is loaded or a query is sent
    gates = _gates(options.fail_on, options.ks)  # so does a gate naming no metric: a bad gate never costs a run
    info, target, profile = _run_info(target, evalset, options)
    corpus = options.corpus
    if corpus is None and _is_simulator(target) and getattr(target, "corpus_dir", None) is not None:
        corpus = target.corpus_dir
    loaded = load_corpus(corpus) if corpus is not None else None
    if loaded is not None:
        from drivebench.corpora.builtin import manifest_version

        info.update(corpus=loaded.name, corpus_version=manifest_version(loaded.manifest))
        check_fits(queries, loaded)  # an eval set of another corpus: before any query
    match = options.match or (profile.ids.match if profile is not None else "doc_id")
    id_mapper = _id_mapper(match, loaded, getattr(profile, "source", None))

    def build() -> Any:
        return make_target(
            target,
            options.token,
            timeout=options.timeout,
            profile=profile,
            tokens=dict(options.tokens) if options.tokens is not None else None,
            fields=options.fields,
            citation_style=options.citation_style,
            mcp=options.mcp,
        )

    first = build()
    missing = first.missing_tokens(queries) if hasattr(first, "missing_tokens") else []
    if missing:
        raise ValueError(f"[auth] tokens_file has no token for: {', '.join(missing[:10])}")
    top_k = max(10, *options.ks)
    pre = _preflight(first, queries, top_k, options, id_mapper)
    oracle = catalog = None
    if loaded is not None and not (pre is not None and pre.fatal):
        loading = hooks.loading("loading the corpus's policies (leak oracle) and catalog …") if hooks.loading else None
        with loading or nullcontext():
            oracle = loaded.oracle()  # the corpus's own policies, not the target's
            catalog = loaded.catalog  # resolves cited file names, strata
    evaluation = _send_and_score(
        build(), queries, options, top_k, profile, info, id_mapper, pre, oracle, catalog, loaded
    )
    apply_verdict(evaluation.result, gates, allow_no_oracle=options.allow_no_oracle, allow_leaks=options.allow_leaks)
    evaluation.result = with_status_first(evaluation.result)
    if options.out is not None:
        write_outputs(evaluation, Path(options.out))
    return evaluation


def _run_info(target: Any, evalset: EvalSet, options: EvalOptions) -> tuple[dict[str, Any], Any, Any]:
    """The run_info ``evaluate`` knows before the run (label, eval set, target profile), and the target and its
    profile once a profile path is loaded."""
    from drivebench.evaluator.evaluate import evalset_hash

    info: dict[str, Any] = {"label": options.label} if options.label else {}
    if evalset.path is not None:
        info.update(evalset=str(evalset.path), evalset_hash=evalset_hash(evalset.path))
    profile = options.profile
    if isinstance(profile, str | Path):
        from drivebench.evaluator.targets.profile import load_profile

        info["target_profile"] = str(profile)
        profile = load_profile(profile)
    elif isinstance(target, str | Path) and str(target).endswith(".toml"):
        from drivebench.evaluator.targets.profile import load_profile

        info["target_profile"] = str(target)
        target, profile = None, load_profile(target)
    return info, target, profile


def _preflight(
    first: Any, queries: Sequence[EvalQuery], top_k: int, options: EvalOptions, id_mapper: IdMapper | None
) -> Preflight | None:
    """Send the probe (one query the run will ask) through ``first`` and close it; None when no probe is sent."""
    from drivebench.evaluator.preflight import preflight as probe

    mode = "answer" if options.answers else "recall"
    answered = {r.query_id for r in options.done}
    pending = [q for q in queries if q.query_id not in answered]
    interrupt = options.hooks.interrupt

    async def send_probe() -> Preflight:
        try:
            return await probe(first, pending, top_k, mode)
        finally:
            await first.aclose()

    if not (options.preflight and pending and not (interrupt is not None and interrupt.requested)):
        asyncio.run(first.aclose())
        return None
    pre = asyncio.run(send_probe()).check_ids(id_mapper)
    if options.hooks.on_preflight is not None:
        options.hooks.on_preflight(pre)
    return pre


def _send_and_score(
    target: Any,
    queries: list[EvalQuery],
    options: EvalOptions,
    top_k: int,
    profile: Any,
    info: dict[str, Any],
    id_mapper: IdMapper | None,
    pre: Preflight | None,
    oracle: Any,
    catalog: Any,
    loaded: LoadedCorpus | None,
) -> Evaluation:
    from drivebench.evaluator.evaluate import evaluate as run_evaluation
    from drivebench.evaluator.runner import RunConfig

    hooks = options.hooks
    mode = "answer" if options.answers else "recall"
    conc = options.concurrency or (profile.request.concurrency if profile is not None else 8)
    if hooks.on_run_start is not None:
        answered = {r.query_id for r in options.done}
        hooks.on_run_start(sum(q.query_id not in answered for q in queries))
    return run_evaluation(
        target,
        queries,
        ks=options.ks,
        run_config=RunConfig(top_k=top_k, concurrency=conc, mode=mode),
        oracle=oracle,
        catalog=catalog,
        progress=hooks.progress,
        run_info=info,
        id_mapper=id_mapper,
        preflight_result=pre,
        max_error_rate=options.max_error_rate,
        scoring_progress=hooks.scoring_progress,
        by=options.by,
        done=options.done,
        interrupt=hooks.interrupt,
        on_record=hooks.on_record,
        facts=loaded.facts if loaded is not None else None,
        no_facts_reason=loaded.no_facts_reason if loaded is not None else None,
    )


def _gates(fail_on: Sequence[str], ks: Sequence[int]) -> list[Gate]:
    """The ``fail_on`` gates, each checked to parse and to name a metric of a run with these ``ks``."""
    from drivebench.evaluator.gates import check_gates, parse_gate
    from drivebench.evaluator.scoring import score

    gates = [parse_gate(expr) for expr in fail_on]
    if gates:
        check_gates(score([], [], ks, bootstrap=False), gates)  # the names a run with these ks has
    return gates


def _id_mapper(match: str, corpus: LoadedCorpus | None, profile_source: Any = None) -> IdMapper | None:
    """How result ids map to the corpus; None when ids are the corpus's doc ids and no corpus checks them."""
    if corpus is not None:
        return corpus.id_mapper(match, profile_source)
    if match == "doc_id":
        return None
    from drivebench.evaluator.idmap import id_mapper_for

    return id_mapper_for(match, None, profile_source)
