"""Proofs about the reference model: a z3 encoding of the transition system and the claims checked on it.

``encode`` unrolls schedule() and update() over N sequence slots and K steps;
``checks`` states each claim (I1..I6, output equivalence, liveness, the derived
facts) as a query; ``induction`` proves the invariants for runs of any length;
``modelcheck`` explores the Python model breadth first; ``variants`` is the model
with one catalog bug injected, so every claim can be shown to fail.
"""
