"""Judge observed runs: pure checkers, probes, the per-workload pipeline, the state machine, the shrinker."""
