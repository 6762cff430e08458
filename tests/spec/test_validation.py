"""Bad input raises a typed error that names the field, the value and the fix (docs/rules.md, Settled here)."""

import pytest

from spec import Config, InvalidConfig, InvalidRequest, SpecError, add, initial_state


@pytest.mark.parametrize("field", ["num_blocks", "block_size", "max_num_seqs", "max_num_batched_tokens"])
@pytest.mark.parametrize("value", [0, -3])
def test_config_integers_must_be_positive(field, value):
    args = {"num_blocks": 4, "block_size": 2, "max_num_seqs": 2, "max_num_batched_tokens": 8, field: value}
    with pytest.raises(InvalidConfig, match=f"{field} must be >= 1, got {value}"):
        Config(**args)


@pytest.mark.parametrize("value", [2.0, "4", True, None])
def test_config_integers_must_be_ints(value):
    with pytest.raises(InvalidConfig, match="block_size must be an int"):
        Config(4, value, 2, 8)


def test_eos_must_be_int_or_none():
    with pytest.raises(InvalidConfig, match="eos must be an int"):
        Config(4, 2, 2, 8, eos="x")
    assert Config(4, 2, 2, 8, eos=0).eos == 0


def test_errors_share_one_base():
    assert issubclass(InvalidConfig, SpecError) and issubclass(InvalidRequest, SpecError)


def test_infeasible_request_is_rejected_at_add_with_the_numbers():
    state = initial_state(Config(2, 4, 8, 64))
    with pytest.raises(InvalidRequest) as e:
        add(state, "a3", 9, 4)
    msg = str(e.value)
    for part in ("'a3'", "12 tokens", "prompt_len 9", "max_tokens 4", "3 blocks", "size 4", "num_blocks is 2"):
        assert part in msg


def test_request_that_fits_exactly_is_accepted():
    state = add(initial_state(Config(3, 4, 8, 64)), "a1", 9, 4)
    assert state.waiting[0].seq_id == "a1"


def test_feasible_is_what_add_accepts_and_the_tightest_cache_runs_the_request_to_its_end():
    """spec/feasible.py (through rules.peak_blocks) states what rules.check_request demands: every generator, shrinker
    and proof keeps only what it accepts. A peak counted one token high in one of the two (from outside: the tests
    passed it) refuses the workloads the other accepts; so both, and the run itself, are held to each other."""
    from spec.feasible import feasible, tightest_num_blocks
    from spec.trace import Request, make_workload, run_workload

    for block_size in range(1, 5):
        for prompt_len in range(1, 7):
            for max_tokens in range(1, 5):
                r = Request("a", prompt_len, max_tokens)
                tight = tightest_num_blocks(block_size, [r])
                for num_blocks in range(max(tight - 1, 1), tight + 2):
                    config = Config(num_blocks, block_size, 1, prompt_len)
                    try:
                        add(initial_state(config), "a", prompt_len, max_tokens)
                        accepted = True
                    except InvalidRequest:
                        accepted = False
                    assert feasible(config, [r]) == accepted == (num_blocks >= tight), (config, r)
                run = run_workload(make_workload(Config(tight, block_size, 1, prompt_len), [r]))
                assert [len(s.output) for s in run.final.finished] == [max_tokens]
                assert max(s.after_schedule.blocks_used for s in run.steps) == tight, "the peak fills it exactly"


@pytest.mark.parametrize(("args", "match"), [
    ((1, 9, 4), "seq_id must be a str"),
    (("a", 0, 4), "prompt_len must be an int >= 1, got 0"),
    (("a", 2, 0), "max_tokens must be an int >= 1, got 0"),
    (("a", 2.5, 3), "prompt_len must be an int >= 1, got 2.5"),
])
def test_malformed_requests_name_the_field(args, match):
    with pytest.raises(InvalidRequest, match=match):
        add(initial_state(Config(100, 4, 8, 64)), *args)


def test_duplicate_ids_are_rejected():
    state = add(initial_state(Config(100, 4, 8, 64)), "a", 2, 2)
    with pytest.raises(InvalidRequest, match="already added"):
        add(state, "a", 3, 3)


def test_the_id_of_a_running_or_finished_request_is_taken_for_good():
    """Ids are unique over the scheduler's life: once running, and once finished, a request keeps its id."""
    from spec import schedule, update

    state = add(initial_state(Config(100, 4, 8, 64)), "a", 2, 1)
    state, _ = schedule(state)
    assert [s.seq_id for s in state.running] == ["a"]
    with pytest.raises(InvalidRequest, match="already added"):
        add(state, "a", 1, 1)
    state, finished = update(state, lambda seq_id, output: 7)
    assert [s.seq_id for s in finished] == [s.seq_id for s in state.finished] == ["a"]
    with pytest.raises(InvalidRequest, match="already added"):
        add(state, "a", 1, 1)
