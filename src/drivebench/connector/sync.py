"""The connector's sync loop: a full crawl at start, then one step of the chosen strategy every interval.
A failed step (drive down, 5xx) is logged and counted; the previous index keeps serving, the next interval
retries.

A drive whose history was replaced (a reset or a seed: the change feed's ``epoch`` moved, or the feed refuses
our cursor with 410 or 409) is another drive: every grant the index holds may have been revoked. Whatever the
strategy, the index is withdrawn at once (recall answers 503, never from those grants) and everything is read
again; it serves again only once a full crawl has succeeded."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from drivebench.connector.index import ConnectorIndex, DocEntry, chunk_texts
from drivebench.evaluator.sync.drive_client import DriveClient, DriveError

log = logging.getLogger("drivebench.connector")
Strategy = Literal["changes", "mtime", "full"]
STRATEGIES: tuple[str, ...] = ("changes", "mtime", "full")
CONTENT_KINDS = frozenset({"created", "updated", "restored", "renamed", "moved", "untrashed"})
GONE_KINDS = frozenset({"trashed", "purged"})
# the feed refuses our cursor: from another epoch (410) or past its end (409, a drive that checks no epoch)
RESYNC_STATUSES = frozenset({409, 410})


@dataclass
class SyncStats:
    syncs: int = 0
    errors: int = 0
    last_sync_at: str | None = None
    last_error: str | None = None
    fetched: int = 0
    acl_refreshes: int = 0
    resyncs: int = 0  # times the drive's history was found replaced (the index withdrawn, then re-crawled)
    history: list[float] = field(default_factory=list)  # seconds per step (last 100)
    timeline: list[tuple[float, float]] = field(default_factory=list)  # (start, end) wall times of each step


class Syncer:
    def __init__(self, drive: DriveClient, strategy: Strategy, interval: float, index: ConnectorIndex) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy: one of {', '.join(STRATEGIES)}")
        self.drive, self.strategy, self.interval, self.index = drive, strategy, interval, index
        self.stats = SyncStats()
        self.docs: dict[str, DocEntry] = {}
        self.cursor = 0
        self.epoch: str | None = None  # the feed's history ``cursor`` belongs to (None: the drive says none)
        self.withdrawn = False  # the index answers nothing until a full crawl succeeds
        self.high_water = ""  # the newest modified_at seen (mtime)
        self._content: dict[str, list[str]] = {}  # version_id -> chunks (a re-crawl fetches only new versions)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ fetching
    def _entry(self, f: dict[str, Any], acl: set[str] | None = None) -> DocEntry:
        version = f["head"]["version_id"]
        chunks = self._content.get(version)
        if chunks is None:
            chunks = self._content[version] = chunk_texts(self.drive.content(f["doc_id"]), f["name"])
            self.stats.fetched += 1
        users = acl if acl is not None else self.drive.access(f["doc_id"])
        return DocEntry(f["doc_id"], f["name"], f["path"], version, f["modified_at"], chunks, frozenset(users))

    def crawl(self) -> None:
        """Everything: the listing, new versions' content, every ACL in one call. A reset that lands during
        the crawl leaves a mixed read, but the next step sees the new epoch and crawls again."""
        cursor, epoch = self.drive.feed_head()  # changes after this point are the next step's work
        if self.stats.syncs and epoch != self.epoch:
            self._withdraw("the drive's change feed has a new epoch (reset or reseeded)")
        files = [f for f in self.drive.files("/") if not f.get("trashed")]
        access = self.drive.access_all()
        self.stats.acl_refreshes += 1
        self.docs = {f["doc_id"]: self._entry(f, access.get(f["doc_id"], set())) for f in files}
        self.cursor, self.epoch = cursor, epoch
        self.high_water = max((f["modified_at"] for f in files), default="")

    def _withdraw(self, reason: str) -> None:
        """The drive is not the one indexed: answer nothing (the grants held may be revoked) until a crawl."""
        if not self.withdrawn:
            log.warning("%s: answering nothing until everything is read again", reason)
            self.stats.resyncs += 1
            self.withdrawn = True
        self.index.withdraw()

    def _resync(self, reason: str) -> None:
        self._withdraw(reason)
        self.crawl()

    def _refresh_all_acls(self) -> None:
        access = self.drive.access_all()
        self.stats.acl_refreshes += 1
        for d, e in list(self.docs.items()):
            self.docs[d] = DocEntry(
                e.doc_id, e.name, e.path, e.version_id, e.modified_at, e.chunks, frozenset(access.get(d, set()))
            )

    def _follow_changes(self) -> None:
        while True:
            try:
                page = self.drive.changes(self.cursor, epoch=self.epoch)
            except DriveError as exc:
                if exc.status in RESYNC_STATUSES:
                    self._resync(f"the drive refused the feed cursor (HTTP {exc.status})")
                    return
                raise
            if page.get("epoch") != self.epoch:  # a drive that ignores the epoch it is sent but says its own
                self._resync("the drive's change feed has a new epoch (reset or reseeded)")
                return
            refetch: set[str] = set()
            gone: set[str] = set()
            all_acls = recrawl = False
            for c in page["changes"]:
                doc = c.get("doc_id")
                if c["kind"] in CONTENT_KINDS and not doc:  # a folder moved or renamed: paths and ACLs below it
                    recrawl = True
                elif c["kind"] in CONTENT_KINDS and doc:
                    refetch.add(doc)
                    gone.discard(doc)
                elif c["kind"] in GONE_KINDS and doc:
                    gone.add(doc)
                    refetch.discard(doc)
                elif c["kind"] == "acl_changed":
                    if doc and c.get("folder_id") is None:
                        refetch.add(doc)
                    else:
                        all_acls = True
            if refetch:
                listing = {f["doc_id"]: f for f in self.drive.files("/") if not f.get("trashed")}
                for d in refetch:
                    if d in listing:
                        self.docs[d] = self._entry(listing[d])
                    else:
                        gone.add(d)
            for d in gone:
                self.docs.pop(d, None)
            if all_acls:
                self._refresh_all_acls()
            if recrawl:
                self.crawl()
                return
            self.cursor = page["next_cursor"]
            if not page["has_more"]:
                return

    def _by_mtime(self) -> None:
        # modification times say nothing of a reset (it goes back in time): the feed's epoch does
        if self.drive.feed_head()[1] != self.epoch:
            self._resync("the drive's change feed has a new epoch (reset or reseeded)")
            return
        files = {f["doc_id"]: f for f in self.drive.files("/") if not f.get("trashed")}
        for d in list(self.docs):
            if d not in files:
                del self.docs[d]
        for d, f in files.items():
            if d not in self.docs or f["modified_at"] > self.high_water:
                self.docs[d] = self._entry(f)  # content AND access, but only for what looks modified
        self.high_water = max((f["modified_at"] for f in files.values()), default=self.high_water)

    def step(self) -> None:
        t0, started = time.perf_counter(), time.time()
        try:
            if self.strategy == "full" or self.withdrawn:
                self.crawl()
            elif self.strategy == "mtime":
                self._by_mtime()
            else:
                self._follow_changes()
            self.index.replace(self.docs)
            self.withdrawn = False
        except DriveError as exc:
            self.stats.errors += 1
            self.stats.last_error = str(exc)
            serving = "still withdrawn" if self.withdrawn else "the previous index keeps serving"
            log.warning("sync failed (%s): %s", serving, exc)
            return
        seconds = time.perf_counter() - t0
        self.stats.syncs += 1
        self.stats.last_sync_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        self.stats.history = [*self.stats.history[-99:], seconds]
        self.stats.timeline = [*self.stats.timeline[-9999:], (started, time.time())]
        log.info("sync %d (%s): %d documents, %.3f s", self.stats.syncs, self.strategy, len(self.docs), seconds)

    # ------------------------------------------------------------------ the loop
    def start(self) -> None:
        """The first full crawl (before the server reports ready), then a step every interval."""
        self.crawl()
        self.index.replace(self.docs)
        self.stats.syncs += 1
        self.stats.last_sync_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        self._thread = threading.Thread(target=self._loop, name="connector-sync", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.step()
            except Exception as exc:  # never let the loop die: count it, keep serving, retry next interval
                self.stats.errors += 1
                self.stats.last_error = f"{type(exc).__name__}: {exc}"
                log.exception("sync step failed")

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
