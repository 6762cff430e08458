"""vLLM v1's real Scheduler, driven through its own classes (docs/engines.md, "vLLM").

    schedcheck check vllm --adapter conformance.engines.vllm    # judged under vllm-v1, the policy it reports
    schedcheck check vllm --adapter 'conformance.engines.vllm?reserve_full_isl=0'   # ... vllm-v1:reserve_full_isl=false
    schedcheck check vllm --adapter conformance.engines.vllm --policy p07    # judged by the card's rules

The target is ``vllm``, the installed package (checked at vllm 0.33.0). The adapter builds a
``VllmConfig`` offline from the tiny model description in ``vllm_model/config.json`` (no weights,
no tokenizer, no model hub) and a ``KVCacheConfig`` with one full-attention group, constructs
``vllm.v1.core.sched.scheduler.Scheduler`` and calls it the way ``EngineCore.step()`` does
(engine/core.py): ``schedule()``, then the model, then ``update_from_output()``. The model is the
workload's sample function behind a ``ModelRunnerOutput``: a request scheduled in a step gets one
sampled token when its computed tokens reach its tokens (``num_computed_tokens`` after
``schedule()`` equals ``num_tokens``), none otherwise, as vLLM's model runner discards the tokens
of a prefill chunk that does not catch up. The adapter translates; it corrects nothing vLLM decides.

The card's Config maps to vLLM's (every value is checked again on the built config):
``num_gpu_blocks = num_blocks + 1`` (vLLM's block pool keeps one null block, so the usable count is
``num_blocks``), ``block_size``, ``max_num_seqs``, ``max_num_batched_tokens``, chunked prefill on,
prefix caching off, async scheduling off, FCFS policy, eos as a stop token of each request's
``SamplingParams`` (``ignore_eos`` False). vLLM refuses ``max_num_batched_tokens < max_num_seqs``
(SchedulerConfig.verify_max_model_len); such a Config is passed with ``max_num_seqs`` lowered to
``max_num_batched_tokens``, which changes nothing under the card's rules: every running sequence is
scheduled at least one token in every step (docs/rules.md, "Derived facts"), so ``len(running)``
never exceeds the budget and a limit above the budget never binds.

Option ``reserve_full_isl=0`` sets vLLM's ``scheduler_reserve_full_isl`` to False. vLLM's default
(True) admits a waiting request only when the blocks of its whole prompt are free, where the card
needs only the blocks of the chunk it schedules (docs/engines.md lists this difference).

White box: the snapshot reads vLLM's own state (``scheduler.waiting``, ``scheduler.running``, the
block pool's free count, each ``Request``'s counters, status and output, its blocks in the KV cache
manager). vLLM keeps no finished queue: ``finished`` is the order in which ``update_from_output``
reported the requests finished.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from conformance.adapters import LoadError
from conformance.capabilities import Capabilities
from spec.model import Config, Sample
from spec.trace import SeqFields, Snapshot

VLLM_VERSION = "0.33.0"  # the version this adapter was checked against
MODEL_DIR = Path(__file__).with_name("vllm_model")  # a model description only: config.json, no weights
MAX_MODEL_LEN = 2**25  # vllm_model/config.json's max_position_embeddings
MAX_PROMPT_TOKENS = 2**20  # vLLM holds every token id of a request in a list (v1/request.py); larger is refused
MAX_KV_BLOCKS = 2**14  # vLLM builds one KVCacheBlock per block (v1/core/block_pool.py); more are refused
INSTALL = "bash tests/external/run.sh vllm (docs/engines.md, 'vLLM'), or pip install 'schedcheck[vllm]'"
QUIET_LOGGERS = ("vllm", "transformers", "torch")


@dataclass(frozen=True)
class Vllm:
    """The vLLM classes the adapter uses, imported once per process."""

    version: str
    config: ModuleType  # vllm.config
    scheduler_cls: Any  # vllm.v1.core.sched.scheduler.Scheduler
    request_cls: Any  # vllm.v1.request.Request
    status: Any  # vllm.v1.request.RequestStatus
    engine_core_request: Any  # vllm.v1.engine.EngineCoreRequest
    sampling_params: Any  # vllm.sampling_params.SamplingParams
    model_runner_output: Any  # vllm.v1.outputs.ModelRunnerOutput
    kv_cache: ModuleType  # vllm.v1.kv_cache_interface
    structured_output_manager: Any  # vllm.v1.structured_output.StructuredOutputManager
    torch: ModuleType


_LOADED: list[Vllm] = []


def load() -> Vllm:
    """Import the vLLM modules the scheduler needs, quietly, on CPU and offline (once per process)."""
    if _LOADED:
        return _LOADED[0]
    if importlib.util.find_spec("vllm") is None:
        raise LoadError(f"vllm is not installed: {INSTALL}")
    # Before vLLM reads them at import: the CPU platform (a GPU build would otherwise look for CUDA and find
    # no device), no model hub access, and only vLLM's errors on stderr.
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        with warnings.catch_warnings():  # torch and vLLM warn about their own deprecations while importing
            warnings.simplefilter("ignore")
            vllm = importlib.import_module("vllm")
            mods = {name: importlib.import_module(name) for name in (
                "torch", "vllm.config", "vllm.sampling_params", "vllm.v1.request", "vllm.v1.engine",
                "vllm.v1.outputs", "vllm.v1.kv_cache_interface", "vllm.v1.structured_output",
                "vllm.v1.core.sched.scheduler")}
    except Exception as e:
        raise LoadError(f"importing vllm's scheduler raised {type(e).__name__}: {e}; {INSTALL}") from None
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    version = str(getattr(vllm, "__version__", "?"))
    engine = Vllm(version, mods["vllm.config"], mods["vllm.v1.core.sched.scheduler"].Scheduler,
                  mods["vllm.v1.request"].Request, mods["vllm.v1.request"].RequestStatus,
                  mods["vllm.v1.engine"].EngineCoreRequest, mods["vllm.sampling_params"].SamplingParams,
                  mods["vllm.v1.outputs"].ModelRunnerOutput, mods["vllm.v1.kv_cache_interface"],
                  mods["vllm.v1.structured_output"].StructuredOutputManager, mods["torch"])
    _LOADED.append(engine)
    return engine


@dataclass(frozen=True)
class EngineSetup:
    """vLLM's side of one Config: what the Scheduler is built from."""

    vllm_config: Any
    num_gpu_blocks: int  # num_blocks + 1: the block pool's null block is never handed out
    block_size: int


