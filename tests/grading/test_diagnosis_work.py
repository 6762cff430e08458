"""Which failing cases a grade's diagnosis reruns every known bug on: the smallest, then more while their cost
adds up to at most about a crowd of 512's, cost counted in the spec's steps as well as its sequences (a submission
failing only long runs of few requests cost 33 s of diagnosis, six runs of 2,049 steps for each known bug)."""

from conformance.grading.judge import DIAGNOSIS_WORK, diagnosed, diagnosis_work
from conformance.grading.observe import Case
from conformance.workloads import reach
from conformance.workloads.corpus import load_corpus


def failing(workloads):
    return [(Case(w.name, w, ()), {"steps": []}, {}) for w in workloads]


def test_long_runs_of_few_requests_are_not_rerun_on_every_known_bug_and_small_cases_are_six_at_a_time():
    long_runs = [reach.blocked_head(2**11 + 1), reach.self_preemption_run(2**11 + 1)] * 3
    assert diagnosed(failing(long_runs)) == []
    shorter = [reach.blocked_head(2**9 + 1), *long_runs]
    assert [c.workload for c, _, _ in diagnosed(failing(shorter))] == shorter[:1]
    vectors = [v.workload for v in load_corpus()[0][:6]]
    assert [c.workload for c, _, _ in diagnosed(failing(vectors))] == vectors


def test_the_budget_is_a_crowd_of_512s_work():
    crowd = next(c.workloads[0] for c in reach.cases("default") if c.name.startswith("crowd-512"))
    assert diagnosis_work(crowd) <= DIAGNOSIS_WORK < 2 * diagnosis_work(crowd)


def test_the_grading_docs_state_the_rule():
    from pathlib import Path

    text = " ".join((Path(__file__).resolve().parents[2] / "conformance/docs/grading.md").read_text().split())
    assert DIAGNOSIS_WORK == 2**21 and "at most 2^21, a case's work being its spec's steps times its requests " \
        "squared plus 2^11" in text
    w = reach.blocked_head(2**11 + 1)
    assert diagnosis_work(w) == 2052 * (len(w.requests) ** 2 + 2**11)
