"""Self-check of the suite's detection power: style submissions, an AST mutator and a campaign runner."""
