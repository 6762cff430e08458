"""Capabilities an adapter declares: workloads larger than the engine holds are left out, said in a note."""

import pytest

from conformance.capabilities import Capabilities, CapabilityError
from conformance.suite import run

SMALL_ENGINE = '''
from conformance.adapters import SpecAdapter
from conformance.capabilities import Capabilities

class Small(SpecAdapter):
    """The spec behind an engine that keeps every prompt token in memory: it refuses prompts past 2**20."""
    {declaration}
    def add(self, seq_id, prompt_len, max_tokens):
        if prompt_len > 2**20:
            raise MemoryError(f"prompt of {{prompt_len}} tokens")
        super().add(seq_id, prompt_len, max_tokens)

def open_target(target):
    return Small
'''


@pytest.mark.parametrize("declared", [True, False])
def test_an_engine_that_cannot_hold_huge_prompts_is_not_blamed_for_them_when_it_says_so(tmp_path, declared):
    path = tmp_path / "small_adapter.py"
    path.write_text(SMALL_ENGINE.format(declaration="capabilities = Capabilities(max_prompt_len=2**20)"
                                        if declared else "pass"))
    # undeclared, only the hygiene check's status is asserted: its diagnosis (half the run) is not made
    report = run("spec", "quick", adapter=str(path), diagnose=declared)
    if declared:
        assert report.verdict == "PASS", report.summary()
        assert any("corpus vectors left out" in n and "max_prompt_len 1048576" in n for n in report.notes)
    else:
        assert report.checks["hygiene"].status == "fail"  # the MemoryError is a finding when not declared


@pytest.mark.parametrize("kwargs, field", [({"max_prompt_len": 0}, "max_prompt_len"),
                                           ({"max_num_blocks": 2.5}, "max_num_blocks"),
                                           ({"idle_schedule": 1}, "idle_schedule")])
def test_a_malformed_capability_is_refused_by_name(kwargs, field):
    with pytest.raises(CapabilityError, match=f"Capabilities.{field}"):
        Capabilities(**kwargs)
