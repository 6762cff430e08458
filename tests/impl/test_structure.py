"""impl's promises beyond the batches: fresh results, arrivals mid-step, linear finishing, stdlib only,
and a differential check that catches planted bugs in a copy of impl."""

import ast
import sys
import types
from collections import deque
from pathlib import Path

import pytest
from hypothesis import Phase, given, settings

import impl.scheduler
from impl import Scheduler, Sequence, SequenceStatus
from spec.model import Config
from spec.rules import add, initial_state, schedule, update
from spec.trace import snapshot_to_json
from tests.conftest import examples
from tests.impl.lockstep import impl_snapshot, lockstep
from tests.impl.strategies import edge_workloads

SOURCE = Path(impl.scheduler.__file__).read_text()


def counter_sample(seq: Sequence) -> int:
    return 100 + len(seq.output)


def test_exports_the_canonical_api():
    assert [m.name for m in SequenceStatus] == ["WAITING", "RUNNING", "FINISHED"]
    seq = Sequence("a", 3, 2)
    assert (seq.output, seq.num_computed, seq.num_blocks, seq.status) == ([], 0, 0, SequenceStatus.WAITING)
    assert seq.num_tokens == 3
    with pytest.raises(AttributeError):
        seq.num_tokens = 4
    sched = Scheduler(num_blocks=1, block_size=1, max_num_seqs=1, max_num_batched_tokens=1, sample_fn=counter_sample,
                      eos=None)
    assert isinstance(sched.waiting, deque) and type(sched.running) is list and type(sched.finished) is list
    assert (sched.blocks_used, sched.num_preemptions) == (0, 0)


def test_imports_only_the_standard_library():
    """Graders copy impl/scheduler.py as a submission into a sandbox without the project's packages."""
    tree = ast.parse(SOURCE)
    names = {a.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    names |= {node.module.split(".")[0] for node in ast.walk(tree)
              if isinstance(node, ast.ImportFrom) and node.module}
    assert names and names <= set(sys.stdlib_module_names) | {"__future__"}, names


def test_schedule_returns_a_fresh_dict_that_update_ignores():
    sched = Scheduler(num_blocks=8, block_size=2, max_num_seqs=4, max_num_batched_tokens=6, sample_fn=counter_sample)
    for seq_id in ("a", "b"):
        sched.add(Sequence(seq_id, 4, 3))
    first = sched.schedule()
    assert first == {"a": 4, "b": 2}
    first.clear()
    first["a"] = 99
    sched.update()
    assert [(q.num_computed, q.output) for q in sched.running] == [(4, [100]), (2, [])]
    second = sched.schedule()
    assert second is not first and second == {"a": 1, "b": 2}


def test_request_added_between_schedule_and_update_joins_the_tail_like_the_spec():
    config = Config(num_blocks=8, block_size=2, max_num_seqs=4, max_num_batched_tokens=4)
    sched = Scheduler(num_blocks=8, block_size=2, max_num_seqs=4, max_num_batched_tokens=4, sample_fn=counter_sample)
    state = add(initial_state(config), "a", 3, 2)
    sched.add(Sequence("a", 3, 2))
    state, _ = schedule(state)
    sched.schedule()
    state = add(state, "b", 2, 1)
    sched.add(Sequence("b", 2, 1))
    assert impl_snapshot(sched) == snapshot_to_json(state)
    state, _ = update(state, lambda seq_id, output: 100 + len(output))
    sched.update()
    state, batch = schedule(state)
    assert list(sched.schedule().items()) == list(batch) == [("a", 1), ("b", 2)]
    assert impl_snapshot(sched) == snapshot_to_json(state)


class NoSearchList(list):
    """A running list that fails on every operation that searches or shifts it per element."""

    def _refuse(self, *args, **kwargs):
        raise AssertionError("running was searched or shifted per sequence")

    remove = index = count = insert = __contains__ = __delitem__ = _refuse

    def pop(self, *args):
        if args and args[0] not in (-1, len(self) - 1):
            self._refuse()
        return super().pop(*args)


@pytest.mark.parametrize("n", [64, 4096])
def test_finishing_many_running_sequences_needs_no_search(n):
    """k of n finish in one update: one pass over the batch, never list.remove / index / del per sequence."""
    sched = Scheduler(num_blocks=8 * n, block_size=1, max_num_seqs=n, max_num_batched_tokens=2 * n,
                      sample_fn=counter_sample)
    for i in range(n):
        sched.add(Sequence(f"s{i}", 2, 2 if i % 3 else 5))
    sched.schedule()
    sched.update()
    sched.running = NoSearchList(sched.running)
    spy = sched.running
    sched.schedule()
    done = sched.update()
    assert [q.seq_id for q in done] == [f"s{i}" for i in range(n) if i % 3]
    assert sched.running is spy
    assert [q.seq_id for q in sched.running] == [f"s{i}" for i in range(0, n, 3)]
    assert sched.blocks_used == sum(q.num_blocks for q in sched.running) == 3 * len(sched.running)


PLANTED_BUGS = {
    "preempted to the tail": ("waiting.appendleft(victim)", "waiting.append(victim)"),
    "output cleared on preemption": ("victim.num_computed = 0", "victim.num_computed = victim.output.clear() or 0"),
    "max_num_seqs off by one": ("len(running) < limit", "len(running) <= limit"),
    "finish one token late": ("len(output) >= seq.max_tokens", "len(output) > seq.max_tokens"),
    "eos ignored": ("token == eos or ", ""),
    "growth check one block late": ("if tokens > seq.num_blocks * size:", "if tokens > (seq.num_blocks + 1) * size:"),
}


def load_with(old: str, new: str) -> types.ModuleType:
    """A copy of impl/scheduler.py with one change, loaded as a fresh module (as graders load a submission)."""
    assert SOURCE.count(old) == 1, f"planted bug anchor {old!r} not found exactly once in impl/scheduler.py"
    module = types.ModuleType("p07_scheduler")
    module.__dict__["__name__"] = "p07_scheduler"
    exec(compile(SOURCE.replace(old, new), "p07_scheduler.py", "exec"), module.__dict__)
    return module


def test_unchanged_copy_passes_the_differential_check():
    module = load_with("waiting.appendleft(victim)", "waiting.appendleft(victim)")

    @settings(max_examples=examples(100))
    @given(edge_workloads())
    def check(workload):
        problem, _ = lockstep(workload, module)
        assert problem is None, problem

    check()


@pytest.mark.parametrize("bug", list(PLANTED_BUGS))
def test_differential_check_catches_planted_bug(bug):
    module = load_with(*PLANTED_BUGS[bug])

    @settings(max_examples=examples(300), phases=[Phase.generate])  # no shrinking: finding it is the point
    @given(edge_workloads())
    def check(workload):
        problem, _ = lockstep(workload, module)
        assert problem is None, problem

    with pytest.raises(AssertionError, match=r"step \d+ "):
        check()
