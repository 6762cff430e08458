"""A custom adapter: connects the vLLM-style EngineScheduler in engine.py to schedcheck.

    schedcheck check examples/vllm_style/engine.py --adapter examples/vllm_style/adapter.py

An adapter file defines ``open_target(target) -> factory``; the factory takes the
workload's Config and sample function and returns an object with add, schedule,
update, outputs and snapshot (see conformance/adapters.py, SchedulerUnderTest).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.adapters import load_module
from spec.model import Config, Sample


class EngineAdapter:
    def __init__(self, engine: Any, config: Config, sample: Sample) -> None:
        self.engine = engine
        self.sched = engine.EngineScheduler(num_gpu_blocks=config.num_blocks, block_size=config.block_size,
                                            max_num_seqs=config.max_num_seqs,
                                            max_num_batched_tokens=config.max_num_batched_tokens,
                                            eos_token_id=config.eos)
        self.sample = sample
        self.last: Any = None
        self.missing = "EngineScheduler exposes no per-request status or queues in docs/api.md's form"

    def add(self, seq_id: str, prompt_len: int, max_tokens: int) -> None:
        self.sched.add_request(self.engine.Request(seq_id, prompt_len, max_tokens))

    def schedule(self) -> dict[str, int]:
        self.last = self.sched.schedule()
        return dict(self.last.num_scheduled_tokens)

    def update(self) -> list[str]:
        # The model runs here: a request whose computed tokens caught up samples one token.
        sampled = {}
        for rid in self.last.num_scheduled_tokens:
            req = self.sched.requests[rid]
            if req.num_computed_tokens == req.num_tokens:
                sampled[rid] = self.sample(rid, tuple(req.output_token_ids))
        return list(self.sched.update_from_output(self.last, sampled))

    def outputs(self) -> dict[str, list[int]]:
        return {rid: list(r.output_token_ids) for rid, r in self.sched.requests.items()}

    def snapshot(self) -> None:
        return None  # black box only: a note, not a failure


def open_target(target: str) -> Callable[[Config, Sample], EngineAdapter]:
    engine = load_module(target)
    return lambda config, sample: EngineAdapter(engine, config, sample)
