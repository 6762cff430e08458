"""Cross-checks between the spec's proofs and code outside spec/: impl/, the mutant submissions, the references.

``replay`` runs a counterexample of the proofs through the conformance checks of a
mutant and of the references; ``diffpairs`` gives spec/impl function pairs for
``crosshair diffbehavior``. spec/ never imports this package.
"""

MAY_IMPORT: tuple[str, ...] = (  # the packages this one builds on (tests/test_layers.py)
    "spec",
    "spec.bounded",
    "impl",
    "conformance",
    "conformance.checks",
)
