"""spec/faults.py: every catalog bug is one edit of spec/rules.py (or is explained), and the edits stay applicable."""

import difflib
import inspect

import pytest

import spec.rules
from conformance.catalog import BY_NAME as CATALOG
from spec import faults
from spec.bounded.execute import violations
from spec.model import Config
from spec.trace import Request, make_workload

# Two requests that preempt: r1 is preempted in step 2 and readmitted later.
PRESSURE = make_workload(Config(3, 2, 3, 4, 0), [Request("r0", 2, 3, 1), Request("r1", 2, 3, 1)])


def test_every_catalog_bug_is_a_fault_or_explained():
    assert set(faults.BY_NAME) | set(faults.NOT_EXPRESSIBLE) == set(CATALOG)
    assert not set(faults.BY_NAME) & set(faults.NOT_EXPRESSIBLE)


@pytest.mark.parametrize("name", sorted(faults.BY_NAME))
def test_a_fault_is_a_small_edit_that_changes_the_spec(name):
    source = faults.RULES_PATH.read_text()
    patched = faults.patched_source(name)
    assert patched != source
    diff = difflib.unified_diff(source.splitlines(), patched.splitlines(), lineterm="", n=0)
    changed = [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert 2 <= len(changed) <= 10, f"{name} changes {len(changed)} lines"
    module = faults.load(name)
    public = [n for n, f in vars(spec.rules).items() if inspect.isfunction(f) and f.__module__ == "spec.rules"]
    assert all(callable(getattr(module, n)) for n in public)
    assert module is not spec.rules and module.schedule is not spec.rules.schedule


def test_the_spec_itself_is_untouched_by_loading_a_fault():
    before = violations(spec.rules, PRESSURE, 10)
    faults.load("preempt_clears_output")
    assert before == {} and violations(spec.rules, PRESSURE, 10) == {}
    assert violations(faults.load("preempt_clears_output"), PRESSURE, 10)["OUT"]


def test_a_fault_whose_anchor_is_gone_names_the_fault_and_the_anchor():
    old, new = "waiting=(requeued,) + state.waiting,", "waiting=(requeued, *state.waiting),"
    source = faults.RULES_PATH.read_text().replace(old, new)
    with pytest.raises(faults.FaultError, match=r"fault 'preempt_to_tail': anchor 'waiting=\(requeued,\) \+ "):
        faults.patched_source("preempt_to_tail", source)


def test_unknown_and_inexpressible_faults_say_so():
    with pytest.raises(faults.FaultError, match="unknown; known faults: blocks_by_num_tokens"):
        faults.patched_source("no_such_fault")
    with pytest.raises(faults.FaultError, match="not expressible"):
        faults.patched_source("batch_not_copied")
