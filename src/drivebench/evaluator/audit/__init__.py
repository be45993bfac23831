"""Security audits of a corpus: who can reach sensitive documents, and through which grant."""
