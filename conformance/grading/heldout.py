"""Held-out cases: workloads no one has seen, drawn for each submission from the instructor's secret.

The corpus ships with the tool, so its answers can be recorded ahead of time and replayed by a
module with no scheduler in it. Every grade therefore also runs held-out cases, and an item scores
the lower of its pass rates on the public cases and on the held-out cases in its scope
(conformance.grading.scoring): a scheduler does as well on both, a recording does not.

Two properties make that hold by construction:
- They are drawn per submission, from an HMAC of the submission's bytes under the secret seed
  (``submission_key``): a case one submission saw while it ran, and carried out however it could,
  is no case of any other submission, since changing one byte draws new ones. The same bytes, rubric
  and seed give the same cases, so a regrade agrees.
- They are as hard as the public corpus: each is a sibling of a public vector drawn uniformly (so the
  families come in the corpus's own mix), moved by one to three small steps (a length, an arrival, a
  budget, a token) and kept only when it exercises exactly the same features. A bug fails them about
  as often as the public cases (tests/grading/test_held_out.py measures it for every catalog bug).

The seed comes from SCHEDCHECK_HELD_OUT_SEED, else from this machine's seed file, made once with
fresh random bytes and readable by its owner only. `schedcheck grade` resolves it once and hands
it to its workers through the environment; a Gradescope image carries its own (make_zip.sh).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import random
import secrets
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from conformance.grading.observe import HELD_OUT, Case
from conformance.sandbox.program import read_wire_folder
from conformance.workloads.corpus import Vector, features, load_corpus
from spec.errors import InvalidConfig, InvalidWorkload
from spec.feasible import feasible
from spec.trace import Workload

SEED_ENV = "SCHEDCHECK_HELD_OUT_SEED"
SEED_FILE = Path.home() / ".config" / "schedcheck" / "held-out-seed"


class SeedError(ValueError):
    """The held-out seed is malformed; the message names where it came from."""


def held_out_seed(seed_file: Path = SEED_FILE) -> tuple[int, str]:
    """The secret seed and where it came from; made (owner-only) on first use when nothing names one."""
    text, where = os.environ.get(SEED_ENV), f"${SEED_ENV}"
    if text is None:
        where = str(seed_file)
        if not seed_file.exists():
            seed_file.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(seed_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(f"{secrets.randbits(128)}\n")
        text = seed_file.read_text()
    try:
        value = int(text.strip())
    except ValueError:
        raise SeedError(f"the held-out seed in {where} must be a decimal integer, got {text.strip()[:40]!r}; "
                        f"set {SEED_ENV} or delete {seed_file} to make a new one") from None
    return value, where


def fingerprint(value: int) -> str:
    """A short digest that tells two seeds apart in a summary without revealing either."""
    return hashlib.sha256(str(value).encode()).hexdigest()[:12]


def submission_key(secret: int, content: bytes) -> int:
    """The key one submission's held-out cases are drawn from: an HMAC of its bytes under the secret."""
    return int.from_bytes(hmac.new(str(secret).encode(), content, hashlib.sha256).digest()[:16], "big")


def submission_bytes(path: Path) -> bytes:
    """What a submission is, for its key: a module's bytes, or a wire folder's files and command."""
    if not path.is_dir():
        return path.read_bytes()
    program, problem = read_wire_folder(path)
    if program is None:  # it will not load: any key does
        return problem.encode()
    parts = [json.dumps(list(program.argv)).encode()]
    for name, data, executable in program.files:
        parts += [os.fsencode(name), bytes([executable]), hashlib.sha256(data).digest()]  # as the folder spells it
    return b"\0".join(parts)


@lru_cache(maxsize=1)
def public_vectors() -> tuple[Vector, ...]:
    """The corpus vectors held-out cases are siblings of: every family's, in the corpus's own mix."""
    return tuple(load_corpus()[0])


MOVES = ("prompt_len", "max_tokens", "arrival", "num_blocks", "max_num_batched_tokens", "max_num_seqs", "base")
TRIES = 32  # siblings tried per public vector before another vector is drawn


LARGE = 1 << 31  # past this a value only moves toward zero: held-out cases stay in the ranges the corpus has


def step(value: int, size: int, rng: random.Random) -> int:
    """`value` moved by up to `size`: either way while it is small, toward zero once it is large."""
    by = rng.randint(1, size)
    if abs(value) >= LARGE:
        return value - by if value > 0 else value + by
    return value + rng.choice((-by, by))


def moved(w: Workload, rng: random.Random) -> Workload | None:
    """`w` moved by one small step (None: the step made no valid workload)."""
    move, c, reqs = rng.choice(MOVES), w.config, list(w.requests)
    try:
        if move in ("prompt_len", "max_tokens", "arrival"):
            k = rng.randrange(len(reqs))
            changed: dict[str, Any] = {move: step(getattr(reqs[k], move), 1, rng)}
            reqs[k] = replace(reqs[k], **changed)
            if getattr(reqs[k], move) < 1:
                return None
            reqs.sort(key=lambda r: r.arrival)  # stable: arrival order, ties as they were
            return replace(w, requests=tuple(reqs))
        if move == "base":  # other tokens: the same schedule, other outputs
            base = list(w.sample.base)
            k = rng.randrange(len(base))
            base[k] = (base[k][0], step(base[k][1], 1 << 10, rng))
            return replace(w, sample=replace(w.sample, base=tuple(base)))
        value = step(getattr(c, move), 1, rng)
        config: dict[str, Any] = {move: value}
        return replace(w, config=replace(c, **config)) if value >= 1 else None
    except (InvalidConfig, InvalidWorkload, ValueError, TypeError):
        return None


def sibling(w: Workload, rng: random.Random) -> Workload | None:
    """A workload one to three small steps from `w` that exercises exactly its features, or None."""
    want = features(w)
    for _ in range(TRIES):
        out: Workload | None = w
        for _ in range(rng.randint(1, 3)):
            out = moved(out, rng) if out is not None else None
        if out is not None and content(out) != content(w) and feasible(out.config, out.requests) and \
                features(out) == want:
            return out
    return None


def content(w: Workload) -> tuple[object, ...]:
    """What a run depends on: two workloads with equal contents are one case, whatever their names."""
    return w.config, w.requests, w.sample


def held_out_workloads(key: int, count: int) -> tuple[Workload, ...]:
    """`count` siblings of public vectors drawn uniformly with `key`, none equal to a public one or each other."""
    rng, pool = random.Random(key), public_vectors()
    out: list[Workload] = []
    seen = {content(v.workload) for v in pool}
    for _ in range(count * TRIES):
        if len(out) == count:
            break
        found = sibling(rng.choice(pool).workload, rng)
        if found is not None and content(found) not in seen:
            seen.add(content(found))
            out.append(found)
    return tuple(out)


@lru_cache(maxsize=4)
def held_out_cases(key: int, count: int) -> tuple[Case, ...]:
    """The held-out cases of the submission whose key is `key`, tagged "held-out" and as their public siblings
    are (a scale family's tags, else the features), so every item covers them as it covers the corpus."""
    return tuple(Case(f"{HELD_OUT}/{k:03d}", replace(w, name="", tags=()),  # the run shows no name to recognise
                      (HELD_OUT, *(w.tags or features(w)))) for k, w in enumerate(held_out_workloads(key, count)))
