"""``schedcheck merge OUT``: rebuild summary.csv and overview.md from graded entries (e.g. shards)."""

from conformance.grading.cli import add_merge_arguments as add_arguments
from conformance.grading.cli import merge_main as main

__all__ = ["add_arguments", "main"]
