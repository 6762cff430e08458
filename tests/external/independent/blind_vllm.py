"""An adapter for vLLM v1's real scheduler written from the public docs alone (docs/adapters.md, api.md, rules.md,
trace-format.md) and vLLM's installed source, without reading conformance/engines/vllm.py: the outside adapter of
tests/external/test_vllm_independent.py, which checks that it gets the verdicts the project's adapter gets.

Usage:
    schedcheck check vllm --adapter blind_vllm                          # vLLM defaults
    schedcheck check vllm --adapter 'blind_vllm?reserve_full_isl=false' # scheduler_reserve_full_isl off

One step is what vllm.v1.engine.core.EngineCore.step() does with a model executor that
samples one token per request whose tokens are all computed:

    if not scheduler.has_requests(): nothing
    out = scheduler.schedule()            -> schedule()
    model_output = fake runner(out)       -> update(): sample(...) for every caught-up request
    scheduler.update_from_output(out, model_output)

Configuration: a tiny offline model config (tiny_model/config.json, a 1-layer Llama, never
loaded), one full-attention KV cache group of `num_blocks + 1` blocks of `block_size` (vLLM's
block pool reserves block 0 as its null block, so `num_blocks` are usable), chunked prefill on,
prefix caching off, async scheduling off, FCFS. Everything else is vLLM's default.
"""

from __future__ import annotations

import os
import threading

from conformance.adapters import LoadError, SnapshotError  # noqa: F401  (SnapshotError: API)
from conformance.capabilities import Capabilities

_HERE = os.path.dirname(os.path.abspath(__file__))
_MODEL_DIR = os.path.join(_HERE, "tiny_model")

# An engine that keeps every token in memory (vLLM's Request holds the prompt's token ids;
# its block pool makes one object per block) cannot take the corpus's largest sizes.
MAX_PROMPT_LEN = 1 << 16
MAX_NUM_BLOCKS = 1 << 16

_vllm = None  # the loaded modules and the shared ModelConfig, once per process
_lock = threading.Lock()


def _parse_bool(key, value):
    if isinstance(value, bool):
        return value
    v = str(value).strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off"):
        return False
    raise LoadError(f"blind_vllm: option {key}={value!r} is not a boolean; use true or false")


def _load():
    """Import vLLM and build the (slow, ~4 s) ModelConfig once per process."""
    global _vllm
    with _lock:
        if _vllm is not None:
            return _vllm
        os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import vllm  # noqa: F401
            from vllm.config import CacheConfig, DeviceConfig, ModelConfig, SchedulerConfig, VllmConfig
            from vllm.sampling_params import SamplingParams
            from vllm.v1.core.sched.scheduler import Scheduler
            from vllm.v1.kv_cache_interface import FullAttentionSpec, KVCacheConfig, KVCacheGroupSpec
            from vllm.v1.outputs import ModelRunnerOutput
            from vllm.v1.request import Request, RequestStatus
            from vllm.v1.structured_output import StructuredOutputManager
        except ImportError as e:
            raise LoadError(
                f"blind_vllm: vLLM v1 is not importable ({e}); install it into the python "
                "that runs schedcheck (e.g. ~/.cache/schedcheck/vllm-venv: pip install vllm)") from None
        import torch

        if not os.path.isfile(os.path.join(_MODEL_DIR, "config.json")):
            raise LoadError(f"blind_vllm: {_MODEL_DIR}/config.json is missing; it ships with "
                            "the adapter (a tiny Llama config, no weights)")
        model_config = ModelConfig(model=_MODEL_DIR, tokenizer=_MODEL_DIR,
                                   skip_tokenizer_init=True, dtype="float32")
        _vllm = dict(CacheConfig=CacheConfig, DeviceConfig=DeviceConfig,
                     SchedulerConfig=SchedulerConfig, VllmConfig=VllmConfig,
                     SamplingParams=SamplingParams, Scheduler=Scheduler,
                     FullAttentionSpec=FullAttentionSpec, KVCacheConfig=KVCacheConfig,
                     KVCacheGroupSpec=KVCacheGroupSpec, ModelRunnerOutput=ModelRunnerOutput,
                     Request=Request, RequestStatus=RequestStatus,
                     StructuredOutputManager=StructuredOutputManager, torch=torch,
                     model_config=model_config, version=vllm.__version__)
        return _vllm


