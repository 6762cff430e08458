"""SGLang's real scheduler, driven on CPU without a model (docs/engines.md, "SGLang").

    schedcheck check sglang --adapter conformance.engines.sglang
    schedcheck check sglang --adapter 'conformance.engines.sglang?mixed=1'   # --enable-mixed-chunk

The target is ``sglang``, the installed package (checked at sglang 0.5.23). What decides each step is
SGLang's own code: a real ``sglang.srt.managers.scheduler.Scheduler`` whose ``get_next_batch_to_run``
(``get_new_batch_prefill`` with ``PrefillAdder`` and ``SchedulePolicy``, else ``update_running_batch``
with ``ScheduleBatch.check_decode_mem`` and ``retract_decode``) chooses the batch, the KV slots come from
a real token allocator (paged when block_size > 1), request pool and radix cache (off), and SGLang's
``SchedulerBatchResultProcessor`` applies the sampled tokens (outputs, finishing, freeing). Only the model
forward (``Scheduler.run_batch``) is replaced: the workload's sample function plays the model, as in
``event_loop_normal``, the loop without overlap scheduling, which matches docs/api.md's schedule() then
update().

The Scheduler is made with ``Scheduler.__new__``: its ``__init__`` loads a model, starts ZMQ, process
groups and a TP worker. The attributes its scheduling methods read are set from the same published config
``__init__`` reads them from; collaborators that only log, stream or serve a feature that is off are named
no-op stand-ins (docs/engines.md lists each and why it decides nothing). Two modules the import chain
reaches and that cannot be installed here (torchvision for CPU torch, tvm_ffi) are stand-ins too; no
scheduling code calls them.

The card's Config maps to SGLang's: a KV pool of ``num_blocks * block_size`` tokens with ``page_size =
block_size``, ``chunked_prefill_size = max_prefill_tokens = max_num_batched_tokens``,
``max_running_requests = max_num_seqs``, the default schedule policy (fcfs), radix cache off, overlap
schedule off. SGLang sees token id 2 for the workload's eos and 7 for any other token (ids past its
vocabulary would end a request); the adapter keeps the real tokens for ``outputs()``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import logging
import os
import sys
import types
import warnings
from array import array
from collections.abc import Callable
from typing import Any

from conformance.adapters import Factory, LoadError
from conformance.capabilities import Capabilities, Difference
from conformance.checks.checkers import Finding, differential, hygiene
from conformance.engines.recording import held_at, run_recording
from spec.model import Config, Sample
from spec.trace import Workload

SGLANG_VERSION = "0.5.23"  # the version this adapter was checked against
EOS_ID = 2  # the id SGLang sees for the workload's eos token (the stand-in model's vocabulary)
TOKEN_ID = 7  # the id SGLang sees for every other sampled token
VOCAB = 256
MAX_PROMPT_TOKENS = 2**20  # SGLang holds every prompt token id in an array (Req.origin_input_ids); larger is refused
MAX_KV_TOKENS = 2**20  # the allocator keeps a tensor of every free slot; a larger pool is refused
MAX_POOL_CELLS = 2**24  # ReqToTokenPool is max_num_seqs rows of the context length (int32): larger is refused
INSTALL = "bash tests/external/run.sh sglang (docs/engines.md, 'SGLang')"


# --------------------------------------------------------------------------------------------
# Import-time stand-ins: two modules that cannot be installed on this CPU host.
# --------------------------------------------------------------------------------------------

class _StubMeta(type):
    """A class whose attributes are more stub classes: enough for `from x import Y`, `class Z(Y)`,
    decorators and module-level calls that only build kernel/vision registries."""

    def __getattr__(cls, name: str) -> type:
        if name.startswith("__"):
            raise AttributeError(name)
        return _stub(name)

    def __call__(cls, *args: Any, **kwargs: Any) -> type:
        return _stub("instance")


def _stub(name: str) -> type:
    return _StubMeta(name, (), {})


class _StubModule(types.ModuleType):
    def __getattr__(self, name: str) -> type:
        if name.startswith("__"):
            raise AttributeError(name)
        value = _stub(name)
        setattr(self, name, value)
        return value


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers imports of the named top-level packages (and their submodules) with stubs."""

    def __init__(self, roots: set[str]) -> None:
        self.roots = roots

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return _StubModule(spec.name, "stand-in (conformance.engines.sglang): not installable on a CPU host")

    def exec_module(self, module: types.ModuleType) -> None:
        module.__path__ = []


