"""Where workloads come from: Hypothesis strategies, bounded-exhaustive scopes and the frozen corpus (data/)."""
