"""drivebench: an enterprise cloud-drive simulator and a permission-aware RAG recall evaluator."""

__version__ = "0.1.0"
