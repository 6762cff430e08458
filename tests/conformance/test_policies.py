"""--policy through the whole suite: every source of workloads is judged under it, the diagnosis names a
policy difference as one cause, and traces, replays and rerun hints keep the policy."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.adapters import LoadError
from conformance.capabilities import Capabilities
from conformance.catalog import suspects
from conformance.cli import main
from conformance.drivers import run_workload
from conformance.suite import run
from spec.model import Config, Policy, all_policies
from spec.trace import Request, make_workload

V1_MUTANT = "conformance/mutants/no_admission_after_preemption.py"  # the card with vLLM v1's first difference only
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def v1_scheduler(tmp_path):
    """An adapter whose engine is the spec under vllm-v1: a scheduler that follows vLLM v1's rules."""
    path = tmp_path / "v1_adapter.py"
    path.write_text("from dataclasses import replace\nfrom conformance.adapters import SpecAdapter\n"
                    "from spec.model import Policy\n"
                    "def open_target(target):\n"
                    "    v1 = Policy('vllm-v1')\n"
                    "    return lambda config, sample: SpecAdapter(replace(config, policy=v1), sample)\n")
    return str(path)


@pytest.mark.long
def test_a_scheduler_that_follows_vllm_v1_passes_every_check_under_vllm_v1(v1_scheduler):
    # a source that forgot the policy would judge its workloads by the card's rules, and this would fail
    report = run("spec", "quick", adapter=v1_scheduler, policy=Policy("vllm-v1"))
    assert report.verdict == "PASS", report.summary()
    assert report.checks["golden"].runs == 5  # the card's worked cases schedule alike under both policies
    assert report.to_json()["policy"] == "vllm-v1"


@pytest.mark.long
def test_under_the_card_a_vllm_v1_scheduler_fails_with_one_cause_its_policy(v1_scheduler):
    report = run("spec", "quick", adapter=v1_scheduler)
    assert report.verdict == "FAIL"
    d = report.diagnosis
    assert d is not None and d["matches"] == ["policy:vllm-v1"] and len(d["causes"]) == 1, d["lines"]
    assert "--policy vllm-v1" in "\n".join(d["lines"])  # the hint says how to check it under its own policy
    assert max(cx.size["requests"] for cx in report.counterexamples) <= 3


@pytest.mark.long
def test_half_of_vllm_v1_is_told_apart_from_the_policy():
    # no admission after a preemption, but without vllm-v1's whole-sequence gate: the catalog bug, not the policy
    report = run(V1_MUTANT, "quick")
    d = report.diagnosis
    assert d is not None and d["matches"] == ["no_admission_after_preemption"] and len(d["causes"]) == 1, d["lines"]
    assert run(V1_MUTANT, "quick", policy=Policy("vllm-v1")).verdict == "FAIL"  # the gate is missing under vllm-v1


