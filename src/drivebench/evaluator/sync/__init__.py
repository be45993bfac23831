"""``eval sync``: how long a RAG system keeps answering from permissions the drive has changed, and whether
it reads them right. The drive (a simulator with an admin API) applies each change; the target is probed as
every affected principal until it reflects the change or a deadline passes."""
