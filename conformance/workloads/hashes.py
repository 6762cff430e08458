"""The hash functions a scheduler might index its own tables with, and ids that collide under them.

A submission that keeps sequences in a table of 2**k slots indexed by a hash of the
seq_id, without handling collisions, passes every workload whose ids happen to land in
different slots. Ids are data, so the suite can choose them: for each hash here and each
table size 2**k (k from 4 to 16), ``colliding_pair`` finds two ids whose hashes agree in
exactly the low k bits (they share a slot of a 2**k table and not of a 2**(k + 1) one).

``str_hash`` is CPython's own ``hash(str)`` under PYTHONHASHSEED=0, the seed the CLI and the
grader fix (conformance.cli.same_run_every_time, the sandbox's environment), computed here
so that it does not depend on the seed of the process that builds or measures workloads:
SipHash-1-3 (CPython 3.11 and later) with a zero key over the string's internal bytes
(one, two or four bytes per character, by its widest character).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from functools import cache

MASK64 = (1 << 64) - 1
COLLISION_BITS = tuple(range(4, 17))  # table sizes 2**4 .. 2**16


def crc32(seq_id: str) -> int:
    """zlib's CRC-32 of the id's UTF-8 bytes."""
    return zlib.crc32(seq_id.encode())


def fnv1a_32(seq_id: str) -> int:
    """FNV-1a, 32 bits, over the id's UTF-8 bytes."""
    h = 0x811C9DC5
    for b in seq_id.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def fnv1a_64(seq_id: str) -> int:
    """FNV-1a, 64 bits, over the id's UTF-8 bytes."""
    h = 0xCBF29CE484222325
    for b in seq_id.encode():
        h = ((h ^ b) * 0x100000001B3) & MASK64
    return h


def _rotl(x: int, b: int) -> int:
    return ((x << b) | (x >> (64 - b))) & MASK64


def _sipround(v0: int, v1: int, v2: int, v3: int) -> tuple[int, int, int, int]:
    v0 = (v0 + v1) & MASK64
    v1 = _rotl(v1, 13) ^ v0
    v0 = _rotl(v0, 32)
    v2 = (v2 + v3) & MASK64
    v3 = _rotl(v3, 16) ^ v2
    v0 = (v0 + v3) & MASK64
    v3 = _rotl(v3, 21) ^ v0
    v2 = (v2 + v1) & MASK64
    v1 = _rotl(v1, 17) ^ v2
    v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


def siphash13(data: bytes, k0: int = 0, k1: int = 0) -> int:
    """SipHash-1-3 of `data` as an unsigned 64-bit int (one compression round, three finalization rounds)."""
    v0, v1 = k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D
    v2, v3 = k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573
    tail = len(data) % 8
    for i in range(0, len(data) - tail, 8):
        m = int.from_bytes(data[i:i + 8], "little")
        v3 ^= m
        v0, v1, v2, v3 = _sipround(v0, v1, v2, v3)
        v0 ^= m
    m = ((len(data) & 0xFF) << 56) | int.from_bytes(data[len(data) - tail:], "little")
    v3 ^= m
    v0, v1, v2, v3 = _sipround(v0, v1, v2, v3)
    v0 ^= m
    v2 ^= 0xFF
    for _ in range(3):
        v0, v1, v2, v3 = _sipround(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3


def _internal_bytes(s: str) -> bytes:
    """The bytes CPython hashes for `s`: latin-1, UCS-2 or UCS-4 by its widest character (PEP 393)."""
    widest = max(map(ord, s), default=0)
    if widest < 0x100:
        return s.encode("latin-1")
    return s.encode("utf-16-le" if widest < 0x10000 else "utf-32-le")


def str_hash(seq_id: str) -> int:
    """``hash(seq_id)`` under PYTHONHASHSEED=0, as an unsigned 64-bit int (so ``% 2**k`` is its low k bits)."""
    if not seq_id:
        return 0
    h = siphash13(_internal_bytes(seq_id))
    return MASK64 - 1 if h == MASK64 else h  # CPython maps -1 (its error value) to -2


HASHES: dict[str, Callable[[str], int]] = {"crc32": crc32, "fnv1a-32": fnv1a_32, "fnv1a-64": fnv1a_64,
                                           "str-hash": str_hash}


def common_low_bits(a: int, b: int, limit: int = 64) -> int:
    """How many low bits two hashes share (`limit` when they agree in all of them)."""
    diff = a ^ b
    return limit if diff == 0 else min((diff & -diff).bit_length() - 1, limit)


def _candidates(prefix: str) -> Iterator[str]:
    i = 0
    while True:
        yield f"{prefix}{i}"
        i += 1


@cache
def colliding_pair(hash_name: str, bits: int, prefix: str = "req-") -> tuple[str, str]:
    """The first two ids `prefix` + n (in order of n) whose hashes share exactly the low `bits` bits.

    Deterministic: the same pair every run, for every process (str_hash is computed, not asked of
    the interpreter). Found by bucketing on the low `bits` bits: a birthday search, a few hundred ids.
    """
    h = HASHES[hash_name]
    seen: dict[int, list[tuple[str, int]]] = {}
    mask = (1 << bits) - 1
    for candidate in _candidates(prefix):
        value = h(candidate)
        for other, other_value in seen.get(value & mask, ()):
            if common_low_bits(value, other_value) == bits:
                return other, candidate
        seen.setdefault(value & mask, []).append((candidate, value))
    raise AssertionError("unreachable: the candidates never end")