_SETUPS: dict[tuple[int, int, int, int, bool], EngineSetup] = {}


def _build(engine: Vllm, config: Config, max_num_seqs: int, reserve_full_isl: bool) -> Any:
    """vLLM's own config classes, from the shipped model description and the workload's Config."""
    c = engine.config
    model = c.ModelConfig(model=str(MODEL_DIR), tokenizer=str(MODEL_DIR), skip_tokenizer_init=True,
                          dtype="float32", max_model_len=MAX_MODEL_LEN, seed=0)
    scheduler = c.SchedulerConfig(max_num_seqs=max_num_seqs, max_num_batched_tokens=config.max_num_batched_tokens,
                                  max_model_len=model.max_model_len, is_encoder_decoder=False,
                                  enable_chunked_prefill=True, async_scheduling=False, policy="fcfs",
                                  scheduler_reserve_full_isl=reserve_full_isl)
    cache = c.CacheConfig(block_size=config.block_size, enable_prefix_caching=False)
    cache.num_gpu_blocks = config.num_blocks + 1
    return c.VllmConfig(model_config=model, scheduler_config=scheduler, cache_config=cache)


def engine_setup(engine: Vllm, config: Config, reserve_full_isl: bool) -> EngineSetup:
    """The VllmConfig for `config`, built once per distinct Config (3 ms each; the first in a process 0.1 s, and
    9 s the first time on a machine, while vLLM inspects the model class and caches what it found)."""
    max_num_seqs = min(config.max_num_seqs, config.max_num_batched_tokens)  # see the module docstring
    key = (config.num_blocks, config.block_size, max_num_seqs, config.max_num_batched_tokens, reserve_full_isl)
    if key in _SETUPS:
        return _SETUPS[key]
    if config.num_blocks > MAX_KV_BLOCKS:
        raise ValueError(f"num_blocks={config.num_blocks}: vLLM's block pool builds one KVCacheBlock object per "
                         f"block; this adapter refuses more than {MAX_KV_BLOCKS}")
    with warnings.catch_warnings():  # the first ModelConfig inspects the model class, which imports torch modules
        warnings.simplefilter("ignore")
        vllm_config = _build(engine, config, max_num_seqs, reserve_full_isl)
    got = vllm_config.scheduler_config, vllm_config.cache_config
    expected = {"max_num_seqs": max_num_seqs, "max_num_batched_tokens": config.max_num_batched_tokens,
                "enable_chunked_prefill": True, "async_scheduling": False,
                "scheduler_reserve_full_isl": reserve_full_isl, "block_size": config.block_size,
                "enable_prefix_caching": False, "num_gpu_blocks": config.num_blocks + 1}
    for name, want in expected.items():
        have = getattr(got[0] if hasattr(got[0], name) else got[1], name)
        if have != want:
            raise ValueError(f"vLLM changed {name} from {want!r} to {have!r} while building its config; the "
                             "scheduler would not run the workload's Config")
    setup = EngineSetup(vllm_config, config.num_blocks + 1, config.block_size)
    _SETUPS[key] = setup
    return setup


