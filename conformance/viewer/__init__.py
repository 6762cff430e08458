"""Pictures of a run: the card's KV block strips and a self-contained HTML trace viewer."""
