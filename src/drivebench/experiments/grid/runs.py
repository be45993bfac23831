"""Running an experiment: one simulator per distinct index-time configuration, a run directory per (dataset,
configuration), complete runs reused and partial ones resumed (``run_experiment``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drivebench.experiments.grid.spec import ConfigSpec, ExperimentSpec, SpecError
from drivebench.simulator.backend import SimConfig


@dataclass
class ConfigRun:
    config: str
    dataset: str
    dir: Path
    result: dict[str, Any] | None = None
    state: str = "pending"  # complete | partial | failed
    ran: bool = False  # False: a complete run found in the results dir was reused
    resumed: int = 0  # records carried over from a partial run
    elapsed_s: float = 0.0
    index_s: float = 0.0


@dataclass
class ExperimentRun:
    spec: ExperimentSpec
    results_dir: Path
    runs: dict[tuple[str, str], ConfigRun] = field(default_factory=dict)  # (dataset id, config name)
    interrupted: bool = False
    elapsed_s: float = 0.0
    index_builds: int = 0

    @property
    def ran(self) -> list[ConfigRun]:
        return [r for r in self.runs.values() if r.ran]


def _answer_target(sim: Any) -> Any:
    """The in-process target plus ``answer``: recall and the simulator's extractive answer, the same code as
    ``POST /api/mcp/answer`` (``server.api.answer.answer_for``)."""
    from drivebench.drive.errors import DriveError, PermissionCheckFailed
    from drivebench.formats.evalset import EvalQuery, RunHit
    from drivebench.formats.target import TargetError, TargetResponse
    from drivebench.server.api.answer import answer_for
    from drivebench.server.api.schemas import AnswerRequest
    from drivebench.simulator.target import InProcessTarget

    class InProcessAnswerTarget(InProcessTarget):
        def _answer(self, query: EvalQuery, top_k: int) -> TargetResponse:
            assert self._token is not None
            req = AnswerRequest(
                query=query.query,
                top_k=top_k,
                user_id=query.user_id,
                user_role=query.user_role,
                department=query.department,
                as_of=query.as_of,
            )
            try:
                resp = answer_for(self.sim, self._token, req)
            except PermissionCheckFailed as exc:
                raise TargetError(f"503 permission check failed: {exc}", retryable=False) from exc
            except DriveError as exc:
                raise TargetError(f"{exc.code}: {exc}", retryable=False) from exc
            hits = [RunHit(doc_id=h.doc_id, version_id=h.version_id, score=h.score, rank=h.rank) for h in resp.results]
            return TargetResponse(
                hits=hits,
                answer=resp.answer,
                as_of=resp.as_of.isoformat() if resp.as_of is not None else None,
                snapshot=resp.snapshot,
                faults=self.sim.faults.header_value(),
            )

        async def answer(self, query: EvalQuery, top_k: int) -> TargetResponse:
            return await asyncio.to_thread(self._answer, query, top_k)

    return InProcessAnswerTarget(sim)


def _token_for(config: ConfigSpec) -> str:
    """The endpoint's evaluation token, from the environment variable ``token_env`` (never from the file)."""
    import os

    token = os.environ.get(config.token_env)
    if not token:
        raise SpecError(
            f"configuration {config.name!r}: ${config.token_env} is empty",
            hint=f"set {config.token_env} to the endpoint's evaluation token (or name another variable: token_env)",
        )
    return token


def _http_target(config: ConfigSpec) -> Any:
    """The evaluator's HTTP target for a configuration's ``url``."""
    from drivebench.evaluator.targets.http import HttpTarget

    return HttpTarget(config.url, _token_for(config))


def apply_query_config(sim: Any, config: SimConfig) -> None:
    """Point a loaded simulator at ``config``'s query-time options (its index-time fields must be the same)."""
    reconfigure = getattr(sim, "reconfigure", None)
    if callable(reconfigure):
        reconfigure(config)
        return
    sim.config = config
    sim.retriever = sim.retriever_for(config.pipeline)


def _complete(run_dir: Path, settings: dict[str, Any]) -> dict[str, Any] | None:
    """The metrics of a complete run in ``run_dir`` made with ``settings``, else None."""
    from drivebench.evaluator.journal import read_run_config

    try:
        recorded = read_run_config(run_dir)
    except (ValueError, OSError):
        return None
    metrics = run_dir / "metrics.json"
    if not recorded or recorded.get("state") != "complete" or recorded.get("settings") != settings:
        return None
    if not metrics.is_file():
        return None
    from drivebench.evaluator.result import RunResult

    loaded = RunResult.read(metrics)
    return None if loaded.partial else loaded.to_dict()


