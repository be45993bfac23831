"""drivebench benchmarks: ``python -m benchmarks`` runs every ``benchmarks/bench_*.py``."""