# torchvision: PyPI's builds do not match the installed CPU torch (download.pytorch.org is out of reach);
#   imported at module level by sglang/srt/multimodal/internvl_utils.py (image transforms).
# tvm_ffi: apache-tvm-ffi, the JIT kernel runtime; imported at module level by
#   sglang/kernels/ops/communication/all_reduce.py (custom CUDA all-reduce).
STUBBED = ("torchvision", "tvm_ffi")

_LOADED: dict[str, Any] = {}
SGLANG_MODULES = {  # what the adapter uses of SGLang, by the name load() gives it
    "torch": "torch", "sglang": "sglang", "sched": "sglang.srt.managers.scheduler",
    "batch": "sglang.srt.managers.schedule_batch", "policy": "sglang.srt.managers.schedule_policy",
    "brp": "sglang.srt.managers.scheduler_components.batch_result_processor", "utils": "sglang.srt.managers.utils",
    "paged": "sglang.srt.mem_cache.allocator.paged", "token": "sglang.srt.mem_cache.allocator.token",
    "cache_init": "sglang.srt.mem_cache.cache_init_params", "memory_pool": "sglang.srt.mem_cache.memory_pool",
    "radix": "sglang.srt.mem_cache.unified_radix_cache", "components": "sglang.srt.mem_cache.unified_cache.components",
    "sampling": "sglang.srt.sampling.sampling_params", "server_args": "sglang.srt.server_args",
    "runtime_context": "sglang.srt.runtime_context", "spec_info": "sglang.srt.speculative.spec_info",
    "environ": "sglang.srt.environ", "disaggregation": "sglang.srt.disaggregation.utils",
}


def load() -> dict[str, Any]:
    """Import SGLang's scheduler modules on CPU (once per process)."""
    if _LOADED:
        return _LOADED
    if importlib.util.find_spec("sglang") is None:
        raise LoadError("the SGLang adapter drives the installed sglang package, which is not installed here; "
                        + INSTALL)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # transformers decides once, at import, whether torchvision is installed: ask it before the stand-in
        # exists, so it keeps answering "not installed" and never reads the stand-in.
        importlib.import_module("transformers.utils.import_utils").is_torchvision_available()
        if not any(isinstance(f, _StubFinder) for f in sys.meta_path):
            sys.meta_path.insert(0, _StubFinder(set(STUBBED)))
        try:
            mods = {key: importlib.import_module(name) for key, name in SGLANG_MODULES.items()}
        except Exception as e:
            raise LoadError(f"importing SGLang's scheduler raised {type(e).__name__}: {e}; this adapter was checked at "
                            f"sglang {SGLANG_VERSION} ({INSTALL})") from None
    for name in ("sglang", "transformers", "torch"):
        logging.getLogger(name).setLevel(logging.ERROR)
    _watch_admission(mods["policy"].PrefillAdder)
    _LOADED.update(torch=mods["torch"], version=getattr(mods["sglang"], "__version__", "?"), sched=mods["sched"],
                   batch=mods["batch"], policy=mods["policy"], brp=mods["brp"],
                   GenerationBatchResult=mods["utils"].GenerationBatchResult,
                   Paged=mods["paged"].PagedTokenToKVPoolAllocator, Token=mods["token"].TokenToKVPoolAllocator,
                   CacheInitParams=mods["cache_init"].CacheInitParams,
                   ReqToTokenPool=mods["memory_pool"].ReqToTokenPool,
                   UnifiedRadixCache=mods["radix"].UnifiedRadixCache, ComponentType=mods["components"].ComponentType,
                   SamplingParams=mods["sampling"].SamplingParams, ServerArgs=mods["server_args"].ServerArgs,
                   rc=mods["runtime_context"], SpeculativeAlgorithm=mods["spec_info"].SpeculativeAlgorithm,
                   envs=mods["environ"].envs, DisaggregationMode=mods["disaggregation"].DisaggregationMode)
    return _LOADED


