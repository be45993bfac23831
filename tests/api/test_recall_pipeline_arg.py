"""``Simulator.recall(pipeline=...)``: another pipeline over the same index, through the same
mask and re-check; the server's retriever is untouched."""

from __future__ import annotations

import pytest

from drivebench.search.retrieval.pipelines import Retriever
from drivebench.simulator.backend import Simulator


def test_another_pipeline_answers_like_its_own_retriever(sim: Simulator) -> None:
    principal = sim.engine.role_principal("admin", None)
    own = sim.retriever
    for pipeline in ("bm25", "dense", "hybrid"):
        outcome = sim.recall(principal, "budget report", 5, pipeline=pipeline)
        mask = sim.visible_chunks(principal, sim.drive.clock.now())
        want = Retriever(sim.store, sim.embedder, pipeline).search("budget report", mask, 5)
        assert [(h.doc_id, h.chunk_id) for h in outcome.hits] == [(h.doc_id, h.chunk_id) for h in want]
    assert sim.retriever is own
    assert sim.retriever_for("bm25") is sim.retriever_for("bm25")  # made once
    with pytest.raises(ValueError, match="unknown pipeline"):
        sim.recall(principal, "budget", 5, pipeline="nope")
