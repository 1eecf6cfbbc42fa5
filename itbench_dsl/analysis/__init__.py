"""Self-validation and lint: the states a scenario's evaluator is tried on, its adversarial corpus, replayed solutions,
the warnings, leakage and duplicate detection (`checking.py` runs them)."""