def run_experiment(
    spec: ExperimentSpec,
    results_dir: Path,
    *,
    progress: Callable[[int, int, str], None] | None = None,
    loading: Callable[[str], Any] | None = None,
    interrupt: Any = None,
) -> ExperimentRun:
    """Run every configuration on every dataset (skipping complete runs, resuming partial ones).
    ``progress(done, total, what)`` counts queries answered over configs x queries; ``loading(what)`` wraps an index
    build (a context manager, the CLI's spinner); ``interrupt`` (``evaluator.runner.Interrupt``) stops early."""
    from contextlib import nullcontext

    from drivebench.corpora.builtin import corpus_version, resolve_corpus
    from drivebench.corpora.evalset_fit import check_evalset_fits
    from drivebench.evaluator.catalog import Catalog
    from drivebench.evaluator.evaluate import evalset_hash, write_outputs
    from drivebench.evaluator.evaluate import evaluate as run_evaluation
    from drivebench.evaluator.idmap import id_mapper_for
    from drivebench.evaluator.journal import RunJournal, read_records, write_run_config
    from drivebench.evaluator.oracle import corpus_oracle
    from drivebench.evaluator.runner import RunConfig
    from drivebench.formats.corpus import load_manifest
    from drivebench.formats.evalset import load_evalset
    from drivebench.simulator.backend import Simulator

    started = time.monotonic()
    for c in spec.configs:  # a missing token is found before anything runs
        if c.url is not None:
            _token_for(c)
    out = ExperimentRun(spec, Path(results_dir))
    prepared = []
    for ds in spec.datasets:
        try:
            corpus_dir = resolve_corpus(ds.corpus)
        except KeyError as exc:
            raise SpecError(f"[experiment] unknown corpus {ds.corpus!r}", path=spec.path) from exc
        evalset = ds.evalset or corpus_dir / "evalset.jsonl"
        queries = load_evalset(evalset)
        try:
            check_evalset_fits(queries, corpus_dir, ds.corpus)
        except ValueError as exc:
            raise SpecError(f"[experiment] {exc}", path=spec.path) from exc
        prepared.append((ds, corpus_dir, evalset, queries))
    total = sum(len(q) for *_, q in prepared) * len(spec.configs)
    done = [0]

    def tick(what: str) -> Callable[[], None]:
        def step() -> None:
            done[0] += 1
            if progress is not None:
                progress(done[0], total, what)

        return step

    if progress is not None:
        progress(0, total, "")
    for ds, corpus_dir, evalset, queries in prepared:
        oracle = catalog = None
        info_base = {
            "evalset": str(evalset),
            "evalset_hash": evalset_hash(evalset),
            "corpus": ds.corpus,
            "corpus_version": corpus_version(corpus_dir),
            "experiment": spec.name,
        }
        # a run is reused only on the same eval set (its hash), corpus version, cutoffs and seed
        same_data = {
            "evalset_hash": info_base["evalset_hash"],
            "corpus_version": info_base["corpus_version"],
            "ks": list(spec.ks),
            "seed": spec.seed,
        }
        pending: list[ConfigSpec] = []
        for c in spec.configs:
            run_dir = out.results_dir / ds.id / c.name
            run = out.runs[(ds.id, c.name)] = ConfigRun(c.name, ds.id, run_dir)
            found = _complete(run_dir, {**c.settings(), **same_data})
            if found is not None:
                run.result, run.state = found, "complete"
                done[0] += len(queries)
                if progress is not None:
                    progress(done[0], total, f"{c.name}: already complete")
            else:
                pending.append(c)
        # configurations sharing an index run one after the other; one simulator is alive at a time
        groups: dict[tuple[Any, ...], list[ConfigSpec]] = {}
        for c in pending:
            groups.setdefault(c.index_key(), []).append(c)
        for members in groups.values():
            if interrupt is not None and interrupt.requested:
                break
            t0 = time.monotonic()
            first = members[0]
            remote = first.url is not None
            label = f"loading {ds.corpus}'s oracle" if remote else f"indexing {ds.corpus} for {first.name}"
            with loading(label) if loading else nullcontext():
                sim = None if remote else Simulator.from_corpus(corpus_dir, first.sim)
                if oracle is None:
                    oracle = corpus_oracle(corpus_dir)
                    catalog = Catalog.from_manifest(load_manifest(corpus_dir))
            out.index_builds += 0 if remote else 1
            index_s = time.monotonic() - t0
            for c in members:
                if interrupt is not None and interrupt.requested:
                    break
                run = out.runs[(ds.id, c.name)]
                if sim is not None:
                    apply_query_config(sim, c.sim)
                target = _answer_target(sim) if sim is not None else _http_target(c)
                journal_path = run.dir / "run.jsonl"
                settings = {**c.settings(), **same_data}
                prior = []
                recorded = None
                try:
                    from drivebench.evaluator.journal import read_run_config

                    recorded = read_run_config(run.dir)
                except (ValueError, OSError):
                    recorded = None
                if recorded and recorded.get("settings") == settings and journal_path.is_file():
                    prior = read_records(journal_path)
                run.resumed = len(prior)
                done[0] += len(prior)
                write_run_config(run.dir, {"state": "running", "config": c.name, "settings": settings})
                journal = RunJournal(journal_path, resume=bool(prior))
                t1 = time.monotonic()
                try:
                    evaluation = run_evaluation(
                        target,
                        queries,
                        ks=spec.ks,
                        run_config=RunConfig(
                            top_k=c.top_k,
                            concurrency=spec.concurrency,
                            mode="answer" if c.answers else "recall",
                            seed=spec.seed,
                        ),
                        oracle=oracle,
                        catalog=catalog,
                        progress=tick(c.name),
                        run_info={
                            **info_base,
                            "label": c.name,
                            "lever": c.lever,
                            "target": c.url or f"inprocess:{c.name}",
                        },
                        id_mapper=id_mapper_for("doc_id", corpus_dir, None),
                        done=prior,
                        interrupt=interrupt,
                        on_record=journal.append,
                    )
                finally:
                    journal.close()
                write_outputs(evaluation, run.dir)
                run.result = evaluation.result
                run.ran = True
                run.elapsed_s = time.monotonic() - t1
                run.index_s = index_s if c is first else 0.0
                run.state = "partial" if evaluation.partial else ("failed" if evaluation.failed else "complete")
                write_run_config(
                    run.dir,
                    {"state": "partial" if evaluation.partial else "complete", "config": c.name, "settings": settings},
                )
                if evaluation.partial:
                    out.interrupted = True
            del sim
        if interrupt is not None and interrupt.requested:
            out.interrupted = True
            break
    out.elapsed_s = time.monotonic() - started
    return out
