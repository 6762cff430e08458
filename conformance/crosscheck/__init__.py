"""Cross-checks between the spec's proofs and code outside spec/: impl/, the mutant submissions, the references.

``replay`` runs a counterexample of the proofs through the conformance checks of a
mutant and of the references; ``diffpairs`` gives spec/impl function pairs for
``crosshair diffbehavior``. spec/ never imports this package.
"""
