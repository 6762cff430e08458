"""nano-vllm's scheduler, driven black box through its own classes (docs/engines.md, "nano-vllm").

    schedcheck check /path/to/nano-vllm --adapter conformance.engines.nanovllm
    schedcheck check /path/to/nano-vllm --adapter 'conformance.engines.nanovllm?strict=1'

The target is a nano-vllm source checkout (the folder that holds ``nanovllm/``). The adapter
imports nano-vllm's real ``Scheduler``, ``BlockManager``, ``Sequence`` and ``SamplingParams``
from it and only translates: it calls ``Scheduler.schedule()`` and ``Scheduler.postprocess()``
the way ``LLMEngine.step()`` does (llm_engine.py), with the workload's sample function standing
in for the model runner. It corrects nothing nano-vllm decides.

What the import needs: numpy and xxhash (block_manager.py). nano-vllm's ``nanovllm/__init__.py``
imports the whole engine (torch, transformers, the model runner) and ``config.py`` imports
transformers for ``AutoConfig``, which only ``Config.__post_init__`` uses; the scheduler reads
five attributes of its config (scheduler.py, ``Scheduler.__init__``). So the package's
``__init__.py`` is not run, and while the scheduler modules import, ``nanovllm.config`` is a
stand-in whose ``Config`` is a plain record of nano-vllm's config fields (``EngineConfig``
below). The modules are imported under their own names (``nanovllm.*``), with the checkout on
``sys.path`` only during the import; afterwards ``sys.modules`` is as it was, so neither an
installed nanovllm nor the checkout's top-level ``bench.py`` shadows anything.

Option ``strict=1`` applies the one check of nano-vllm's ``Config.__post_init__`` that bears on
scheduling: a block size that is a multiple of 256 (config.py asserts it for its attention
kernel); with it, every workload with another block size fails at creation, as nano-vllm's
engine would refuse it. Without it (the default) the scheduler runs at the workload's block size.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from conformance.adapters import LoadError
from conformance.capabilities import Capabilities
from spec.model import Config, Sample

PINNED_COMMIT = "bb823b3e06983d71485a8e1f23715ebd87d98ef8"  # the nano-vllm commit this adapter was checked at
MODULES = ("sampling_params", "engine.sequence", "engine.block_manager", "engine.scheduler")
MAX_PROMPT_TOKENS = 2**24  # nano-vllm holds every prompt token id in a list (sequence.py); larger is refused
MAX_KV_BLOCKS = 2**20  # nano-vllm builds one Block object per KV block (block_manager.py); 2**20 take about 1.4 s
ENGINE_BLOCK_MULTIPLE = 256  # config.py: assert kvcache_block_size % 256 == 0


@dataclass
class EngineConfig:
    """nano-vllm's Config fields, without its __post_init__ (which loads a Hugging Face model folder)."""

    model: str
    max_num_batched_tokens: int
    max_num_seqs: int
    max_model_len: int
    eos: int
    kvcache_block_size: int
    num_kvcache_blocks: int
    gpu_memory_utilization: float = 0.9
    tensor_parallel_size: int = 1
    enforce_eager: bool = True
    hf_config: None = None


@dataclass(frozen=True)
class NanoVllm:
    """The imported nano-vllm modules of one checkout."""

    root: Path
    scheduler: ModuleType
    sequence: ModuleType
    sampling_params: ModuleType


@contextmanager
def _own_modules(root: Path) -> Iterator[None]:
    """While inside: ``nanovllm`` is the checkout's package (its __init__.py not run) with a stand-in config.

    Every ``nanovllm*`` entry of sys.modules and sys.path are restored on the way out.
    """
    saved = {k: v for k, v in sys.modules.items() if k == "nanovllm" or k.startswith("nanovllm.")}
    for k in saved:
        del sys.modules[k]
    package = root / "nanovllm"
    spec = importlib.util.spec_from_file_location("nanovllm", package / "__init__.py",
                                                  submodule_search_locations=[str(package)])
    assert spec is not None
    sys.modules["nanovllm"] = importlib.util.module_from_spec(spec)  # a package whose __init__.py is not run
    config = ModuleType("nanovllm.config", "stand-in: nano-vllm's Config without transformers")
    config.Config = EngineConfig  # type: ignore[attr-defined]
    sys.modules["nanovllm.config"] = config
    sys.path.insert(0, str(root))
    try:
        yield
    finally:
        sys.path.remove(str(root))
        for k in [k for k in sys.modules if k == "nanovllm" or k.startswith("nanovllm.")]:
            del sys.modules[k]
        sys.modules.update(saved)


