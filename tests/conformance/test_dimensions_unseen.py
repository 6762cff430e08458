"""Bugs past a threshold of the dimension table (tests/conformance/unseen/planted.py, README.md there): the reach
workloads find them.

Fast: the three that once passed `--profile default` fail on the reach workload aimed at their threshold and pass
just below it. Slow: through the CLI (which fixes PYTHONHASHSEED=0, so the hash-slot bug meets its collision),
quick fails every new UNSEEN bug and the SEED_ZERO one, and a PAST_QUICK bug passes quick and fails default.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.adapters import load_target
from conformance.checks.workload import check_workload
from conformance.workloads import reach
from tests.conformance.unseen.planted import PAST_QUICK, SEED_ZERO, UNSEEN, source

ROOT = Path(__file__).resolve().parents[2]
REACHED = ("impl_seqs_cap_256", "impl_crc32_slots", "impl_recursive_steps", "impl_block_ids_uint16",
           "impl_preempt_bytes", "impl_instance_arenas", "impl_registry_by_id", "impl_ids_truncated_64",
           "impl_ids_ascii", "impl_numeric_fcfs", "impl_fnv_handles", "impl_batch_pool", "impl_compaction_1024")


def planted(name: str, tmp_path: Path) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(source(name))
    return path


def findings(workload, path: Path) -> dict:
    return {k: f for k, f in check_workload(workload, load_target(str(path))).items() if f is not None}


def test_every_bug_aimed_at_the_table_is_registered():
    assert set(REACHED) <= set(UNSEEN) and not (set(PAST_QUICK) | set(SEED_ZERO)) & set(UNSEEN)
    readme = (Path(__file__).parent / "unseen" / "README.md").read_text()
    assert all(f"| `{name}` |" in readme for name in (*PAST_QUICK, *SEED_ZERO))


def test_max_num_seqs_capped_at_256_fails_the_crowd_past_it(tmp_path):
    path = planted("impl_seqs_cap_256", tmp_path)
    assert not findings(reach.crowd(256, 257), path)
    assert findings(reach.crowd(257, 258), path)["differential"].rule == "P2"


def test_a_crc32_slot_table_fails_on_ids_sharing_its_slot(tmp_path):
    path = planted("impl_crc32_slots", tmp_path)
    assert not findings(reach.order_workloads()[0], path)
    assert "differential" in findings(reach.collision_workload("crc32"), path)


def test_a_step_loop_recursing_per_step_fails_past_the_recursion_limit(tmp_path):
    path = planted("impl_recursive_steps", tmp_path)
    assert not findings(reach.idle_run(sys.getrecursionlimit() // 2), path)
    found = findings(reach.idle_run(reach.past_recursion(sys.getrecursionlimit())), path)
    assert found["hygiene"].rule == "H.raised" and "RecursionError" in found["hygiene"].message


def test_a_fit_asked_in_floating_point_fails_one_block_past_a_cache_of_2_53(tmp_path):
    path = planted("impl_float_fit", tmp_path)
    assert not findings(reach.one_block_over(2**53 - 1), path)
    found = findings(reach.one_block_over(2**53), path)
    assert found["differential"].rule == "P2.stop" and found["invariants"].rule == "I1"


def test_blocks_counted_in_floating_point_where_a_sequence_grows_by_preempting_fail_past_2_53(tmp_path):
    path = planted("impl_float_grow", tmp_path)
    assert not findings(reach.grow_by_preemption(2**53), path)  # exact: 2**53 is a double
    # none needed: it holds a block too few, which only the white box shows (the batches are the spec's)
    assert findings(reach.grow_by_preemption(2**53 + 1), path)["invariants"].rule == "I1"
    # two needed: it preempts itself after the other, and the batches differ
    assert findings(reach.grow_by_preemption(2**54 - 1), path)["differential"].rule == "P1.preempt"


def test_a_waiting_queue_bounded_at_4096_fails_the_largest_crowd(tmp_path):
    path = planted("impl_waiting_4096", tmp_path)
    assert not findings(reach.crowd(2**10 + 1, 2**12, 1), path)
    assert findings(reach.crowd(2**10 + 1, 2**12 + 1, 1), path)["differential"].rule == "P2"


def test_running_rebuilt_by_a_set_past_4096_finishing_fails_the_step_that_finishes_4097(tmp_path):
    path = planted("impl_bulk_finish_set", tmp_path)
    assert not findings(reach.finishing_together(2**12), path)
    assert findings(reach.finishing_together(2**12 + 1), path)["differential"].rule == "P1"


def test_a_full_table_recycling_a_finished_slot_fails_the_add_after_4096_finished(tmp_path):
    path = planted("st_recycle_full", tmp_path)
    assert not findings(reach.add_after_finished(2**12), path)  # the table holds all 4096: nothing to recycle
    assert findings(reach.add_after_finished(2**12 + 1), path)["invariants"].rule == "I4"  # r0 leaves finished


def cli(path: Path, profile: str, tmp_path: Path) -> str:
    out = tmp_path / f"{path.stem}.{profile}.json"
    subprocess.run([sys.executable, "-m", "conformance", "check", str(path), "--profile", profile, "--quiet",
                    "--json", str(out)], cwd=ROOT, capture_output=True, check=False)
    return str(json.loads(out.read_text())["verdict"])


@pytest.mark.slow
@pytest.mark.parametrize("name", REACHED + tuple(SEED_ZERO))
def test_quick_fails_every_bug_aimed_at_the_table(name, tmp_path):
    assert cli(planted(name, tmp_path), "quick", tmp_path) == "FAIL"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PAST_QUICK))
def test_default_fails_what_quick_cannot_reach(name, tmp_path):
    path = planted(name, tmp_path)
    assert cli(path, "quick", tmp_path) == "PASS"
    assert cli(path, "default", tmp_path) == "FAIL"
