"""Runs that put the simulator and the evaluator together: the fault comparison, the corpus difficulty audit,
building the packaged vectors."""
