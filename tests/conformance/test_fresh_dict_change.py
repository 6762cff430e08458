"""The fresh-dict probe changes the returned dict the ways its owner may, in turn: as many other ids, emptied, every
count changed (spec.loop changed_by_caller). It only emptied it before, so a scheduler that reads the counts
from the dict it handed out, unless the caller changed its length, passed check and got 100 from grade
(impl_handed_values, written from outside)."""

from __future__ import annotations

from pathlib import Path

from conformance.adapters import load_target
from conformance.checks import probes
from spec.loop import STRAY, changed_by_caller
from spec.model import Config
from spec.trace import Request, make_workload
from tests.conformance.unseen.planted import source

W = make_workload(Config(8, 2, 2, 8), [Request("a1", 3, 2), Request("a2", 2, 2)])


def test_a_scheduler_reading_the_counts_it_handed_out_is_found(tmp_path: Path) -> None:
    path = tmp_path / "handed.py"
    path.write_text(source("impl_handed_values"))
    [found] = probes.fresh_dict(W, load_target(str(path)))
    assert found.rule == "H.fresh_dict" and "writes other ids" in found.message
    impl = Path(__file__).resolve().parents[2] / "impl" / "scheduler.py"
    assert probes.fresh_dict(W, load_target(str(impl))) == []


def test_the_caller_changes_the_dict_each_way_in_turn() -> None:
    """Step 1: other ids, as many, each count one more; step 2: empty; step 3: the same ids, each count one more.
    A reader of its length alone, or of the counts of the ids still there, met only one of these (from outside)."""
    class Lying(dict):  # the change goes through dict's own methods: these are never called
        def clear(self) -> None:
            raise AssertionError("called")

        def __setitem__(self, key: str, value: int) -> None:
            raise AssertionError("called")

    known = {"a1", f"{STRAY}0"}
    got = []
    for step in (1, 2, 3, 4):
        batch = Lying({"a1": 3, f"{STRAY}0": 2})
        changed_by_caller(batch, known, step)
        got.append(dict(batch))
    assert len(got[0]) == 2 and not known & set(got[0]) and sorted(got[0].values()) == [3, 4]
    assert got[1] == {} and got[2] == {"a1": 4, f"{STRAY}0": 3} and got[3] == got[0]


def test_a_kept_dict_subclass_is_changed_by_both_commands(tmp_path: Path) -> None:
    """check's driver changed a returned dict subclass, the sandbox child only an exact dict: a scheduler that kept
    and read the subclass it returned failed check and passed grade's probe."""
    import importlib.util
    import json

    from conformance.sandbox.child import MUTATE, drive
    from spec.trace import workload_to_json

    text = source("impl_handed_counts").replace("self._handed = batch.copy()", "self._handed = Handed(batch)")
    path = tmp_path / "handed_subclass.py"
    path.write_text(text + "\n\nclass Handed(dict):\n    pass\n")
    w = make_workload(Config(8, 2, 2, 8), [Request("a1", 3, 4), Request("a2", 2, 4)])  # counts change in step 3
    assert [f.rule for f in probes.fresh_dict(w, load_target(str(path)))] == ["H.fresh_dict"]
    spec = importlib.util.spec_from_file_location("handed_subclass", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    runs = [[json.loads(s) for s in drive(module, workload_to_json(w), 64, False, lambda p=p: p)["steps"]]
            for p in (0, MUTATE)]
    assert [s["sampled"] for s in runs[0]] != [s.get("sampled") for s in runs[1]]
