"""The driver records what a submission did; a raising, hanging or ill-typed submission is a record, not a crash."""

from conformance import drivers
from conformance.adapters import SpecAdapter
from conformance.checks.checkers import hygiene
from conformance.drivers import run_workload
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
