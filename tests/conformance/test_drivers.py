"""The driver records what a submission did; a raising, hanging or ill-typed submission is a record, not a crash."""

from conformance import drivers
from conformance.adapters import SpecAdapter
from conformance.checks.checkers import hygiene, liveness
from conformance.drivers import run_workload
from spec.loop import STALL_STEPS
from spec.model import Config
from spec.trace import Request, make_workload

W = make_workload(Config(4, 2, 2, 4), [Request("a1", 3, 2), Request("a2", 1, 1, arrival=2)])


class Raising(SpecAdapter):
    def update(self):
        raise KeyError("a1")


class NotADict(SpecAdapter):
    def schedule(self):
        super().schedule()
        return [("a1", 3)]


class Hanging(SpecAdapter):
    def schedule(self):
        while True:
            pass


def test_observed_trace_is_plain_data_with_arrivals_sample_calls_and_outputs():
    obs = run_workload(W, SpecAdapter)
    assert obs["stop"] == "done" and obs["error"] is None
    assert [s["added"] for s in obs["steps"]][:2] == [["a1"], ["a2"]]
    assert obs["steps"][0]["sampled"] == [["a1", 0, 100]]
    assert obs["outputs"] == {"a1": [100, 101], "a2": [200]}


def test_an_exception_from_the_submission_becomes_a_hygiene_finding():
    obs = run_workload(W, Raising)
    assert obs["error"]["kind"] == "KeyError" and obs["error"]["call"] == "update"
    assert hygiene(W, obs)[0].rule == "H.raised"


def test_a_result_that_is_not_a_dict_is_named():
    obs = run_workload(W, NotADict)
    [f] = hygiene(W, obs)
    assert f.rule == "H.result_type" and "list" in f.message


def test_a_hanging_submission_is_stopped(monkeypatch):
    monkeypatch.setattr(drivers, "RUN_SECONDS", 0.2)
    obs = run_workload(W, Hanging)
    assert hygiene(W, obs)[0].rule == "H.timeout"


def test_sampled_tokens_are_fresh_int_objects_so_identity_checks_fail():
    eos = 10**6 + 3
    w = make_workload(Config(4, 2, 2, 4, eos), [Request("a1", 1, 3)], base={"a1": 10**6}, eos_at={"a1": [1]})
    seen = []
    recorder = drivers.Recorder(w)
    for output in ((), (10**6,)):
        seen.append(recorder("a1", output))
    assert seen == [10**6, eos]
    assert seen[1] is not w.config.eos and seen[1] is not w.sample.eos
    assert drivers.fresh_int(2**60) == 2**60 and drivers.fresh_int(2**60) is not drivers.fresh_int(2**60)


def test_a_run_whose_liveness_bound_is_astronomical_stops_at_the_step_cap():
    """A scheduler that never finishes a 2**53-token prompt is a hang found in bounded time."""
    w = make_workload(Config(2, 2**53, 1, 2**53), [Request("a1", 2**53, 1)])

    class Busy(SpecAdapter):  # schedules a token every step and never finishes
        def schedule(self):
            return {"a1": 1}

        def update(self):
            return []

    assert not drivers.runnable(make_workload(Config(2, 2**53, 1, 4), [Request("a1", 2**53, 1)]))
    assert drivers.runnable(w) and drivers.step_cap(w, 2**60) == drivers.STEP_CAP + 2
    observed = run_workload(w, Busy, white_box=False)
    assert observed["error"]["kind"] == "CallTimeout" and len(observed["steps"]) == drivers.STEP_CAP + 2
    assert "endless loop" in observed["error"]["message"]


def test_a_stalled_run_stops_early_and_is_a_progress_finding():
    w = make_workload(Config(2, 2**53, 1, 2**53), [Request("a1", 2**53, 1)])

    class Idle(SpecAdapter):
        def schedule(self):
            return {}

        def update(self):
            return []

    observed = run_workload(w, Idle, white_box=False)
    assert observed["stop"] == "bound" and len(observed["steps"]) == STALL_STEPS
    assert liveness(w, observed)[0].rule == "L.progress"
