"""The submission imports the reference model. Expected: load_error, naming the refused import."""
from spec.rules import schedule as _reference_schedule  # noqa: F401
