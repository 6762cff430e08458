"""A Hypothesis state machine that drives the submission and the spec in lockstep.

Rules: ``add_request`` (a feasible request joins the waiting tail) and ``step``
(schedule() then update() on both, compared call by call); the invariant after
every rule checks I1, I3 and I6 on the submission's white-box state. The machine
records what it did as a workload, so a failure becomes an ordinary workload that
the shrinker and the reports handle like any other.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import Flaky
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from conformance.adapters import Factory, SchedulerUnderTest, SpecAdapter
from conformance.capabilities import capabilities_of
from conformance.checks.whitebox import state_violations
from conformance.drivers import batch_pairs, batch_problem, finished_ids, raised
from conformance.limits import RAISED, RUN_SECONDS, CallTimeout, time_limit
from spec.model import DEFAULT_POLICY, Config, Policy, State
from spec.rules import add, initial_state, schedule, update
from spec.trace import Request, Workload, make_workload

# The machine's draws come from this seed alone. Left to `derandomize`, Hypothesis would seed from a digest of
# the machine's source, so any edit to this file (or a Hypothesis upgrade) would silently change which runs are
# tried and which bugs the stateful check finds. This is that digest as it stood when the seed was pinned.
MACHINE_SEED = int("2588473145796923148476627830878360195687170613277880912579810797171238603458922346908437881"
                   "2596663744071773450979145")


class Divergence(AssertionError):
    """The submission and the spec disagreed at a call."""


def _sample(seq_id: str, output: tuple[int, ...]) -> int:
    """The machine's model: a{i} samples 100 * i + len(output), as make_workload's default bases."""
    return 100 * int(seq_id[1:]) + len(output)


configs = st.builds(Config, num_blocks=st.integers(1, 10), block_size=st.integers(1, 4),
                    max_num_seqs=st.integers(1, 4), max_num_batched_tokens=st.integers(1, 12))


def lockstep_machine(factory: Factory, white_box: bool, found: list[Workload],
                     policy: Policy = DEFAULT_POLICY, ran: list[tuple[Workload, int]] | None = None
                     ) -> type[RuleBasedStateMachine]:
    """A machine class bound to one target; each failing run appends its workload to `found`, and with `ran`
    every run appends its workload and the steps it took.

    Long because it is a class body: Hypothesis wants the rules as methods of one class, closed over
    the target."""

    class Lockstep(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.requests: list[Request] = []
            self.steps = 0
            self.config: Config = Config(1, 1, 1, 1)
            self.state: State = initial_state(self.config)
            self.sut: SchedulerUnderTest | None = None
            self.idle_calls = True  # the adapter's Capabilities.idle_schedule, read once it exists
            self.open: set[str] = set()  # added and not yet finished, for an engine that must not be called idle

        def workload(self) -> Workload:
            return make_workload(self.config, self.requests, tags=("stateful",))

        def fail(self, message: str) -> None:
            found.append(self.workload())
            raise Divergence(message)

        @initialize(config=configs)
        def start(self, config: Config) -> None:
            config = replace(config, policy=policy)  # drawn as the card's; the run's policy judges it
            self.config = config
            self.state = initial_state(config)
            try:
                with time_limit(RUN_SECONDS, "the call"):
                    self.sut = factory(config, _sample)
            except CallTimeout as e:
                self.fail(f"creating the Scheduler did not return: {e}")
            except RAISED as e:  # the submission's constructor: a finding
                self.fail("creating the Scheduler raised {}: {}".format(*raised(e)))
            self.idle_calls = capabilities_of(self.sut).idle_schedule

        @rule(prompt_len=st.integers(1, 8), max_tokens=st.integers(1, 4))
        def add_request(self, prompt_len: int, max_tokens: int) -> None:
            cap = self.config.num_blocks * self.config.block_size  # keep the request feasible alone
            prompt_len = min(prompt_len, cap)
            max_tokens = min(max_tokens, cap - prompt_len + 1)
            seq_id = f"a{len(self.requests) + 1}"
            self.requests.append(Request(seq_id, prompt_len, max_tokens, self.steps + 1))
            self.state = add(self.state, seq_id, prompt_len, max_tokens)
            self.call(lambda sut: sut.add(seq_id, prompt_len, max_tokens), f"add({seq_id!r})")
            self.open.add(seq_id)

        def call(self, fn: Any, what: str) -> Any:
            assert self.sut is not None
            try:
                with time_limit(RUN_SECONDS, "the call"):  # a limit per call: Hypothesis runs the rest
                    return fn(self.sut)
            except CallTimeout as e:  # however the call ended once its time had passed (limits.TimeLimit)
                self.fail(f"step {self.steps}: {what} did not return: {e}")
            except RAISED as e:  # only the submission runs in fn: a finding
                self.fail("step {}: {} raised {}: {}".format(self.steps, what, *raised(e)))

        @rule()
        def step(self) -> None:
            self.steps += 1
            self.state, batch = schedule(self.state)
            # the engine's contract: nothing to do, so no call; and before the first add() neither: a run with no
            # request is no workload, so neither command could judge or replay what such a call returned
            if (not self.open and not self.idle_calls) or not self.requests:
                self.state, _ = update(self.state, _sample)  # the spec's step is empty too
                return
            got = self.call(lambda sut: sut.schedule(), "schedule()")
            problem = batch_problem(got)  # read by its real items: the submission's own methods are never called
            if problem is not None:
                self.fail(f"step {self.steps}: {problem}")
            pairs = [(k, n) for k, n in batch_pairs(got)]
            if pairs != list(batch):
                self.fail(f"step {self.steps}: schedule() returned {dict(pairs)}, the spec returns {dict(batch)}")
            self.state, done = update(self.state, _sample)
            finished = finished_ids(self.call(lambda sut: sut.update(), "update()"))
            self.open.difference_update(finished or ())
            if finished != [q.seq_id for q in done]:
                self.fail(f"step {self.steps}: update() returned {finished}, the spec finishes "
                          f"{[q.seq_id for q in done]}")

        def teardown(self) -> None:
            if ran is not None:
                ran.append((self.workload(), self.steps))

        @invariant()
        def white_box_state_invariants(self) -> None:
            if not white_box or self.sut is None:
                return
            snap = self.call(lambda sut: sut.snapshot(), "reading the white-box state")
            if snap is None:
                return
            requests = {r.seq_id: (r.prompt_len, r.max_tokens) for r in self.requests}
            try:
                violations = state_violations(self.config, requests, snap)
            except (KeyError, TypeError, ValueError) as e:
                self.fail(f"the white-box state is inconsistent: {e!r}")
                return
            if violations:
                self.fail(f"after step {self.steps}: {violations[0]}")

    return Lockstep


# Older Hypothesis releases leave run_state_machine_as_test unannotated; a typed name serves every release.
hypothesis_run: Callable[..., None] = run_state_machine_as_test


def run_machine(factory: Factory, examples: int, steps: int, white_box: bool = True,
                policy: Policy = DEFAULT_POLICY, ran: list[tuple[Workload, int]] | None = None) -> Workload | None:
    """Run the lockstep machine under `policy`; return the workload of the first failing run, or None. With
    `ran`, every run's workload and its steps are appended to it."""
    found: list[Workload] = []
    machine = lockstep_machine(factory, white_box, found, policy, ran)
    machine = seed(MACHINE_SEED)(machine)  # run_state_machine_as_test honours @seed on the machine class
    config = settings(max_examples=examples, stateful_step_count=steps, derandomize=True, database=None,
                      deadline=None, phases=(Phase.explicit, Phase.generate), print_blob=False,
                      suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                      verbosity=Verbosity.quiet)  # its "Steps leading up to this error" is not the report's to print
    # A failing run's workload is in `found` and the suite shrinks it; only the submission's divergence (and
    # Hypothesis's report that the submission is nondeterministic) is expected here, anything else is the suite's.
    with contextlib.suppress(Divergence, Flaky):
        hypothesis_run(machine, settings=config)
    return found[0] if found else None


def machine_runs(stages: list[tuple[int, int]]) -> tuple[tuple[Workload, int], ...]:
    """Every run of the machine's stages ((examples, steps) each, in order), made against the spec: each run's
    workload and the steps the machine took in it, the empty and repeated ones left out.

    The machine's draws depend on its seed alone, never on the target's answers (a failing run only ends
    sooner), so a target's runs are a prefix of these, up to its first failing one: graded as cases, they
    are what the stateful check judges (docs/grading.md).
    """
    ran: list[tuple[Workload, int]] = []
    for examples, steps in stages:
        if run_machine(SpecAdapter, examples, steps, True, DEFAULT_POLICY, ran) is not None:
            raise AssertionError("the spec fails its own state machine")
    return workload_runs(ran)


def workload_runs(ran: list[tuple[Workload, int]]) -> tuple[tuple[Workload, int], ...]:
    """The machine's runs as workloads, each once with the most steps the machine took in it; a run with no request
    is no workload and is left out. What both commands judge of the machine (conformance/checks/machine_run.py)."""
    kept: dict[Workload, int] = {}
    for w, n in ran:
        if w.requests:
            kept[w] = max(n, kept.get(w, 0))
    return tuple(kept.items())