_TRIED: list[list[tuple[str, str]] | None] = [None]  # the verdicts of the step being recorded (explain)


def _watch_admission(adder: Any) -> None:
    """Keep PrefillAdder.add_one_req's verdict on each request it is asked about, while an adapter records
    (SglangAdapter.recording): what explain reads. The verdict itself is SGLang's, returned unchanged."""
    asked = adder.add_one_req
    if getattr(asked, "schedcheck_watched", False):
        return

    def add_one_req(self: Any, req: Any, *args: Any, **kwargs: Any) -> Any:
        verdict = asked(self, req, *args, **kwargs)
        if _TRIED[0] is not None:
            _TRIED[0].append((req.rid, getattr(verdict, "name", str(verdict))))
        return verdict
    add_one_req.schedcheck_watched = True  # type: ignore[attr-defined]
    adder.add_one_req = add_one_req


# --------------------------------------------------------------------------------------------
# No-op stand-ins for collaborators that do not decide anything (docs/engines.md, "SGLang", says why each is safe).
# --------------------------------------------------------------------------------------------

class _NoOp:
    """Any attribute is a callable that does nothing and returns None; used only where SGLang
    calls a collaborator for logging, metrics, streaming to the detokenizer, or a disabled feature."""

    def __init__(self, name: str, **values: Any) -> None:
        self._name = name
        self.__dict__.update(values)

    def __getattr__(self, name: str) -> Callable[..., None]:
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *a, **k: None

    def __repr__(self) -> str:
        return f"<stand-in {self._name}>"


class _Passthrough(_NoOp):
    """dp_attn_adapter / ngram_embedding_manager: with DP attention and n-gram embedding off their
    methods return the batch unchanged (scheduler_components/dp_attn_adapter.py, ngram embedding)."""

    def maybe_prepare_mlp_sync_batch(self, batch: Any, need_sync: bool = True) -> Any:
        return batch

    def maybe_convert_decode_to_extend(self, batch: Any) -> Any:
        return batch

    def prepare_for_forward(self, batch: Any, chunked_req: Any = None) -> Any:
        return batch


class _Grammar(_NoOp):
    """No request here has a grammar (constrained decoding), so the grammar queue stays empty."""

    grammar_queue: list[Any] = []

    def has_waiting_grammars(self) -> bool:
        return False


class _Dllm(_NoOp):
    """Diffusion-LLM staging: off (dllm_config is None)."""

    def any_staging_reqs(self) -> bool:
        return False


class _Beams(_NoOp):
    """Beam search: no request here uses it."""

    def pending_member_rows(self, batch: Any) -> int:
        return 0


class _LoadInquirer(_NoOp):
    """Load statistics for the router: nothing pending, as in a single scheduler."""

    def _get_num_pending_tokens(self, chunk_deduct: int = 0) -> int:
        return 0


# --------------------------------------------------------------------------------------------
# Config publication and the scheduler shell
# --------------------------------------------------------------------------------------------

