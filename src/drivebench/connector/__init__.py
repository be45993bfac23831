"""A reference connector: the recall service a team builds on top of the drive, with ITS OWN index fed only
from the drive's public API (listing, content, change feed, ``/access``), serving the simulator's recall
shape. It exists to be measured by ``eval sync``: its strategies reproduce how real connectors sync
permissions, and the bugs that come with them.

* ``changes``: follows the change feed every interval (content kinds re-fetch the document, ``acl_changed``
  refreshes access): correct, lagging by about the interval;
* ``mtime``: incremental by modification time: re-fetches only documents whose ``modified_at`` moved, so an
  ACL-only change (a grant removed, a deny added, a parent folder's ACL) is never seen;
* ``full``: re-crawls everything every interval.

Whatever the strategy, a drive whose history was replaced (a reset: the change feed's epoch moved) withdraws the
index at once (recall answers 503) until a full crawl has read it again: never the grants of before.

Built on drivebench's own BM25 index (``search.index.lexical``) and parsers (``extract``), not on LlamaIndex or
LangChain: what is measured is the ACL sync, a framework adds a dependency tree and no ACL semantics. Every
chunk carries its document's ACL (the users who may preview it) as metadata and the filter runs before
scoring: the pattern to copy into a framework's retriever."""
