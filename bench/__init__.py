"""Benchmarks of impl against the floor (the least work the API requires) and the spec; run `python -m bench`."""