class VllmV1Adapter:
    """One vLLM v1 Scheduler, driven step by step as EngineCore.step() drives it."""

    reserve_full_isl = True  # vLLM's default (SchedulerConfig.scheduler_reserve_full_isl)
    capabilities = Capabilities(engine="vllm-v1", engine_settings=(),
                                max_prompt_len=MAX_PROMPT_LEN, max_num_blocks=MAX_NUM_BLOCKS)

    def __init__(self, config, sample):
        v = _load()
        self._v = v
        self._sample = sample
        self.missing = None
        num_blocks = int(config.num_blocks)
        block_size = int(config.block_size)
        max_num_seqs = int(config.max_num_seqs)
        budget = int(config.max_num_batched_tokens)
        self._eos = config.eos
        # vLLM refuses max_num_seqs > max_num_batched_tokens (SchedulerConfig.
        # verify_max_model_len). Every running request takes >= 1 token of the budget in
        # its admission step and every step after, so at most `budget` ever run at once
        # on the card and in vLLM alike: the clamp changes no decision.
        max_num_seqs = min(max_num_seqs, budget)

        sched_config = v["SchedulerConfig"](
            max_model_len=v["model_config"].max_model_len,
            is_encoder_decoder=False,
            max_num_seqs=max_num_seqs,
            max_num_batched_tokens=budget,
            enable_chunked_prefill=True,
            async_scheduling=False,
            policy="fcfs",
            scheduler_reserve_full_isl=self.reserve_full_isl,
        )
        cache_config = v["CacheConfig"](block_size=block_size, enable_prefix_caching=False)
        vllm_config = v["VllmConfig"](model_config=v["model_config"], cache_config=cache_config,
                                      scheduler_config=sched_config,
                                      device_config=v["DeviceConfig"](device="cpu"))
        # What EngineCore._initialize_kv_caches does after profiling: the pool size.
        total_blocks = num_blocks + 1  # + vLLM's null block, outside the budget
        vllm_config.cache_config.num_gpu_blocks = total_blocks
        vllm_config.cache_config.block_size = block_size
        spec = v["FullAttentionSpec"](block_size=block_size, num_kv_heads=4, head_size=16,
                                      dtype=v["torch"].float32)
        kv_cache_config = v["KVCacheConfig"](
            num_blocks=total_blocks, kv_cache_tensors=[],
            kv_cache_groups=[v["KVCacheGroupSpec"](["model.layers.0.self_attn.attn"], spec)])
        self.sched = v["Scheduler"](
            vllm_config=vllm_config,
            kv_cache_config=kv_cache_config,
            structured_output_manager=v["StructuredOutputManager"](vllm_config),
            block_size=block_size,
            log_stats=False,
        )
        self._pool = self.sched.kv_cache_manager.block_pool
        self._manager = self.sched.kv_cache_manager.coordinator.single_type_managers[0]
        self._total_blocks = total_blocks
        self._reqs = {}          # seq_id -> Request, in add order (finished ones kept)
        self._finished = []      # seq_ids in finishing order
        self._last_out = None    # the SchedulerOutput of the last schedule()
        self._last_sched = {}    # its num_scheduled_tokens, for the snapshot

    # -- the driver protocol -------------------------------------------------------------

    def add(self, seq_id, prompt_len, max_tokens):
        v = self._v
        params = v["SamplingParams"](max_tokens=int(max_tokens))
        # What the input processor does with the model's generation config.
        params.update_from_generation_config({}, self._eos)
        req = v["Request"](request_id=seq_id, prompt_token_ids=[0] * int(prompt_len),
                           sampling_params=params, pooling_params=None)
        self.sched.add_request(req)
        self._reqs[seq_id] = req

    def schedule(self):
        # EngineCore.step(): nothing is scheduled while the scheduler holds no request.
        if not self.sched.has_requests():
            self._last_out = None
            self._last_sched = {}
            return {}
        out = self.sched.schedule()
        self._last_out = out
        # num_scheduled_tokens is built in scheduling order: the running loop, then
        # admissions from the waiting queue.
        self._last_sched = dict(out.num_scheduled_tokens)
        return dict(self._last_sched)

    def update(self):
        out = self._last_out
        self._last_out = None
        if out is None:
            self._last_sched = {}
            return []
        req_ids = list(out.num_scheduled_tokens)
        sampled = []
        for rid in req_ids:
            req = self.sched.requests.get(rid)
            # The model runner samples for every request; it discards the token of a
            # request whose computed tokens (advanced in schedule()) have not caught up
            # with its tokens: a partial prefill chunk.
            if req is not None and req.num_computed_tokens >= req.num_tokens:
                sampled.append([int(self._sample(rid, list(req.output_token_ids)))])
            else:
                sampled.append([])
        model_output = self._v["ModelRunnerOutput"](
            req_ids=req_ids, req_id_to_index={rid: i for i, rid in enumerate(req_ids)},
            sampled_token_ids=sampled)
        engine_outputs = self.sched.update_from_output(out, model_output)
        finished = []
        for eco in engine_outputs.values():
            for o in eco.outputs:
                if o.finish_reason is not None:
                    finished.append(o.request_id)
        self._finished.extend(finished)
        self._last_sched = {}
        return finished

    def outputs(self):
        return {sid: list(r.output_token_ids) for sid, r in self._reqs.items()}

    def snapshot(self):
        S = self._v["RequestStatus"]
        seqs = {}
        for sid, r in self._reqs.items():
            if r.status in (S.RUNNING,):
                status = "RUNNING"
            elif S.is_finished(r.status):
                status = "FINISHED"
            elif r.status in (S.WAITING, S.PREEMPTED):
                status = "WAITING"
            else:
                status = r.status.name  # a state the card has no name for: shown as is
            blocks = self._manager.req_to_blocks.get(sid, ())
            seqs[sid] = {
                # vLLM advances num_computed_tokens inside schedule(): show it as before
                # this step's tokens until update() applies them.
                "num_computed": r.num_computed_tokens - self._last_sched.get(sid, 0),
                "num_tokens": r.num_tokens,
                "num_blocks": sum(1 for b in blocks if not b.is_null),
                "status": status,
                "output": list(r.output_token_ids),
            }
        # Blocks out of the pool, the null block left out.
        blocks_used = self._total_blocks - 1 - self._pool.get_num_free_blocks()
        waiting = [r.request_id for r in self.sched.kv_holding_waiting]
        waiting += [r.request_id for r in self.sched.waiting]
        return {
            "blocks_used": blocks_used,
            "num_preemptions": sum(r.num_preemptions for r in self._reqs.values()),
            "waiting": waiting,
            "running": [r.request_id for r in self.sched.running],
            "finished": list(self._finished),
            "seqs": seqs,
        }


class VllmV1NoReserveAdapter(VllmV1Adapter):
    """vLLM v1 with SchedulerConfig.scheduler_reserve_full_isl=False."""

    reserve_full_isl = False
    capabilities = Capabilities(engine="vllm-v1", engine_settings=(("reserve_full_isl", False),),
                                max_prompt_len=MAX_PROMPT_LEN, max_num_blocks=MAX_NUM_BLOCKS)


def open_target(target, **options):
    """TARGET names the engine: `vllm` (the installed package). Options:
    reserve_full_isl=true|false (vLLM's scheduler_reserve_full_isl; default true, vLLM's)."""
    if str(target) not in ("vllm", "vllm-v1", "vllm.v1"):
        raise LoadError(f"blind_vllm: target {target!r} is not known; use `vllm` "
                        "(the vLLM installed in this python)")
    reserve = True
    for key, value in options.items():
        if key in ("reserve_full_isl", "scheduler_reserve_full_isl"):
            reserve = _parse_bool(key, value)
        else:
            raise LoadError(f"blind_vllm: unknown option {key!r}; the one option is "
                            "reserve_full_isl=true|false")
    _load()
    return VllmV1Adapter if reserve else VllmV1NoReserveAdapter
