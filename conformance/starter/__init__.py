"""The starter file ``course-init`` hands a student, and how ``check`` tells what of it is still to write.

The starter (``p07_scheduler.py`` beside this file) has the interface's classes with every
scheduling method raising NotImplementedError. A run of the suite on it fails every check at
the first call, which says nothing a beginner can use; so after a failing run, ``check`` calls
each method of the interface once on a small config and names the ones that raise
NotImplementedError, one line each, instead of printing counterexamples about them. The probe
runs after the suite, never before it, so it cannot change the process history a verdict sees.
"""

from __future__ import annotations

from importlib import resources

from conformance.adapters import Factory
from conformance.limits import RAISED, STOPPED, time_limit
from spec.model import Config

PROBE_CONFIG = Config(num_blocks=8, block_size=2, max_num_seqs=2, max_num_batched_tokens=8)
PROBE_SECONDS = 2.0


def starter_text() -> str:
    """The starter p07_scheduler.py, as shipped in the package."""
    return resources.files(__package__).joinpath("p07_scheduler.py").read_text(encoding="utf-8")


def unimplemented(factory: Factory) -> list[str]:
    """The calls of the interface that raise NotImplementedError, in call order (empty: none does).

    Each call is made once, on one request; a call that raises anything else, or returns, counts as
    written (the suite judges it). A call that cannot be reached because an earlier one raised is not
    named: the student fixes the first and runs again.
    """
    missing: list[str] = []
    try:
        with time_limit(PROBE_SECONDS):
            sut = factory(PROBE_CONFIG, lambda seq_id, output: 1)
            for name, call in (("Scheduler.add", lambda: sut.add("a1", 3, 2)), ("Scheduler.schedule", sut.schedule),
                               ("Scheduler.update", sut.update)):
                try:
                    call()
                except NotImplementedError as e:
                    missing.append(raised_in(e, name))
                except RAISED:  # written but wrong: the suite's findings say how
                    pass
    except NotImplementedError as e:
        missing.insert(0, raised_in(e, "Scheduler.__init__"))
    except STOPPED:  # the constructor runs: the suite's findings say the rest
        pass
    return missing


def raised_in(e: NotImplementedError, call: str) -> str:
    """The method that raised, by its innermost frame: schedule() may be written and call an unwritten helper."""
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    name = tb.tb_frame.f_code.co_qualname if tb is not None else call
    if "." not in name or "<" in name or name == call:
        return call
    return f"{name} (called by {call})"


def unimplemented_lines(missing: list[str]) -> list[str]:
    """One line per method still to write, then what to do next."""
    lines = [f"  {name}: not implemented yet (it raises NotImplementedError)" for name in missing]
    return [*lines, "write these (the rule ids in their docstrings are in `schedcheck rules`), then check again"]

MAY_IMPORT: tuple[str, ...] = ("spec", "conformance")  # the packages this one builds on (tests/test_layers.py)