@pytest.mark.long
def test_a_card_scheduler_under_vllm_v1_is_diagnosed_as_following_the_card(capsys):
    assert main(["check", "impl", "--policy", "vllm-v1", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "policy=vllm-v1" in out
    assert "diagnosis: behaves like policy:p07" in out and "causes: 1," in out
    assert "\n  1. policy:p07: " in out  # every failing vector is put down to the card's policy, tried as a suspect
    assert re.search(r"features: \d+ fail, from 1 cause", out) and "  FAIL chunked-prefill" not in out


@pytest.mark.long
def test_the_trace_keeps_its_policy_and_the_rerun_hints_carry_it(tmp_path, capsys):
    adapter = str(ROOT / "examples/vllm_style/adapter.py")
    engine = str(ROOT / "examples/vllm_style/engine.py")
    out = tmp_path / "t"
    assert main(["check", engine, "--adapter", adapter, "--policy", "vllm-v1", "--quiet",
                 "--trace-dir", str(out)]) == 1
    printed = capsys.readouterr().out
    assert f"--adapter {adapter} --policy vllm-v1)" in printed
    trace = out / "0001_differential.json"
    written = json.loads(trace.read_text())
    assert written["workload"]["config"]["policy"] == "vllm-v1"
    # replay judges by the trace's policy unless told otherwise
    assert main(["replay", str(trace), engine, "--adapter", adapter]) == 1
    assert main(["replay", str(trace), engine, "--adapter", adapter, "--policy", "p07"]) == 0
    # the pytest file of an adapter target replays through the adapter and fails the same way
    test = out / "0001_differential_test.py"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1 and written["finding"]["rule"] in done.stdout, done.stdout + done.stderr


class _Strict:
    """A card scheduler (the spec) behind an engine contract that forbids schedule() with nothing to do."""

    def __init__(self, config, sample):
        from conformance.adapters import SpecAdapter
        self.inner, self.live = SpecAdapter(config, sample), set()

    def add(self, seq_id, prompt_len, max_tokens):
        self.live.add(seq_id)
        self.inner.add(seq_id, prompt_len, max_tokens)

    def schedule(self):
        assert self.live, "schedule() with nothing to do"
        return self.inner.schedule()

    def update(self):
        done = self.inner.update()
        self.live -= set(done)
        return done

    def outputs(self):
        return self.inner.outputs()

    def snapshot(self):
        return self.inner.snapshot()


class _Declared(_Strict):
    capabilities = Capabilities(idle_schedule=False)


@pytest.mark.parametrize("cls, ok", [(_Strict, False), (_Declared, True)])
def test_an_engine_that_must_not_be_called_idle_is_not_when_its_adapter_says_so(cls, ok):
    w = make_workload(Config(8, 2, 2, 8), [Request("a1", 2, 2), Request("a2", 2, 2, arrival=6)])
    observed = run_workload(w, cls, white_box=True)
    assert (observed["error"] is None) is ok, observed["error"]
    if ok:
        assert [s["step"] for s in observed["steps"] if s.get("idle")] == [3, 4, 5]


def test_a_malformed_capability_is_a_load_error_naming_it(tmp_path, capsys):
    path = tmp_path / "adapter.py"
    path.write_text("from conformance.adapters import SpecAdapter\n"
                    "class A(SpecAdapter):\n    capabilities = {'idle_schedule': False}\n"
                    "def open_target(target):\n    return A\n")
    assert main(["check", "spec", "--adapter", str(path), "--quiet"]) == 2
    assert "A.capabilities must be a conformance.capabilities.Capabilities, got dict" in capsys.readouterr().err


STRICT_ADAPTER = '''
from conformance.adapters import SpecAdapter
from conformance.capabilities import Capabilities

class Strict(SpecAdapter):
    """The spec behind an engine contract that asserts it is never asked to schedule with nothing to do."""
    {declaration}
    def __init__(self, config, sample):
        super().__init__(config, sample)
        self.live = set()

    def add(self, seq_id, prompt_len, max_tokens):
        super().add(seq_id, prompt_len, max_tokens)
        self.live.add(seq_id)

    def schedule(self):
        assert self.live, "schedule() with nothing to do"
        return super().schedule()

    def update(self):
        done = super().update()
        self.live -= set(done)
        return done

def open_target(target):
    return Strict
'''


@pytest.mark.long
@pytest.mark.parametrize("declared", [True, False])
def test_every_driver_honours_an_engine_that_must_not_be_called_idle(tmp_path, declared):
    # the workload driver, the interleaved instances and the lockstep machine all make idle calls otherwise
    path = tmp_path / "strict_adapter.py"
    path.write_text(STRICT_ADAPTER.format(declaration="capabilities = Capabilities(idle_schedule=False)"
                                          if declared else "pass"))
    report = run("spec", "quick", adapter=str(path))
    if declared:
        assert report.verdict == "PASS", report.summary()
    else:  # the machine calls no engine before its first add() (no workload has no request): it meets the
        # refusal once every request of a run has finished, in the default profile's second stage
        assert report.checks["hygiene"].status == "fail", report.summary()
        from conformance.adapters import load_target
        from conformance.checks.machine import run_machine
        found = run_machine(load_target("spec", str(path)), 45, 30)
        assert found is not None and found.requests, found


def test_the_shrinker_keeps_the_policy_while_it_shrinks_the_config():
    from conformance.adapters import load_target
    from conformance.checks.shrink import shrink
    from conformance.checks.workload import predicate

    w = make_workload(Config(4, 2, 4, 5, policy=Policy("vllm-v1")),
                      [Request("a1", 1, 3), Request("a2", 3, 3), Request("a3", 2, 2, arrival=5)])
    fails = predicate("differential", load_target("impl"), False)  # the card's scheduler, judged by vllm-v1
    finding = fails(w)
    assert finding is not None and finding.rule == "P2.policy"
    small, _ = shrink(w, finding, fails)
    assert small.config.policy == Policy("vllm-v1")
    # a candidate config that lost the policy would pass (impl follows the card) and never be kept
    assert small.config.max_num_seqs < 4 and len(small.requests) == 2, small


@pytest.mark.parametrize("policy", all_policies(), ids=str)
def test_no_cause_tried_under_a_policy_hints_at_that_policy(policy):
    """A hint to check under the policy already in force tells the user nothing (a run under vllm-v1 was told
    "check under --policy vllm-v1"); every other policy is tried, by a cause of its own or a bug that equals it."""
    said = [b.name for b in suspects(policy) if re.search(rf"--policy {re.escape(str(policy))}(?![:\w])", b.hint)]
    assert said == []
    tried = {b.policy for b in suspects(policy)}
    assert tried - {None} == set(all_policies()) - {policy}


def engine_adapter(tmp_path, settings: str, engine: str = "vllm-v1", follows: str = "vllm-v1") -> str:
    """An adapter over the spec under policy `follows` that reports its engine as `engine` with `settings`."""
    path = tmp_path / "engine_adapter.py"
    path.write_text("from dataclasses import replace\nfrom conformance.adapters import SpecAdapter\n"
                    "from conformance.capabilities import Capabilities\nfrom spec.model import Policy\n"
                    "class Engine(SpecAdapter):\n"
                    f"    capabilities = Capabilities(engine={engine!r}, engine_settings={settings})\n"
                    "def open_target(target):\n"
                    f"    rules = Policy.parse({follows!r})\n"
                    "    return lambda config, sample: Engine(replace(config, policy=rules), sample)\n")
    return str(path)


@pytest.mark.long
def test_an_engine_that_reports_its_configuration_is_judged_by_the_policy_that_matches_it(tmp_path):
    chunk = "vllm-v1:reserve_full_isl=false"
    report = run("spec", "quick", adapter=engine_adapter(tmp_path, '(("reserve_full_isl", False),)', follows=chunk))
    assert report.verdict == "PASS", report.summary()
    assert str(report.policy) == chunk and report.to_json()["policy"] == chunk
    assert f"judged under policy {chunk}, the one the adapter reports" in "\n".join(report.notes)
    asked = run("spec", "quick", adapter=engine_adapter(tmp_path, "()"), policy=Policy())  # --policy p07
    assert asked.policy == Policy() and asked.verdict == "FAIL"  # judged as asked, and the note says what it reports
    assert "the adapter reports that its engine, as configured, follows vllm-v1" in "\n".join(asked.notes)


@pytest.mark.parametrize("engine, settings, said", [
    ("vllm-v1", '(("reserve_full_isl", True), ("prefix_caching", True))',
     "no policy matches the engine: it reports prefix_caching=True, a setting policy vllm-v1 does not know"),
    ("sglang", "()", "the adapter reports an engine that follows 'sglang', and no policy states its rules"),
    ("vllm-v1", '(("reserve_full_isl", 0),)', "the engine's setting reserve_full_isl must be True or False, got 0")])
def test_an_engine_no_policy_matches_is_a_load_error_naming_the_setting(tmp_path, engine, settings, said):
    with pytest.raises(LoadError, match=re.escape(said)):
        run("spec", "quick", adapter=engine_adapter(tmp_path, settings, engine))
    assert main(["check", "spec", "--adapter", engine_adapter(tmp_path, settings, engine), "--quiet"]) == 2
