"""A custom adapter: connects the vLLM-style EngineScheduler in engine.py to schedcheck.

    schedcheck check examples/vllm_style/engine.py --adapter examples/vllm_style/adapter.py

An adapter file defines ``open_target(target) -> factory``; the factory takes the
workload's Config and sample function and returns an object with add, schedule,
update, outputs and snapshot (docs/adapters.md). The snapshot is white box: the
engine's queues and counters, with num_computed as before the step's tokens (the
engine advances it inside schedule(), so the scheduled count is subtracted until update()).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.adapters import load_module
from spec.model import Config, Sample
from spec.trace import SeqFields, Snapshot


class EngineAdapter:
    def __init__(self, engine: Any, config: Config, sample: Sample) -> None:
        self.engine = engine
        self.sched = engine.EngineScheduler(num_gpu_blocks=config.num_blocks, block_size=config.block_size,
                                            max_num_seqs=config.max_num_seqs,
                                            max_num_batched_tokens=config.max_num_batched_tokens,
                                            eos_token_id=config.eos)
        self.sample = sample
        self.last: Any = None
        self.pending: dict[str, int] = {}  # scheduled but not yet applied: the snapshot shows num_computed before it
        self.preemptions = 0
        self.finished: list[str] = []

    def add(self, seq_id: str, prompt_len: int, max_tokens: int) -> None:
        self.sched.add_request(self.engine.Request(seq_id, prompt_len, max_tokens))

    def schedule(self) -> dict[str, int]:
        self.last = self.sched.schedule()
        self.preemptions += self.last.num_preempted
        self.pending = dict(self.last.num_scheduled_tokens)
        return dict(self.last.num_scheduled_tokens)

    def update(self) -> list[str]:
        # The model runs here: a request whose computed tokens caught up samples one token.
        sampled = {}
        for rid in self.last.num_scheduled_tokens:
            req = self.sched.requests[rid]
            if req.num_computed_tokens == req.num_tokens:
                sampled[rid] = self.sample(rid, tuple(req.output_token_ids))
        self.pending = {}
        done = list(self.sched.update_from_output(self.last, sampled))
        self.finished += done
        return done

    def outputs(self) -> dict[str, list[int]]:
        return {rid: list(r.output_token_ids) for rid, r in self.sched.requests.items()}

    def snapshot(self) -> Snapshot:
        s = self.sched
        running = {r.request_id for r in s.running}
        seqs: dict[str, SeqFields] = {
            rid: {"num_computed": r.num_computed_tokens - self.pending.get(rid, 0), "num_tokens": r.num_tokens,
                  "num_blocks": r.num_blocks, "output": list(r.output_token_ids),
                  "status": "FINISHED" if r.finished else "RUNNING" if rid in running else "WAITING"}
            for rid, r in sorted(s.requests.items())}
        return {"blocks_used": s.used_blocks, "num_preemptions": self.preemptions,
                "waiting": [r.request_id for r in s.waiting], "running": [r.request_id for r in s.running],
                "finished": list(self.finished), "seqs": seqs}


def open_target(target: str) -> Callable[[Config, Sample], EngineAdapter]:
    engine = load_module(target)
    return lambda config, sample: EngineAdapter(engine, config, sample)
