"""A tiny benchmark run, so that `python -m bench` stays importable and its report stays well formed."""

from dataclasses import replace

import pytest

from bench.__main__ import main
from bench.report import render
from bench.suite import QUICK, measure
from bench.workloads import f_finish, w1_decode, w2_serving

pytestmark = pytest.mark.bench

TINY = replace(QUICK, repeats=1, f_repeats=1, memory_steps=20, spec_repeats=2)


@pytest.mark.parametrize("workload", [
    w1_decode(steps=5, spec_steps=1),
    replace(w2_serving(n=60, spec_steps=2, num_blocks=800), spec_start=30),
    f_finish(64, rounds=2, spec=True),
], ids=lambda w: w.name)
def test_tiny_measure_reports_every_column(workload):
    result = measure(workload, TINY)
    for name in ("floor", "impl", "spec"):
        assert result[name]["us_per_step"] > 0 and result[name]["ns_per_seq"] > 0
    assert result["impl_over_floor"] > 0 and result["spec_over_impl"] > 0
    text = render({"mode": "tiny", "repeats": 1, "f_repeats": 1, "spec_repeats": 1, "python": "3", "seconds": 0,
                   "results": [result]})
    assert workload.name in text


def test_cli_rejects_unknown_workload(capsys):
    assert main(["--quick", "--only", "W9"]) == 2
    assert "no workload matches" in capsys.readouterr().err
