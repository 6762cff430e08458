"""CrossHair contracts (PEP 316 docstrings) on the spec's pure helpers, mirroring I1 and I3.

Check with: ``crosshair check --per_condition_timeout=20 spec.bounded.contracts``
(no output means no counterexample was found; a bounded search, not a proof).
"""

from __future__ import annotations

from spec.model import Config, Seq, State, Status
from spec.rules import blocks_for, chunk, try_grow


def blocks_for_rounds_up(block_size: int, tokens: int) -> int:
    """Return blocks_for: the fewest blocks of block_size that hold tokens.

    pre: 1 <= block_size <= 64
    pre: 0 <= tokens <= 4096
    post: __return__ * block_size >= tokens
    post: tokens == 0 or (__return__ - 1) * block_size < tokens
    """
    return blocks_for(Config(1, block_size, 1, 1), tokens)


def try_grow_keeps_accounting(num_blocks: int, block_size: int, used: int, held: int, tokens: int) -> bool:
    """Grow one running sequence: blocks_used moves with its num_blocks and never passes num_blocks (I1).

    pre: 1 <= block_size <= 8 and 1 <= num_blocks <= 64
    pre: 0 <= held <= used <= num_blocks
    pre: 0 <= tokens <= 512
    post: __return__
    """
    state = State(Config(num_blocks, block_size, 1, 1), blocks_used=used)
    seq = Seq("s", 1, 1, num_blocks=held, status=Status.RUNNING)
    grown = try_grow(state, seq, tokens)
    if grown is None:
        return used + blocks_for(state.config, tokens) - held > num_blocks
    s2, q2 = grown
    return (s2.blocks_used - used == q2.num_blocks - held and s2.blocks_used <= num_blocks
            and q2.num_blocks == max(held, blocks_for(state.config, tokens)))


def chunk_stays_within_tokens(prompt_len: int, out_len: int, computed: int, budget: int) -> int:
    """chunk: 1 <= n <= budget and num_computed + n <= num_tokens (I2, I3).

    pre: 1 <= prompt_len <= 256 and 0 <= out_len <= 64 and 1 <= budget <= 256
    pre: 0 <= computed < prompt_len + out_len
    post: 1 <= __return__ <= budget
    post: computed + __return__ <= prompt_len + out_len
    """
    seq = Seq("s", prompt_len, 64, tuple(range(out_len)), num_computed=computed)
    return chunk(seq, budget)
