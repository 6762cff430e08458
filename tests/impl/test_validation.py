"""impl rejects bad input with the spec's error class names and messages (docs/rules.md, Settled here)."""

import pytest

import impl
from impl import Scheduler, Sequence
from spec import errors as spec_errors
from spec.model import Config
from spec.rules import add, initial_state, schedule

GOOD = {"num_blocks": 4, "block_size": 2, "max_num_seqs": 2, "max_num_batched_tokens": 8}


def sample(seq: Sequence) -> int:
    return 1


def spec_error(call) -> spec_errors.SpecError:
    with pytest.raises(spec_errors.SpecError) as e:
        call()
    return e.value


def impl_error(call) -> impl.SchedulerError:
    with pytest.raises(impl.SchedulerError) as e:
        call()
    return e.value


def assert_same_error(got: Exception, want: Exception) -> None:
    assert type(got).__name__ == type(want).__name__
    assert str(got) == str(want)


@pytest.mark.parametrize("field", list(GOOD))
@pytest.mark.parametrize("value", [0, -3, 2.0, "4", True, None])
def test_config_errors_match_the_spec(field, value):
    args = {**GOOD, field: value}
    want = spec_error(lambda: Config(**args))
    got = impl_error(lambda: Scheduler(**args, sample_fn=sample))
    assert_same_error(got, want)
    assert field in str(got)


@pytest.mark.parametrize("eos", ["x", 1.0, True])
def test_eos_must_be_an_int_or_none(eos):
    assert_same_error(impl_error(lambda: Scheduler(**GOOD, sample_fn=sample, eos=eos)),
                      spec_error(lambda: Config(**GOOD, eos=eos)))


def test_eos_zero_and_none_are_accepted():
    assert Scheduler(**GOOD, sample_fn=sample, eos=0).eos == 0
    assert Scheduler(**GOOD, sample_fn=sample).eos is None


def test_sample_fn_must_be_callable():
    with pytest.raises(impl.InvalidConfig, match="sample_fn must be callable, got 3"):
        Scheduler(**GOOD, sample_fn=3)


def test_error_classes_share_one_base():
    for cls in (impl.InvalidConfig, impl.InvalidRequest, impl.ProtocolError):
        assert issubclass(cls, impl.SchedulerError)


@pytest.mark.parametrize("request_args", [
    (1, 3, 2), ("a", 0, 2), ("a", 3, 0), ("a", 2.5, 3), ("a", 3, None), ("a", True, 2),
    ("big", 8, 2), ("big", 7, 3), ("edge", 9, 1),
])
def test_request_errors_match_the_spec(request_args):
    config = Config(**GOOD)
    want = spec_error(lambda: add(initial_state(config), *request_args))
    sched = Scheduler(**GOOD, sample_fn=sample)
    got = impl_error(lambda: sched.add(Sequence(*request_args)))
    assert_same_error(got, want)
    assert not sched.waiting


def test_infeasible_request_message_names_the_numbers():
    sched = Scheduler(num_blocks=2, block_size=4, max_num_seqs=8, max_num_batched_tokens=64, sample_fn=sample)
    with pytest.raises(impl.InvalidRequest) as e:
        sched.add(Sequence("a3", 9, 4))
    for part in ("'a3'", "12 tokens", "prompt_len 9", "max_tokens 4", "3 blocks", "size 4", "num_blocks is 2"):
        assert part in str(e.value)


def test_request_that_fits_exactly_is_accepted():
    sched = Scheduler(num_blocks=3, block_size=4, max_num_seqs=8, max_num_batched_tokens=64, sample_fn=sample)
    sched.add(Sequence("a1", 9, 4))
    assert [q.seq_id for q in sched.waiting] == ["a1"]


def test_duplicate_ids_match_the_spec_even_after_finishing():
    sched = Scheduler(**GOOD, sample_fn=sample)
    sched.add(Sequence("a", 2, 1))
    sched.schedule()
    assert [q.seq_id for q in sched.update()] == ["a"]
    state = add(initial_state(Config(**GOOD)), "a", 2, 1)
    assert_same_error(impl_error(lambda: sched.add(Sequence("a", 3, 1))), spec_error(lambda: add(state, "a", 3, 1)))


def test_add_rejects_what_is_not_a_fresh_sequence():
    sched = Scheduler(**GOOD, sample_fn=sample)
    with pytest.raises(impl.InvalidRequest, match="add\\(\\) takes a Sequence, got 'a'"):
        sched.add("a")
    used = Sequence("u", 2, 2)
    used.output.append(5)
    with pytest.raises(impl.InvalidRequest, match="'u' is not new"):
        sched.add(used)


def test_schedule_twice_is_a_protocol_error_like_the_spec():
    sched = Scheduler(**GOOD, sample_fn=sample)
    sched.add(Sequence("a", 3, 2))
    sched.schedule()
    state, _ = schedule(add(initial_state(Config(**GOOD)), "a", 3, 2))
    assert_same_error(impl_error(sched.schedule), spec_error(lambda: schedule(state)))
    assert "{'a': 3}" in str(impl_error(sched.schedule))


def test_update_without_schedule_is_a_protocol_error_like_the_spec():
    from spec.rules import update

    sched = Scheduler(**GOOD, sample_fn=sample)
    state = initial_state(Config(**GOOD))
    assert_same_error(impl_error(sched.update), spec_error(lambda: update(state, lambda i, o: 1)))
    sched.schedule()
    sched.update()
    assert_same_error(impl_error(sched.update), spec_error(lambda: update(state, lambda i, o: 1)))