WAITING_STATUSES = ("WAITING", "PREEMPTED")  # vLLM's statuses of a request in its waiting queue


class VllmAdapter:
    """One vLLM Scheduler; the driver's calls translated to the ones EngineCore.step() makes."""

    # vLLM's Scheduler may be called with nothing to do (an empty SchedulerOutput); the sizes it cannot build
    # are left out by the suite, with a note (docs/adapters.md, "Capabilities")
    capabilities = Capabilities(max_prompt_len=MAX_PROMPT_TOKENS, max_num_blocks=MAX_KV_BLOCKS)

    def __init__(self, engine: Vllm, config: Config, sample: Sample, reserve_full_isl: bool) -> None:
        self.engine = engine
        self.sample = sample
        setup = engine_setup(engine, config, reserve_full_isl)
        kv = engine.kv_cache
        spec = kv.FullAttentionSpec(block_size=setup.block_size, num_kv_heads=1, head_size=8,
                                    dtype=engine.torch.float32)
        kv_cache_config = kv.KVCacheConfig(num_blocks=setup.num_gpu_blocks, kv_cache_tensors=[],
                                           kv_cache_groups=[kv.KVCacheGroupSpec(["model.layers.0.self_attn"], spec)])
        self.sched: Any = engine.scheduler_cls(
            vllm_config=setup.vllm_config, kv_cache_config=kv_cache_config,
            structured_output_manager=engine.structured_output_manager(setup.vllm_config),
            block_size=setup.block_size, log_stats=False)
        self.eos = config.eos
        self.requests: dict[str, Any] = {}  # every added Request: vLLM forgets a request once it finishes
        self.finished: list[str] = []  # in the order update_from_output reported them
        self.last: Any = None  # the SchedulerOutput of the last schedule()
        self.scheduled: dict[str, int] = {}  # its counts, until update() applies them
        self.missing: str | None = None
        self.arrival = 0.0

    def add(self, seq_id: str, prompt_len: int, max_tokens: int) -> None:
        if prompt_len > MAX_PROMPT_TOKENS:
            raise ValueError(f"prompt_len={prompt_len}: vLLM keeps every token id of a request in a Python list "
                             f"(v1/request.py); this adapter refuses prompts over {MAX_PROMPT_TOKENS} tokens")
        if prompt_len + max_tokens > MAX_MODEL_LEN:
            raise ValueError(f"prompt_len + max_tokens = {prompt_len + max_tokens} passes vLLM's max_model_len "
                             f"({MAX_MODEL_LEN}), where vLLM would stop the request early")
        e = self.engine
        stop = [] if self.eos is None else [self.eos]
        params = e.sampling_params(max_tokens=max_tokens, ignore_eos=False, stop_token_ids=stop)
        self.arrival += 1.0  # FCFS orders by queue position; a distinct arrival time keeps every tie-break stable
        core_request = e.engine_core_request(
            request_id=seq_id, prompt_token_ids=[0] * prompt_len, mm_features=None, sampling_params=params,
            pooling_params=None, arrival_time=self.arrival, lora_request=None, cache_salt=None,
            data_parallel_rank=None)
        request = e.request_cls.from_engine_core_request(core_request, None)  # no block hasher: no prefix caching
        self.requests[seq_id] = request
        self.sched.add_request(request)

    def schedule(self) -> dict[str, int]:
        self.last = self.sched.schedule()
        self.scheduled = dict(self.last.num_scheduled_tokens)  # insertion order is vLLM's scheduling order
        return dict(self.scheduled)

    def update(self) -> list[str]:
        """Run the model (the sample function) on the last batch and hand its output to update_from_output."""
        out, self.scheduled = self.last, {}
        req_ids = list(out.num_scheduled_tokens)
        sampled: list[list[int]] = []
        for rid in req_ids:
            r = self.requests[rid]
            caught_up = r.num_computed_tokens >= r.num_tokens  # as the model runner decides which rows to keep
            sampled.append([self.sample(rid, tuple(r.output_token_ids))] if caught_up else [])
        model_output = self.engine.model_runner_output(
            req_ids=req_ids, req_id_to_index={rid: i for i, rid in enumerate(req_ids)}, sampled_token_ids=sampled)
        outputs = self.sched.update_from_output(out, model_output)
        done = [o.request_id for client in outputs.values() for o in client.outputs if o.finish_reason is not None]
        self.finished.extend(done)
        return done

    def outputs(self) -> dict[str, list[int]]:
        return {rid: list(r.output_token_ids) for rid, r in self.requests.items()}

    def snapshot(self) -> Snapshot | None:
        """vLLM's state in the suite's form; num_computed read between schedule() and update() is the value
        before this step's tokens (vLLM advances num_computed_tokens inside schedule())."""
        s = self.sched
        pool = s.kv_cache_manager.block_pool
        seqs: dict[str, SeqFields] = {}
        for rid in sorted(self.requests):
            r = self.requests[rid]
            status = r.status.name
            if status in WAITING_STATUSES:
                status = "WAITING"
            elif r.is_finished():
                status = "FINISHED"
            blocks = s.kv_cache_manager.get_block_ids(rid) if rid in s.requests else ()
            seqs[rid] = {"num_computed": r.num_computed_tokens - self.scheduled.get(rid, 0),
                         "num_tokens": r.num_tokens, "num_blocks": sum(len(group) for group in blocks),
                         "status": status, "output": list(r.output_token_ids)}
        waiting = [r.request_id for r in s.kv_holding_waiting] + [r.request_id for r in s.waiting]
        return {"blocks_used": pool.num_gpu_blocks - 1 - pool.get_num_free_blocks(),
                "num_preemptions": sum(r.num_preemptions for r in self.requests.values()),
                "waiting": waiting, "running": [r.request_id for r in s.running],
                "finished": list(self.finished), "seqs": seqs}


def _flag(name: str, value: str) -> bool:
    if value not in ("0", "1"):
        raise LoadError(f"adapter option {name}={value!r}: give {name}=0 or {name}=1")
    return value == "1"


def open_target(target: str, reserve_full_isl: str = "1") -> Callable[[Config, Sample], VllmAdapter]:
    """A factory of VllmAdapter over the installed vllm; `target` must be 'vllm'."""
    if target != "vllm":
        raise LoadError(f"the vLLM adapter drives the installed vllm package: give the target 'vllm', not "
                        f"{target!r}")
    full_isl = _flag("reserve_full_isl", reserve_full_isl)
    engine = load()
    if engine.version != VLLM_VERSION:
        logging.getLogger(__name__).warning("vllm %s is installed; this adapter was checked against %s",
                                            engine.version, VLLM_VERSION)
    # the adapter reports how it configures vLLM's scheduler, so the suite judges it by the policy that matches
    reported = replace(VllmAdapter.capabilities, engine="vllm-v1", engine_settings=(("reserve_full_isl", full_isl),))
    configured = type("VllmAdapter", (VllmAdapter,), {"capabilities": reported, "__doc__": VllmAdapter.__doc__})
    return lambda config, sample: configured(engine, config, sample, full_isl)
