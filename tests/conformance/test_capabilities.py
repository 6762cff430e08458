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


@pytest.mark.long
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


def test_a_cache_larger_in_tokens_than_the_engine_holds_is_left_out_whatever_its_blocks():
    from spec.model import Config
    from spec.trace import Request, make_workload

    caps = Capabilities(max_kv_tokens=2**20)
    fits, past = (make_workload(Config(n, b, 1, 8), [Request("a1", 1, 1)]) for n, b in ((2**10, 2**10), (2, 2**20)))
    assert caps.holds(fits) and not caps.holds(past)  # 2**20 tokens in 2**10 blocks; 2**21 tokens in only 2 blocks
    assert Capabilities(max_num_blocks=2**10).holds(past)  # a block count alone never saw that
    assert caps.limits() == "max_kv_tokens 1048576"


@pytest.mark.parametrize("kwargs, field", [({"max_prompt_len": 0}, "max_prompt_len"),
                                           ({"max_num_blocks": 2.5}, "max_num_blocks"),
                                           ({"max_kv_tokens": -1}, "max_kv_tokens"),
                                           ({"idle_schedule": 1}, "idle_schedule")])
def test_a_malformed_capability_is_refused_by_name(kwargs, field):
    with pytest.raises(CapabilityError, match=f"Capabilities.{field}"):
        Capabilities(**kwargs)
