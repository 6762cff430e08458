"""Deletes the Scheduler class. Expected: load_error naming the missing class."""
del Scheduler  # noqa: F821