_LOADED: dict[Path, NanoVllm] = {}


def load(target: str) -> NanoVllm:
    """Import nano-vllm's scheduler modules from the checkout at `target` (once per checkout)."""
    root = Path(target).resolve()
    if root in _LOADED:
        return _LOADED[root]
    if not (root / "nanovllm" / "engine" / "scheduler.py").is_file():
        raise LoadError(f"{target!r} is not a nano-vllm checkout: it has no nanovllm/engine/scheduler.py; pass the "
                        f"folder that holds nanovllm/ (git clone https://github.com/GeeeekExplorer/nano-vllm)")
    for dep in ("numpy", "xxhash"):
        if importlib.util.find_spec(dep) is None:
            raise LoadError(f"nano-vllm's block_manager.py imports {dep}, which is not installed: "
                            f"pip install {dep}")
    mods: dict[str, ModuleType] = {}
    with _own_modules(root):
        for name in MODULES:
            try:
                mods[name] = importlib.import_module("nanovllm." + name)
            except Exception as e:
                raise LoadError(f"importing nanovllm.{name} from {target!r} raised {type(e).__name__}: {e}; "
                                f"this adapter was checked at nano-vllm commit {PINNED_COMMIT}") from None
    for mod, attr in (("engine.scheduler", "Scheduler"), ("engine.sequence", "Sequence"),
                      ("engine.sequence", "SequenceStatus"), ("sampling_params", "SamplingParams")):
        if not hasattr(mods[mod], attr):
            raise LoadError(f"nanovllm.{mod} in {target!r} has no {attr}; this adapter was checked at "
                            f"nano-vllm commit {PINNED_COMMIT}")
    engine = NanoVllm(root, mods["engine.scheduler"], mods["engine.sequence"], mods["sampling_params"])
    _LOADED[root] = engine
    return engine


class _Unused:
    """The token handed to postprocess() for a row whose token nano-vllm discards (a prefill chunk that does not
    catch up): the model runner samples every row, the suite's sample function is called only for kept ones."""

    def __repr__(self) -> str:
        return "<discarded>"


UNUSED = _Unused()


