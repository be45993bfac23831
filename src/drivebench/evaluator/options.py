"""What ``drivebench.api.evaluate`` is asked to do: the eval set it runs (``EvalSet``), how it runs and judges it
(``EvalOptions``) and what it tells its caller as it goes (``EvalHooks``). ``eval run`` builds the same objects
from its options, so the CLI and the Python API run one path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drivebench.formats.evalset import EvalQuery, RunRecord

if TYPE_CHECKING:
    from drivebench.evaluator.loaded_corpus import LoadedCorpus
    from drivebench.evaluator.preflight import Preflight
    from drivebench.evaluator.runner import Interrupt
    from drivebench.evaluator.targets.profile import TargetProfile


@dataclass(frozen=True)
class EvalSet:
    """An eval set parsed and validated once: its queries and the file they came from (None for a list given in
    Python). ``run_info`` names the file and its hash."""

    queries: list[EvalQuery]
    path: Path | None = None

    @classmethod
    def load(cls, source: str | Path | Sequence[EvalQuery | Mapping[str, Any]] | EvalSet) -> EvalSet:
        """From a JSONL file, a list of queries (``EvalQuery`` or dicts) or an ``EvalSet``; ValueError when it is
        malformed or empty."""
        from drivebench.formats.evalset import load_evalset

        if isinstance(source, EvalSet):
            loaded = source
        elif isinstance(source, str | Path):
            loaded = cls(load_evalset(Path(source)), Path(source))
        else:
            loaded = cls([q if isinstance(q, EvalQuery) else EvalQuery.model_validate(q) for q in source])
        if not loaded.queries:
            raise ValueError(
                f"{loaded.path if loaded.path is not None else 'the eval set'}: the eval set has no queries"
            )
        return loaded


@dataclass(frozen=True)
class EvalHooks:
    """What the caller sees as the run goes (the CLI's bars and spinners, its journal) and how it stops it.

    ``progress()`` per answered query; ``scoring_progress(done, total)`` while the leak oracle judges;
    ``on_preflight(pre)`` sees the probe's answer first; ``loading(what)`` wraps the slow corpus load;
    ``on_run_start(n)`` comes before the first of the n queries is sent; ``on_record(rec)`` sees each new record
    as it arrives; ``interrupt`` (``evaluator.runner.Interrupt``) stops the run early (a partial result)."""

    progress: Callable[[], None] | None = None
    scoring_progress: Callable[[int, int], None] | None = None
    on_preflight: Callable[[Preflight], None] | None = None
    loading: Callable[[str], AbstractContextManager[Any]] | None = None
    on_run_start: Callable[[int], None] | None = None
    on_record: Callable[[RunRecord], None] | None = None
    interrupt: Interrupt | None = None


@dataclass(frozen=True)
class EvalOptions:
    """How ``evaluate`` runs, scores and judges an eval set; every field has ``eval run``'s default.

    ``corpus``: a built-in name, a corpus directory or a ``LoadedCorpus`` (the leak oracle, the catalog, the ids
    ``match`` maps to). ``token``/``tokens``/``profile``/``fields``/``mcp``/``citation_style``/``timeout``: how
    the target is called. ``ks``, ``by``, ``answers``, ``preflight``, ``concurrency``, ``max_error_rate``,
    ``label``: as ``eval run``'s options. ``done``: records of queries already answered (a resumed run). The
    verdict: ``fail_on`` gates, ``allow_leaks``, ``allow_no_oracle``. ``out``: write run.jsonl and metrics.json
    there."""

    corpus: str | Path | LoadedCorpus | None = None
    token: str | None = None
    tokens: Mapping[str, str] | None = None
    profile: TargetProfile | str | Path | None = None
    fields: Sequence[str] = ()
    mcp: bool = False
    citation_style: str = "brackets"
    match: str | None = None
    ks: Sequence[int] = (1, 3, 5, 10)
    concurrency: int | None = None
    timeout: float | None = None
    answers: bool = False
    preflight: bool = True
    max_error_rate: float = 0.0
    out: str | Path | None = None
    by: Sequence[str] = ()
    label: str | None = None
    done: Sequence[RunRecord] = ()
    fail_on: Sequence[str] = ()
    allow_leaks: bool = False
    allow_no_oracle: bool = False
    hooks: EvalHooks = field(default_factory=EvalHooks)

    @classmethod
    def from_keywords(cls, **keywords: Any) -> EvalOptions:
        """The options of ``evaluate``'s former keyword arguments (the hooks' names among them); an unknown name is
        a TypeError, as it was."""
        hook_names = {f.name for f in fields(EvalHooks)}
        option_names = {f.name for f in fields(cls)} - {"hooks"}
        unknown = sorted(set(keywords) - hook_names - option_names)
        if unknown:
            raise TypeError(f"evaluate() got an unexpected keyword argument {unknown[0]!r}")
        hooks = EvalHooks(**{k: v for k, v in keywords.items() if k in hook_names})
        return cls(**{k: v for k, v in keywords.items() if k in option_names}, hooks=hooks)
