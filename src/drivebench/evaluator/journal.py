"""A run directory written as the run goes, so that a stopped run can be resumed (``eval run --resume``).

* ``run_config.json``: the options the run was started with (target, eval set and its hash, corpus, cutoffs, the
  options that decide what is measured and judged; never a token) and its ``state``: ``running`` while queries are
  being sent, then ``partial`` (stopped early) or ``complete``. Written before the first query is sent and
  replaced atomically.
* ``run.jsonl``: each record is appended the moment its query is answered (or failed) and flushed, so a process that
  is killed (even SIGKILL) keeps every record written before; it is fsync'd at most once a second and when the run
  ends. When the run ends, the file is replaced by the records in eval-set order (``evaluate.write_outputs``).

``read_records`` reads such a file back, one record per query (the last written wins), ignoring a last line cut off
by a kill.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import IO, Any

from drivebench.formats.evalset import RunRecord

RUN_JSONL = "run.jsonl"
RUN_CONFIG = "run_config.json"
FSYNC_EVERY_S = 1.0


class RunJournal:
    """``run.jsonl`` appended record by record (``resume``: after the whole records already there)."""

    def __init__(self, path: Path, *, resume: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if resume and self.path.exists():
            data = self.path.read_bytes()
            if data and not data.endswith(b"\n"):  # a line cut off by a kill: dropped, its query is asked again
                with self.path.open("r+b") as fh:
                    fh.truncate(data.rfind(b"\n") + 1)
        self._fh: IO[str] | None = self.path.open("a" if resume else "w", encoding="utf-8")
        self._synced = time.monotonic()
        self.appended = 0
        self.error: OSError | None = None  # a write that failed (a full disk): the run goes on, the caller says so

    def append(self, record: RunRecord) -> None:
        if self._fh is None:
            return
        try:
            self._fh.write(json.dumps(record.model_dump(mode="json", exclude_none=True), ensure_ascii=False) + "\n")
            self._fh.flush()  # in the kernel's hands: a killed process loses nothing written so far
            self.appended += 1
            if time.monotonic() - self._synced >= FSYNC_EVERY_S:
                os.fsync(self._fh.fileno())
                self._synced = time.monotonic()
        except OSError as exc:  # the records are still in memory and written when the run ends
            self.error = exc
            self.close()

    def close(self) -> None:
        fh, self._fh = self._fh, None
        if fh is not None:
            try:
                fh.flush()
                os.fsync(fh.fileno())
            except OSError as exc:
                self.error = self.error or exc
            finally:
                try:
                    fh.close()  # flushes what is left: a full disk refuses it again
                except OSError as exc:
                    self.error = self.error or exc


def read_records(path: Path) -> list[RunRecord]:
    """The records of a run.jsonl written as the run went: one per query id (the last one written), in file order.
    A last line that is not whole JSON (cut off by a kill) is ignored; a bad line before it is a ValueError."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    out: dict[str, RunRecord] = {}
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            if lineno == len(lines):
                break
            raise ValueError(f"{path}:{lineno}: not JSON") from None
        try:
            rec = RunRecord.model_validate(obj)
        except ValueError as exc:
            raise ValueError(f"{path}:{lineno}: {exc}") from exc
        out.pop(rec.query_id, None)
        out[rec.query_id] = rec
    return list(out.values())


def write_run_config(out_dir: Path, config: dict[str, Any]) -> Path:
    """``run_config.json`` replaced atomically (temporary file, fsync, rename)."""
    path = Path(out_dir) / RUN_CONFIG
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{RUN_CONFIG}.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(config, ensure_ascii=False, indent=1) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path


def read_run_config(out_dir: Path) -> dict[str, Any] | None:
    """The run's ``run_config.json``, or None when it has none (a run written before runs could be resumed)."""
    path = Path(out_dir) / RUN_CONFIG
    if not path.exists():
        return None
    loaded = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(loaded, dict):
        raise ValueError(f"{path}: not a JSON object")
    return loaded
