"""Proofs about spec/rules.py: a z3 encoding validated against it, claims checked on the encoding, a model checker.

``encode``/``transition`` unroll schedule() and update() over N sequence slots and K
steps; ``validate`` checks that encoding against ``spec.rules`` step by step on a
stream of workloads heavy in preemption; ``checks`` states each claim (I1..I6,
output equivalence, liveness, the derived facts) as a query; ``induction`` proves
the invariants for runs of any length; ``modelcheck`` explores ``spec.rules``
itself (or spec/rules.py with a fault of ``spec.faults``) breadth first, judging
every claim with ``execute``; ``doc`` writes the results tables of docs/proofs.md.
"""

MAY_IMPORT: tuple[str, ...] = ("spec",)  # the packages this one builds on (tests/test_layers.py)
