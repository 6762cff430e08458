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

from conformance.adapters import Factory, LoadError
from conformance.capabilities import Capabilities, Difference
from conformance.checks.checkers import Finding, differential, expected_trace, hygiene
from conformance.engines.recording import held_at, run_recording
from spec.model import Config, Sample
from spec.trace import Workload

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


# nano-vllm's known differences from the card, each with where its scheduler does it (docs/engines.md, "nano-vllm");
# the report's causes are these (explain), never a catalog bug nano-vllm does not have
DIFFERENCES = (
    Difference("block-size-1", "at block size 1 no block is ever added for a growing sequence (len(seq) % block_size "
               "== 1 never holds), so more sequences fit, until update() raises IndexError",
               "block_manager.py:104, 107, 116", ("grow_on_mod_one",)),
    Difference("prefill-first", "a step that admits anyone runs none of the running sequences: they wait while any "
               "waiting sequence gets tokens", "scheduler.py:54-55", ("prefill_or_decode",)),
    Difference("decode-admits-nothing", "a step that runs the running sequences admits nobody, not even the sequence "
               "it has just preempted", "scheduler.py:57-73", ("prefill_or_decode",)),
    Difference("only-first-chunks", "only the first sequence of a step may take a partial chunk: a head whose prompt "
               "exceeds what is left of the budget is not admitted once anyone else is scheduled",
               "scheduler.py:42", ("chunk_only_first",)),
    Difference("whole-prompt", "admission reserves the blocks of the whole prompt, not of the chunk it schedules",
               "scheduler.py:36-38, 44-45; block_manager.py:61, 90-91", ("reserve_whole_prompt",)),
    Difference("max-num-seqs-per-step", "max_num_seqs bounds the sequences of one step's batch, not the running set: "
               "a step admits while the running set is full", "scheduler.py:30, 58"),
    Difference("prefix-cache", "a re-admitted sequence reuses the full blocks it computed before its preemption "
               "(prefix caching), so it recomputes fewer tokens than the card's recompute",
               "block_manager.py:58-73, 92; freed blocks keep their hash until reused (47-49, 53-56)"),
    Difference("decode-not-charged", "a step that runs the running sequences gives each one token whatever the "
               "budget: such a step can schedule more than max_num_batched_tokens", "scheduler.py:57-70",
               ("decode_not_charged",)),
    Difference("engine-size", "a prompt or a cache larger than the lists of token ids and Block objects nano-vllm "
               "builds (the adapter refuses it)", "sequence.py:21; block_manager.py:30"),
)


def explain(factory: Factory, workload: Workload, finding: Finding) -> str | None:
    """Which known difference made `finding`, read from nano-vllm's own state: the workload runs again on an
    instance that keeps what its scheduler held before each schedule(), and the step where the run first departs
    from the spec says which. A finding of a whole run (liveness, a probe) is the difference the run first shows."""
    observed, made = run_recording(factory, workload)
    if finding.check == "invariants" and finding.rule == "I2" and finding.call == "schedule" and made:
        before = held_at(made[0].before, observed, finding.step)  # a batch over the budget, wherever the run goes next
        return "decode-not-charged" if before is not None and not before["prefill"] else None
    raised = hygiene(workload, observed)
    if raised:
        return _raised(workload, raised[0])
    diverged = differential(workload, observed)
    return _diverged(workload, observed, made[0], diverged[0]) if diverged and made else None


def _raised(workload: Workload, f: Finding) -> str | None:
    if f.rule == "H.raised" and "IndexError" in f.message and workload.config.block_size == 1:
        return "block-size-1"
    return "engine-size" if f.rule == "H.raised" and "MemoryError: nano-vllm" in f.message else None


def _diverged(workload: Workload, observed: dict[str, Any], adapter: NanoVllmAdapter, f: Finding) -> str | None:
    """The difference behind the first step where schedule() departs from the spec."""
    before = held_at(adapter.before, observed, f.step)
    if f.call != "schedule" or before is None:
        return None
    want, got = [tuple(p) for p in f.expected], [tuple(p) for p in f.actual]
    rules = [e.rule for e in expected_trace(workload).steps[f.step - 1].events]
    waiting, running = before["waiting"], before["running"]
    if not before["prefill"]:  # a decode step: the card would have admitted someone in it
        if "P2" not in rules:
            return None
        if "P1.preempt" in rules or "P1.skip_self" in rules:
            return "decode-admits-nothing"
        head = next(iter(waiting.values()), None)
        return "whole-prompt" if head is not None and head[1] == -1 else None
    if any(s in running and s not in dict(got) for s, _ in want):
        # with the running set full the card admits nobody and runs it: only a per-step limit let anyone in
        full = len(running) >= workload.config.max_num_seqs and any(s not in running for s, _ in got)
        return "max-num-seqs-per-step" if full else "prefill-first"
    for i in range(max(len(want), len(got))):
        e, g = (want[i] if i < len(want) else None), (got[i] if i < len(got) else None)
        if e == g:
            continue
        if e is not None and g is not None and e[0] == g[0]:
            cached = waiting.get(e[0], (0, 0))[1]
            return "prefix-cache" if g[1] < e[1] and cached else None
        if e is not None:
            left, room = waiting.get(e[0], (0, 0))
            if room == -1:
                return "whole-prompt"
            spent = sum(n for _, n in got[:i])
            return "only-first-chunks" if i > 0 and workload.config.max_num_batched_tokens - spent < left else None
        return "max-num-seqs-per-step" if "P2.full" in rules else None
    return None


class _Unused:
    """The token handed to postprocess() for a row whose token nano-vllm discards (a prefill chunk that does not
    catch up): the model runner samples every row, the suite's sample function is called only for kept ones."""

    def __repr__(self) -> str:
        return "<discarded>"


UNUSED = _Unused()


class NanoVllmAdapter:
    """One nano-vllm Scheduler; the driver's calls translated to the ones LLMEngine.step() makes."""

    # scheduler.py asserts `scheduled_seqs` when it has nothing to do; larger sizes are not built (above)
    capabilities = Capabilities(idle_schedule=False, max_prompt_len=MAX_PROMPT_TOKENS, max_num_blocks=MAX_KV_BLOCKS,
                                differences=DIFFERENCES, explain=explain)

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
        self.recording = False  # keep what the scheduler holds before each schedule() (explain reads it)
        self.before: list[dict[str, Any]] = []
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
        if self.recording:
            self.before.append(self._held())
        seqs, is_prefill = self.sched.schedule()
        self.last = (list(seqs), bool(is_prefill))
        if self.recording:
            self.before[-1]["prefill"] = bool(is_prefill)
        batch: dict[str, int] = {}
        for seq in seqs:
            name = self.names[seq.seq_id]
            if name in batch:  # a dict cannot say it; never seen at the pinned commit
                raise RuntimeError(f"nano-vllm's schedule() returned {name} twice in one step")
            batch[name] = seq.num_scheduled_tokens
        return batch

    def _held(self) -> dict[str, Any]:
        """The waiting sequences (seq_id -> (tokens left to compute, blocks the prefix cache has for it, or -1: no
        room for its prompt; None once it holds blocks)) and the running ones, as the scheduler holds them now."""
        bm = self.sched.block_manager
        waiting = {self.names[s.seq_id]: (s.num_tokens - s.num_cached_tokens,
                                          None if s.block_table else bm.can_allocate(s)) for s in self.sched.waiting}
        return {"waiting": waiting, "running": {self.names[s.seq_id] for s in self.sched.running}}

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
