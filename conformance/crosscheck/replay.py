"""Replay a counterexample of the proofs on real code: the mutant submission with the bug, and the references.

The model checker finds, for a fault of spec/faults.py, a shortest run that
breaks a claim (``counterexample_workload``). Here that workload goes through
the conformance per-workload checks (the same ones as ``schedcheck replay``)
against conformance/mutants/FAULT.py, which must fail them, and against the
references, which must pass them: a workload the references also fail would be a
bad workload, not a caught bug.
"""

from __future__ import annotations

from pathlib import Path

# Each reference must pass every counterexample: the shipped implementation, and the
# scheduler the mutants subclass (so a mutant's finding is down to its bug alone).
REFERENCES: tuple[str, ...] = ("impl", "reference_scheduler")


def mutant_path(name: str) -> Path:
    """conformance/mutants/<name>.py: the mutant submission for a catalog bug (or the reference it subclasses)."""
    import conformance
    return Path(conformance.__file__).parent / "mutants" / f"{name}.py"


def verdict(workload: dict[str, object], target: str) -> str:
    """'pass', or 'FAIL [rule] check' for the first failing per-workload check of `target` on the workload.

    `target` is anything ``schedcheck replay`` takes ('impl', 'spec', a file path), or
    the name of a file in conformance/mutants/.
    """
    from conformance.adapters import load_target
    from conformance.checks.workload import check_workload
    from spec.trace import workload_from_json

    path = mutant_path(target)
    factory = load_target(str(path) if path.is_file() else target)
    found = check_workload(workload_from_json(workload), factory, white_box=True)
    first = next(((check, f) for check, f in found.items() if f is not None), None)
    return "pass" if first is None else f"FAIL [{first[1].rule}] {first[0]}"


def cross_replay(workload: dict[str, object], bug: str) -> dict[str, str]:
    """{'mutant': verdict on mutants/BUG.py, 'reference': 'pass' or the first reference's failure}."""
    out = {"mutant": verdict(workload, bug), "reference": "pass"}
    for ref in REFERENCES:
        v = verdict(workload, ref)
        if v != "pass":
            out["reference"] = f"{v} ({ref})"
            break
    return out


def reproduced(row: dict[str, object]) -> bool:
    """A counterexample row holds up: the mutant fails it and the references pass it."""
    return str(row.get("mutant", "")).startswith("FAIL") and row.get("reference") == "pass"