def publish_config(num_tokens: int, page_size: int, max_running: int, budget: int, mixed: bool) -> Any:
    """SGLang's own ServerArgs, resolved and published (model_path 'dummy' skips model resolution): the workload's
    sizes, radix cache and overlap schedule off, everything else SGLang's default (the fcfs policy included)."""
    m = load()
    sa = m["ServerArgs"](model_path="dummy", device="cpu", page_size=page_size, max_running_requests=max_running,
                         chunked_prefill_size=budget, max_prefill_tokens=budget, max_total_tokens=num_tokens,
                         disable_radix_cache=True, disable_overlap_schedule=True, enable_mixed_chunk=mixed)
    # One context per adapter (runtime_context.create_context), activated around every call with
    # use_context: publish() is process-global, and the suite keeps several schedulers alive at once.
    ctx = m["rc"].create_context(sa, role="scheduler")
    with m["rc"].use_context(ctx):
        # Scheduler.init_model_worker does this override from max_running_requests (scheduler.py).
        par = m["rc"].get_parallel()
        if not par.pp_max_micro_batch_size:
            m["rc"].get_context().override("scheduler.pp_max_micro_batch_size_default",
                                           pp_max_micro_batch_size=max(max_running // par.pp_size, 1))
    return ctx


class ModelConfigStandIn:
    """The ModelConfig attributes the scheduling path reads (vocab for sampling tensors, flags that
    select multimodal / encoder-decoder branches, which are off for a plain decoder)."""

    def __init__(self, context_len: int):
        self.vocab_size = VOCAB
        self.is_encoder_decoder = False
        self.is_multimodal = False
        self.is_multimodal_gen = False
        self.context_len = context_len
        self.num_key_value_heads = 1
        self.hf_config = types.SimpleNamespace(architectures=["LlamaForCausalLM"])
        self.hf_eos_token_id = None
        self.think_end_ids = None  # ModelConfig's value for a model without reasoning tokens
        self.self_opened_think_start_ids = None


def build_scheduler(num_tokens: int, page_size: int, max_running: int) -> Any:
    """A real sglang Scheduler instance with the state __init__ would give it, minus model and IPC."""
    m = load()
    torch = m["torch"]
    rc = m["rc"]
    S = m["sched"].Scheduler
    s = S.__new__(S)
    sch, mem = rc.get_schedule(), rc.get_memory()
    # -- Scheduler.__init__ "Parse args" block, from the published config
    s.forward_ct = 0
    s.processed_tokens_counter = 0
    s.cur_batch_for_debug = None
    s.server_args = rc.get_server_args()
    s.schedule_policy = sch.schedule_policy
    s.enable_priority_scheduling = sch.enable_priority_scheduling
    s.abort_on_priority_when_disabled = sch.abort_on_priority_when_disabled
    s.schedule_low_priority_values_first = sch.schedule_low_priority_values_first
    s.priority_scheduling_preemption_threshold = sch.priority_scheduling_preemption_threshold
    s.enable_lora = False
    s.enable_overlap = False
    s.enable_overlap_mlx = False
    s.enable_pdmux = False
    s.spec_algorithm = m["SpeculativeAlgorithm"].from_string(rc.get_spec().speculative_algorithm)
    s.page_size = sch.page_size
    s.enable_hierarchical_cache = mem.enable_hierarchical_cache
    s.enable_lmcache = mem.enable_lmcache
    s.enable_session_radix_cache = mem.enable_session_radix_cache
    s.enable_hicache_storage = mem.hicache_storage_backend is not None
    s.enable_unified_cache_external_linker = mem.enable_unified_cache_external_linker
    s.enable_decode_hicache = False
    s.enable_hisparse = mem.enable_hisparse
    s.attn_dp_enabled = False
    s.enable_unified_memory = mem.enable_unified_memory
    s.max_new_tokens_limit = m["envs"].SGLANG_MAX_NEW_TOKENS_LIMIT.get()
    s.model_config = ModelConfigStandIn(context_len=num_tokens + 8)
    s.is_generation = True
    s.dllm_config = None
    s.require_mlp_sync = False
    # -- get_worker_info() values (tp_worker.py) for this pool
    s.max_total_num_tokens = num_tokens
    s.max_prefill_tokens = sch.max_prefill_tokens
    s.max_running_requests = sch.max_running_requests
    s.max_queued_requests = None
    s.max_req_len = min(s.model_config.context_len - 1, num_tokens - 1)  # tp_worker.py get_worker_info
    s.max_req_input_len = s.max_req_len - 5
    s.device = "cpu"
    s.min_free_slots_delayer = None
    # -- memory pools and tree cache: what kv_cache_builder.build_kv_cache returns for a plain MHA model
    s.req_to_token_pool = m["ReqToTokenPool"](size=max_running, max_context_len=s.model_config.context_len + 4,
                                              device="cpu", enable_memory_saver=False)
    if page_size == 1:
        s.token_to_kv_pool_allocator = m["Token"](num_tokens, dtype=torch.float32, device="cpu", kvcache=None,
                                                  need_sort=False)
    else:
        s.token_to_kv_pool_allocator = m["Paged"](num_tokens, page_size, dtype=torch.float32, device="cpu",
                                                  kvcache=None, need_sort=False)
    s.kv_shard_widening = 1
    s.is_hybrid_swa = False
    s.is_hybrid_ssm = False
    s.sliding_window_size = None
    s.full_tokens_per_layer = None
    s.swa_tokens_per_layer = None
    s.disable_radix_cache = True
    params = m["CacheInitParams"](disable=True, req_to_token_pool=s.req_to_token_pool,
                                  token_to_kv_pool_allocator=s.token_to_kv_pool_allocator, page_size=page_size,
                                  eviction_policy=mem.radix_eviction_policy,
                                  chunked_prefill_size=sch.chunked_prefill_size,
                                  tree_components=(m["ComponentType"].FULL,))
    s.tree_cache = m["UnifiedRadixCache"](params)
    s.hisparse_coordinator = None
    s.decode_offload_manager = None
    s.disaggregation_mode = m["DisaggregationMode"].NULL
    # -- the real init_* methods that only read config
    s.init_running_status()
    # init_chunked_prefill, minus its multimodal/Transformers-backend branch (off for this model):
    s.chunked_prefill_size = sch.chunked_prefill_size if (sch.chunked_prefill_size or 0) > 0 else None
    s.prefill_decode_interval = sch.prefill_decode_interval or 0
    s._prefill_decode_interval_remaining = 0
    s.prefill_decode_interval_min_bs = sch.prefill_decode_interval_min_bs
    s.chunked_req = None
    s._pending_chunked_abort_req = None
    s.is_mixed_chunk = s.chunked_prefill_size is not None and sch.enable_mixed_chunk
    s.dynamic_chunk_sizer = None
    s.metrics_reporter = _NoOp("metrics_reporter", enable_metrics=False, num_retracted_reqs=0,
                               num_generated_tokens=0, forward_ct_decode=0)
    s.metrics_collector = None
    s.scheduler_stage_metrics = None  # stage timing recorder: None is the "off" value its decorator checks
    s.init_schedule_policy()  # real: SchedulePolicy, NewTokenRatioTracker.from_config()
    s.truncation_align_size = None
    # -- collaborators that only log/stream/serve disabled features
    s.grammar_manager = _Grammar("grammar_manager")
    s.dllm_manager = _Dllm("dllm_manager")
    s.dp_attn_adapter = _Passthrough("dp_attn_adapter")
    s.ngram_embedding_manager = _Passthrough("ngram_embedding_manager")
    s.beam_coordinator = _Beams("beam_coordinator")
    s.load_inquirer = _LoadInquirer("load_inquirer")
    s.tp_worker = types.SimpleNamespace(model_runner=types.SimpleNamespace(attn_backend=None, prefill_aware_swa=False))
    s.lora_drainer = None
    s.output_streamer = _NoOp("output_streamer")
    s.model_worker = None
    s.draft_worker = None
    s._sched_idled = False
    s.batch_result_processor = m["brp"].SchedulerBatchResultProcessor(
        is_generation=True, disaggregation_mode=s.disaggregation_mode, enable_overlap=False,
        enable_overlap_mlx=False, model_config=s.model_config,
        token_to_kv_pool_allocator=s.token_to_kv_pool_allocator, tree_cache=s.tree_cache,
        hisparse_coordinator=None, req_to_token_pool=s.req_to_token_pool, decode_offload_manager=None,
        metrics_collector=None, metrics_reporter=s.metrics_reporter, draft_worker=None, model_worker=None,
        logprob_result_processor=None, output_streamer=s.output_streamer, beam_coordinator=s.beam_coordinator,
        abort_request=lambda *a, **k: None)
    return s


# SGLang's known differences from the card (docs/engines.md, "SGLang"), each with where 0.5.23 does it (paths under
# sglang/srt/); the report's causes are these (explain), never a catalog bug SGLang does not have
DIFFERENCES = (
    Difference("admission-reserve", "a waiting request is admitted only when its whole prompt, its whole output and "
               "a page more fit, strictly, beside what the running requests are still expected to decode "
               "(new_token_ratio): the card needs room for the chunk it schedules only",
               "managers/schedule_policy.py:1395-1420 (add_one_req), 1592-1625; mem_cache/prefill_budget.py:100-160"),
    Difference("page-charged-chunks", "the token budget is charged in whole pages, and a chunk is cut down to whole "
               "pages: with block_size > 1 a step schedules fewer tokens than the card",
               "managers/schedule_policy.py:895-930 (_update_prefill_budget), 1640-1660"),
    Difference("clip-max-tokens", "on arrival, a request's max_tokens is cut to what an empty pool holds beside its "
               "prompt, a page and one token more: it finishes early",
               "managers/scheduler.py:2693-2730 (init_req_max_new_tokens); mem_cache/allocator/base.py:88-110"),
    Difference("prefill-first", "a step that admits anyone runs none of the running requests: they wait while any "
               "waiting request gets tokens", "managers/scheduler.py:3992 (get_next_batch_to_run)",
               ("prefill_or_decode",)),
    Difference("engine-size", "a prompt or a pool larger than the arrays and tensors SGLang builds (the adapter "
               "refuses it)", "mem_cache/memory_pool.py (ReqToTokenPool), mem_cache/allocator"),
)


def explain(factory: Factory, workload: Workload, finding: Finding) -> str | None:
    """Which known difference made `finding`, read from SGLang's own state and verdicts: the workload runs again on
    an instance that keeps, before each step, SGLang's queues and whether admission is shut, and PrefillAdder's
    verdict on each request it was asked about; the step where the run first departs from the spec says which. A
    finding of a whole run (liveness, equivalence, a probe) is the difference the run first shows."""
    observed, made = run_recording(factory, workload)
    raised = hygiene(workload, observed)
    if raised:
        return "engine-size" if "MemoryError: SGLang" in raised[0].message else None
    diverged = differential(workload, observed)
    return _diverged(workload, observed, made[0], diverged[0]) if diverged and made else None


def _diverged(workload: Workload, observed: dict[str, Any], adapter: SglangAdapter, f: Finding) -> str | None:
    """The difference behind the first call where the run departs from the spec."""
    if f.call == "update":
        finished = set(observed["steps"][f.step - 1].get("finished") or [])
        return "clip-max-tokens" if finished & set(adapter.clipped) else None
    held = held_at(adapter.before, observed, f.step)
    if f.call != "schedule" or held is None:
        return None
    want, got = [tuple(p) for p in f.expected], [tuple(p) for p in f.actual]
    verdict = dict(held["tried"])
    running = set(held["running"])
    if held["prefill"] and any(s in running and s not in dict(got) for s, _ in want):
        return "prefill-first"
    for i in range(max(len(want), len(got))):
        e, g = (want[i] if i < len(want) else None), (got[i] if i < len(got) else None)
        if e == g:
            continue
        if e is not None and g is not None and e[0] == g[0]:
            return "page-charged-chunks" if g[1] < e[1] and workload.config.block_size > 1 else None
        if e is None:
            return None
        # PrefillAdder's verdict on it, or, when it was never asked, on the last request it admitted before stopping
        said = verdict.get(e[0]) or (held["tried"][-1][1] if held["tried"] else None)
        if said == "NO_TOKEN":
            return "admission-reserve"
        if workload.config.block_size > 1 and (said == "OTHER" or held["chunked"] is not None):
            return "page-charged-chunks"  # the budget went in whole pages, to the others or to a chunk going on
        return None
    return None


class SglangAdapter:
    """One SGLang Scheduler; each schedule() and update() pair is one iteration of its event_loop_normal."""

    capabilities = Capabilities(max_prompt_len=MAX_PROMPT_TOKENS, max_kv_tokens=MAX_KV_TOKENS, differences=DIFFERENCES,
                                explain=explain)

    def __init__(self, config: Config, sample: Sample, mixed: bool = False) -> None:
        tokens = config.num_blocks * config.block_size
        if tokens > MAX_KV_TOKENS or config.max_num_seqs * (tokens + 16) > MAX_POOL_CELLS:
            raise MemoryError(f"SGLang's pools hold a tensor per KV slot and per request row "
                              f"(mem_cache/memory_pool.py); a pool of {tokens} tokens for {config.max_num_seqs} "
                              f"requests is not built (limits {MAX_KV_TOKENS} tokens, {MAX_POOL_CELLS} request-row "
                              "cells)")
        self.m = load()
        self.block_size = config.block_size
        self.num_tokens = tokens
        self.ctx = publish_config(tokens, config.block_size, config.max_num_seqs, config.max_num_batched_tokens, mixed)
        with self.m["rc"].use_context(self.ctx):
            self.s: Any = build_scheduler(tokens, config.block_size, config.max_num_seqs)
        self.sample = sample
        self.eos = config.eos
        self.reqs: dict[str, Any] = {}  # seq_id -> SGLang Req, in add order
        self.outputs_: dict[str, list[int]] = {}  # the tokens sampled, as the workload's model gave them
        self.last: Any = None  # the batch schedule() returned, for update()
        self.clipped: dict[str, tuple[int, int]] = {}  # seq_id -> (max_tokens, what SGLang cut it to on arrival)
        self.recording = False  # keep what the scheduler holds before each step (explain reads it)
        self.before: list[dict[str, Any]] = []
        self.missing = ("SGLang counts KV per token slot, holds a request in a chunked prefill outside both queues "
                        "and keeps no finished queue: black box only")

    def _add(self, seq_id: str, prompt_len: int, max_tokens: int) -> None:
        m = self.m
        # a prompt of one token id per request, so that no two requests share a prefix
        prompt = array("q", [10 + (len(self.reqs) % (VOCAB - 20))] * prompt_len)
        params = m["SamplingParams"](max_new_tokens=max_tokens, ignore_eos=False)
        params.normalize(None)
        params.verify(VOCAB)
        req = m["batch"].Req(seq_id, "", prompt, params, vocab_size=VOCAB,
                             eos_token_ids=None if self.eos is None else {EOS_ID})
        self.s.init_req_max_new_tokens(req)  # SGLang's own clip to what its pool can hold: kept, not corrected
        if req.sampling_params.max_new_tokens != max_tokens:
            self.clipped[seq_id] = (max_tokens, req.sampling_params.max_new_tokens)
        self.reqs[seq_id] = req
        self.outputs_[seq_id] = []
        self.s._add_request_to_queue(req)

    def _schedule(self) -> dict[str, int]:
        s = self.s
        if self.recording:
            self.before.append(self._held())
            _TRIED[0] = self.before[-1]["tried"]
        try:
            plan = s.get_next_batch_to_run(running_batch=s.running_batch, last_batch=s.last_batch)
        finally:
            _TRIED[0] = None
        s.running_batch = plan.running_batch
        batch = self.last = plan.batch_to_run
        if self.recording:
            held = self.before[-1]
            held["prefill"] = batch is not None and bool(batch.forward_mode.is_extend())
            held["retracted"] = [k for k, r in self.reqs.items() if r.retraction_count > held["retractions"].get(k, 0)]
        if batch is None:
            return {}
        out: dict[str, int] = {}
        if batch.forward_mode.is_extend():
            for r, n in zip(batch.reqs, batch.extend_lens, strict=True):
                out[r.rid] = int(n)
            for r in (batch.decoding_reqs or []):
                out.setdefault(r.rid, 1)
        else:
            for r in batch.reqs:
                out[r.rid] = 1
        return out

    def _held(self) -> dict[str, Any]:
        """What the scheduler holds before a step: the waiting queue and the running batch in order, whether
        admission is shut (batch_is_full), the request in a chunked prefill, the retractions so far; "tried"
        gets PrefillAdder's verdict on each request it is asked about in the step."""
        s = self.s
        last = s.last_batch.reqs if s.last_batch is not None and s.last_batch.forward_mode.is_extend() else []
        running = dict.fromkeys(r.rid for r in [*s.running_batch.reqs, *last] if not r.finished() and
                                r is not s.chunked_req)  # a prefill's requests join the running batch next step
        return {"waiting": [r.rid for r in s.waiting_queue], "running": list(running),
                "shut": bool(s.running_batch.batch_is_full), "chunked": None if s.chunked_req is None else
                s.chunked_req.rid, "retractions": {k: r.retraction_count for k, r in self.reqs.items()},
                "tried": []}

    def _update(self) -> list[str]:
        """The model's forward (Scheduler.run_batch's role): one token for each row SGLang will keep."""
        s, m = self.s, self.m
        batch, self.last = self.last, None
        if batch is None:  # event_loop_normal's on_idle(): its one scheduling effect, the ratio's reset
            s._sched_idled = True
            if s.is_fully_idle():
                s.new_token_ratio_tracker.reset()
            s.last_batch = None
            return []
        s.forward_ct += 1
        batch.forward_iter = s.forward_ct
        if batch.extend_num_tokens:
            s.processed_tokens_counter += batch.extend_num_tokens
        ids = []
        is_extend = batch.forward_mode.is_extend()
        for r in batch.reqs:  # batch_result_processor.py keeps a prefill row's token once its last chunk ran
            if not r.finished() and not r.is_retracted and (not is_extend or r.inflight_middle_chunks <= 0):
                token = self.sample(r.rid, tuple(self.outputs_[r.rid]))
                self.outputs_[r.rid].append(token)
                ids.append(EOS_ID if self.eos is not None and token == self.eos else TOKEN_ID)
            else:
                ids.append(0)
        torch = m["torch"]
        result = m["GenerationBatchResult"](logits_output=None, next_token_ids=torch.tensor(ids, dtype=torch.int64))
        before = {r.rid: r.finished() for r in batch.reqs}
        if is_extend:
            s.batch_result_processor.process_batch_result_prefill(batch, result)
        else:
            s.batch_result_processor.process_batch_result_decode(batch, result)
        s.last_batch = batch
        for r in batch.reqs:  # the tokens kept are the ones sampled
            if len(r.output_ids) != len(self.outputs_[r.rid]):
                raise AssertionError(f"adapter defect: {r.rid} has {len(r.output_ids)} output ids in SGLang, "
                                     f"{len(self.outputs_[r.rid])} sampled")
        return [r.rid for r in batch.reqs if r.finished() and not before[r.rid]]

    def add(self, seq_id: str, prompt_len: int, max_tokens: int) -> None:
        if prompt_len > MAX_PROMPT_TOKENS:
            raise MemoryError(f"SGLang keeps every prompt token id in an array (Req.origin_input_ids); a prompt of "
                              f"{prompt_len} tokens is not built (limit {MAX_PROMPT_TOKENS})")
        with self.m["rc"].use_context(self.ctx):
            self._add(seq_id, prompt_len, max_tokens)

    def schedule(self) -> dict[str, int]:
        with self.m["rc"].use_context(self.ctx):
            return self._schedule()

    def update(self) -> list[str]:
        with self.m["rc"].use_context(self.ctx):
            return self._update()

    def outputs(self) -> dict[str, list[int]]:
        return {k: list(v) for k, v in self.outputs_.items()}

    def snapshot(self) -> None:
        return None  # black box: self.missing says why


def open_target(target: str, mixed: str = "0") -> Callable[[Config, Sample], SglangAdapter]:
    """A factory of adapters over the installed sglang; ``mixed=1``: SGLang's --enable-mixed-chunk."""
    if target != "sglang":
        raise LoadError(f"the SGLang adapter drives the installed sglang package: give the target 'sglang', not "
                        f"{target!r}")
    if mixed not in ("0", "1"):
        raise LoadError(f"option mixed={mixed!r}: write mixed=1 or mixed=0")
    engine = load()
    if engine["version"] != SGLANG_VERSION:
        logging.getLogger(__name__).warning("sglang %s is installed; this adapter was checked against %s",
                                            engine["version"], SGLANG_VERSION)
    return lambda config, sample: SglangAdapter(config, sample, mixed == "1")