class NanoVllmAdapter:
    """One nano-vllm Scheduler; the driver's calls translated to the ones LLMEngine.step() makes."""

    # scheduler.py asserts `scheduled_seqs` when it has nothing to do; larger sizes are not built (above)
    capabilities = Capabilities(idle_schedule=False, max_prompt_len=MAX_PROMPT_TOKENS, max_num_blocks=MAX_KV_BLOCKS)

    def __init__(self, engine: NanoVllm, config: Config, sample: Sample, strict: bool = False) -> None:
        if strict and config.block_size % ENGINE_BLOCK_MULTIPLE:
            raise ValueError(f"nano-vllm's Config refuses kvcache_block_size={config.block_size}: config.py asserts "
                             f"a multiple of {ENGINE_BLOCK_MULTIPLE} (strict=1)")
        if config.num_blocks > MAX_KV_BLOCKS:
            raise MemoryError(f"nano-vllm's BlockManager builds one Block object per KV block (block_manager.py); "
                              f"a cache of {config.num_blocks} blocks is not built (limit {MAX_KV_BLOCKS})")
        self.engine = engine
        self.sample = sample
        self.block_size = config.block_size
        self.ignore_eos = config.eos is None  # nano-vllm's way to say "no end-of-sequence token"
        self.config = EngineConfig(model=str(engine.root), max_num_batched_tokens=config.max_num_batched_tokens,
                                   max_num_seqs=config.max_num_seqs,
                                   max_model_len=config.num_blocks * config.block_size,
                                   eos=-1 if config.eos is None else config.eos,
                                   kvcache_block_size=config.block_size, num_kvcache_blocks=config.num_blocks)
        self.sched: Any = engine.scheduler.Scheduler(self.config)
        self.finished_status: Any = engine.sequence.SequenceStatus.FINISHED
        self.seqs: dict[str, Any] = {}  # seq_id -> nano-vllm Sequence, in add order
        self.names: dict[int, str] = {}  # nano-vllm's integer seq_id -> the workload's seq_id
        self.last: tuple[list[Any], bool] | None = None  # schedule()'s (seqs, is_prefill)
        self.missing = ("nano-vllm's Scheduler keeps no blocks_used, num_preemptions or finished queue, and its "
                        "waiting queue holds a sequence in a chunked prefill: black box only")

    def add(self, seq_id: str, prompt_len: int, max_tokens: int) -> None:
        if prompt_len > MAX_PROMPT_TOKENS:
            raise MemoryError(f"nano-vllm keeps every prompt token id in a list (sequence.py, Sequence.__init__); "
                              f"a prompt of {prompt_len} tokens is not built (limit {MAX_PROMPT_TOKENS})")
        # Each request's prompt repeats its own token id, distinct from every other request's first block,
        # so nano-vllm's prefix cache can match a sequence only against blocks it computed itself.
        params = self.engine.sampling_params.SamplingParams(max_tokens=max_tokens, ignore_eos=self.ignore_eos)
        seq = self.engine.sequence.Sequence([len(self.seqs)] * prompt_len, params)
        # LLMEngine sets Sequence.block_size for the whole process (llm_engine.py); set per sequence instead, so
        # two schedulers with different block sizes in one process each see their own.
        seq.block_size = self.block_size
        self.seqs[seq_id] = seq
        self.names[seq.seq_id] = seq_id
        self.sched.add(seq)

    def schedule(self) -> dict[str, int]:
        if self.sched.is_finished():
            # LLMEngine.generate() steps only while not is_finished(): nano-vllm's schedule() is never asked with
            # nothing to do (it asserts). The driver knows it from `capabilities`; this covers callers that do not.
            self.last = ([], False)
            return {}
        seqs, is_prefill = self.sched.schedule()
        self.last = (list(seqs), bool(is_prefill))
        batch: dict[str, int] = {}
        for seq in seqs:
            name = self.names[seq.seq_id]
            if name in batch:  # a dict cannot say it; never seen at the pinned commit
                raise RuntimeError(f"nano-vllm's schedule() returned {name} twice in one step")
            batch[name] = seq.num_scheduled_tokens
        return batch

    def update(self) -> list[str]:
        """The model's step: one token per scheduled row, then postprocess() as LLMEngine.step() calls it."""
        assert self.last is not None, "update() before schedule()"
        seqs, is_prefill = self.last
        self.last = None
        if not seqs:
            return []  # the idle step answered by schedule() itself
        tokens: list[Any] = []
        for seq in seqs:
            # postprocess() keeps a row's token unless it is a prefill chunk that leaves the sequence behind
            kept = not is_prefill or seq.num_cached_tokens + seq.num_scheduled_tokens >= seq.num_tokens
            tokens.append(self.sample(self.names[seq.seq_id], tuple(seq.completion_token_ids)) if kept else UNUSED)
        self.sched.postprocess(seqs, tokens, is_prefill)
        for seq, token in zip(seqs, tokens, strict=True):
            if (seq.last_token is token) != (token is not UNUSED):  # the token kept is the one sampled, or none
                raise AssertionError(f"adapter defect: postprocess() {'kept' if token is UNUSED else 'dropped'} "
                                     f"{self.names[seq.seq_id]}'s token, which the adapter took for "
                                     f"{'discarded' if token is UNUSED else 'kept'}")
        return [self.names[seq.seq_id] for seq in seqs if seq.status == self.finished_status]

    def outputs(self) -> dict[str, list[int]]:
        return {name: list(seq.completion_token_ids) for name, seq in self.seqs.items()}

    def snapshot(self) -> None:
        return None  # black box: self.missing says why


def open_target(target: str, strict: str = "0") -> Callable[[Config, Sample], NanoVllmAdapter]:
    """A factory of adapters over the nano-vllm checkout at `target`; ``strict=1``: nano-vllm's block-size check."""
    if strict not in ("0", "1"):
        raise LoadError(f"option strict={strict!r}: write strict=1 or strict=0")
    engine = load(target)
    return lambda config, sample: NanoVllmAdapter(engine, config, sample, strict == "1")
