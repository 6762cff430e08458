"""Work already done on the exact bytes a child sent, kept for the next submission that sends them.

A class of correct submissions sends the same report for most workloads, and a buggy one the same
report as a correct one wherever its bug does not show; validating and judging those bytes again
would repeat work the grader has done. A key is a digest of the message and of everything its
reading depends on (the workload, the step cap, white box or not), so a hit returns exactly what
the work would return: nothing about a submission is assumed, and a grade never depends on what
was graded before it (tests/grading/test_memo.py grades with and without the memo). Bounded by a
weight (bytes of the lines held); the least recently used go first.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Generic, TypeVar

V = TypeVar("V")
DIGEST_BYTES = 16


class Memo(Generic[V]):
    """A least-recently-used map from digests to values, holding at most `capacity` weight."""

    def __init__(self, capacity: int) -> None:
        self.capacity, self.weight, self.hits, self.misses = capacity, 0, 0, 0
        self._items: OrderedDict[bytes, tuple[V, int]] = OrderedDict()
        self.enabled = True

    def get(self, key: bytes) -> V | None:
        found = self._items.get(key) if self.enabled else None
        if found is None:
            self.misses += 1
            return None
        self.hits += 1
        self._items.move_to_end(key)
        return found[0]

    def put(self, key: bytes, value: V, weight: int = 1) -> None:
        if not self.enabled or weight > self.capacity:
            return
        old = self._items.pop(key, None)
        if old is not None:
            self.weight -= old[1]
        self._items[key] = (value, weight)
        self.weight += weight
        while self.weight > self.capacity:
            _, (_, dropped) = self._items.popitem(last=False)
            self.weight -= dropped

    def clear(self) -> None:
        self._items.clear()
        self.weight = self.hits = self.misses = 0


def digest(*parts: bytes) -> bytes:
    """One digest of several byte strings, each length-prefixed so that no two splits of the same bytes collide."""
    h = hashlib.blake2b(digest_size=DIGEST_BYTES)
    for part in parts:
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.digest()


def item_key(data: Mapping[str, Any], step_cap: int, white_box: bool) -> bytes:
    """What reading a trace of this workload depends on besides the line itself."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return digest(text.encode(), str(step_cap).encode(), b"w" if white_box else b"b")
