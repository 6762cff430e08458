"""Turn findings into reports: the JSON report and the text tables and replay files of counterexamples."""
