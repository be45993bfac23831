"""What every part of drivebench reads and writes: the on-disk corpus format, eval sets and runs, the target
contract. Imports nothing else of drivebench, so the evaluator, the corpora and the simulator share it without
depending on each other."""
