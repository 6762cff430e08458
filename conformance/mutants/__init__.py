"""The catalog's known bugs as submissions, each built from the one place its bug is stated (build.py)."""
