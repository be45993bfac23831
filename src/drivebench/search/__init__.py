"""Text into an index and queries into ranked chunks: ingestion, the chunk store (lexical postings and vectors),
embedders, vector stores and retrieval pipelines. Knows the drive's records, never who may see them: callers
pass the permitted mask."""
