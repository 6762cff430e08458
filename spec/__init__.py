"""The executable reference model of the P07 scheduler.

Pure and immutable: ``schedule(state) -> (state, batch)`` and
``update(state, sample) -> (state, finished)`` build new values and never change
their arguments. The rules are in ``spec.rules`` in the order of the rules page;
the invariants I1..I6 in ``spec.invariants``; workloads and traces in ``spec.trace``.
"""

from spec.errors import InvalidConfig, InvalidRequest, InvalidWorkload, ProtocolError, SpecError
from spec.feasible import liveness_bound
from spec.invariants import (
    STATE_INVARIANTS,
    STEP_PROPERTIES,
    Violation,
    check_all_finished,
    check_state,
    check_step,
    outputs_equivalent,
)
from spec.model import Batch, Config, Event, Sample, Seq, State, Status
from spec.rules import (
    add,
    blocks_for,
    initial_state,
    peak_blocks,
    phase1_running,
    phase2_waiting,
    preempt,
    schedule,
    schedule_explained,
    try_grow,
    update,
    update_explained,
)
from spec.trace import (
    FORMAT_VERSION,
    RULES_VERSION,
    Request,
    SampleRule,
    Step,
    Trace,
    Workload,
    make_workload,
    run,
    run_workload,
)

__all__ = [
    "FORMAT_VERSION", "RULES_VERSION", "STATE_INVARIANTS", "STEP_PROPERTIES",
    "Batch", "Config", "Event", "InvalidConfig", "InvalidRequest", "InvalidWorkload", "ProtocolError",
    "Request", "Sample", "SampleRule", "Seq", "SpecError", "State", "Status", "Step", "Trace", "Violation",
    "Workload", "add", "blocks_for", "check_all_finished", "check_state", "check_step", "initial_state",
    "liveness_bound", "make_workload", "outputs_equivalent", "peak_blocks", "phase1_running", "phase2_waiting",
    "preempt", "run", "run_workload", "schedule", "schedule_explained", "try_grow", "update", "update_explained",
]

MAY_IMPORT: tuple[str, ...] = ()  # the packages this one builds on (tests/test_layers.py)
