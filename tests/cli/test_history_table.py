"""`check`'s step table of a counterexample that needs earlier runs shows the failing run: the history it records
runs first on the fresh copy the table is drawn from, as `replay` runs it (once, a passing run was drawn)."""

from pathlib import Path

import pytest

from conformance.cli import main

ROOT = Path(__file__).resolve().parents[2]
SECOND_ONLY = '''
_made = [0]
_plain_init = Scheduler.__init__


def _init(self, num_blocks, block_size, max_num_seqs, max_num_batched_tokens, sample_fn, eos=None):
    _made[0] += 1  # module state: from the second Scheduler of a process on, admit one sequence too many
    _plain_init(self, num_blocks, block_size, max_num_seqs + (_made[0] > 1), max_num_batched_tokens, sample_fn, eos)


Scheduler.__init__ = _init
'''


@pytest.mark.long
def test_the_table_of_a_history_counterexample_shows_it_failing(tmp_path, capsys):
    path = tmp_path / "p07_scheduler.py"
    path.write_text((ROOT / "impl" / "scheduler.py").read_text() + SECOND_ONLY)
    assert main(["check", str(path), "--profile", "quick", "--quiet"]) == 1
    out = capsys.readouterr().out
    table = out[out.index("\nFAIL  "):]
    assert "[H.history]" in table.splitlines()[1]
    marked = [line for line in table.splitlines() if line.startswith(">>")]
    assert marked and " same " not in marked[0], table  # the step the finding names differs from the spec there
