"""Render a counterexample three ways: a step table, a replayable JSON trace, a standalone pytest file.

The table shows the shortest history up to the first divergence in the card's
style: per call the submission's value and the spec's (``same`` where they agree),
blocks_used, the queues and every sequence's num_computed/num_tokens/num_blocks,
then the spec's reasons for the diverging step and the rule id.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from conformance.adapters import LoadError, load_target
from conformance.beside import OTHER_BASE
from conformance.checks.checkers import expected_trace
from conformance.checks.history import group_of, other_workload, parse_prelude, repeats
from conformance.checks.workload import replay
from conformance.reports.report import Counterexample
from spec.explain import header
from spec.trace import trace_to_json


def _batch(b: list[list[Any]] | None) -> str:
    return "-" if b is None else "{" + ", ".join(f"{k}: {n}" for k, n in b) + "}"


def _ids(x: list[str] | None) -> str:
    return "-" if x is None else "[" + ", ".join(x) + "]"


def _both(got: str, want: str) -> str:
    return got if got == want else f"{got} (spec {want})"


def _seqs(snap: dict[str, Any] | None) -> str:
    if not snap:
        return ""
    live = [i for i in snap["running"] + snap["waiting"]]
    return "  ".join(f"{i} {_value(snap['seqs'][i]['num_computed'])}/{_value(snap['seqs'][i]['num_tokens'])}/"
                     f"{_value(snap['seqs'][i]['num_blocks'])}" for i in live if i in snap["seqs"])


def _value(x: int | None) -> str:
    """A snapshot's count; "-" where the submission does not give it."""
    return "-" if x is None else str(x)


TABLE_STEPS, HEAD_STEPS, NEAR_STEPS = 30, 3, 8  # a step table longer than TABLE_STEPS shows its first HEAD_STEPS
# steps and the NEAR_STEPS up to its divergence (a fault that shows after a thousand steps reads in one screen)


def shown_steps(total: int, divergence: int | None) -> list[int | None]:
    """The steps (1-based) a step table of `total` steps shows, None where a run of them is left out: every one
    when they are few, else the first ones and those up to two past the divergence (or the last ones)."""
    if total <= TABLE_STEPS:
        return list(range(1, total + 1))
    end = total if divergence is None else min(max(divergence, 1) + 2, total)
    keep = sorted(set(range(1, HEAD_STEPS + 1)) | set(range(max(1, end - NEAR_STEPS - 1), end + 1)))
    out: list[int | None] = []
    for k in keep:
        if out and out[-1] is not None and k > out[-1] + 1:
            out.append(None)
        out.append(k)
    return out + ([None] if end < total else [])


def left_out(shown: list[int | None], i: int, total: int) -> tuple[int, int]:
    """The first and last step of the run left out at shown[i] (a None)."""
    after = shown[i + 1] if i + 1 < len(shown) else None
    return (shown[i - 1] or 0) + 1, total if after is None else after - 1


def render(cx: Counterexample, observed: dict[str, Any] | None) -> str:
    """The step table of a counterexample up to its first divergence, marked with >>: the spec's run beside
    `observed`, the submission's run that shows the finding (conformance.checks.workload ``replay``; None: the
    spec's alone)."""
    f = cx.finding
    trace: dict[str, Any] = trace_to_json(expected_trace(cx.workload))
    lines = [f"FAIL  {f.check}: {f.message}   [{f.rule}]"] + header(cx.workload)
    lines.append("      (seqs: num_computed/num_tokens/num_blocks after the call; submission's where visible)")
    cols = f"   {'step':>4}  {'call':<9} {'submission':<22} {'spec':<18} {'blocks_used':<12} {'waiting':<14} running"
    lines += ["", cols]
    last = min(max(f.step, 1), len(trace["steps"]))
    got_steps = observed["steps"] if observed is not None else []
    rows = shown_steps(last, f.step)
    for j, k in enumerate(rows):
        if k is None:
            a, b = left_out(rows, j, last)
            lines.append(f"   {'...':>4}  steps {a} to {b} left out ({b - a + 1} steps)")
            continue
        i, want = k - 1, trace["steps"][k - 1]
        got = got_steps[i] if i < len(got_steps) else {}
        for call, snap_key in (("schedule", "after_schedule"), ("update", "after_update")):
            w_val = _batch(want["schedule"]) if call == "schedule" else _ids(want["finished"])
            g_val = (_batch(got.get("schedule")) if call == "schedule" else _ids(got.get("finished"))) \
                if observed is not None else w_val
            spec_snap, sub_snap = want[snap_key], got.get(snap_key)
            snap = sub_snap or spec_snap
            used = _both(_value(snap["blocks_used"]), str(spec_snap["blocks_used"]))
            waiting = _both(_ids(snap["waiting"]), _ids(spec_snap["waiting"]))
            running = _both(_ids(snap["running"]), _ids(spec_snap["running"]))
            mark = ">>" if want["step"] == f.step and call == f.call else "  "
            shown = "same" if g_val == w_val else w_val
            lines.append(f"{mark} {want['step']:>4}  {call:<9} {g_val:<22} {shown:<18} {used:<12} {waiting:<14} "
                         f"{running}")
            seqs = _seqs(snap)
            if seqs:
                lines.append(f"{'':>16}{seqs}")
    if f.explanation:
        lines.append(f"      spec at step {f.step}:")
        lines += [f"        {e}" for e in f.explanation]
    if f.call == "outputs" or f.check == "equivalence":
        lines.append(f"      final outputs: expected {f.expected}, got {f.actual}")
    lines.append(f"      first found by: {cx.source}; size: {cx.size['requests']} requests, {cx.size['steps']} steps")
    return "\n".join(lines)


def shown_run(cx: Counterexample, target: str, adapter: str | None, white_box: bool) -> dict[str, Any] | None:
    """The submission's run of a counterexample as `schedcheck replay` makes it: on a freshly loaded copy, after
    the prelude the finding needs (None when that copy cannot be made)."""
    try:
        judged, _ = replay(cx.workload, cx.prelude, load_target(target, adapter), white_box)
    except LoadError:
        return None
    found = judged.findings.get(cx.check)
    return judged.shown(found if found is not None else cx.finding)


def trace_json(cx: Counterexample) -> dict[str, Any]:
    """The spec's trace of the counterexample plus the finding; `schedcheck replay` reads it."""
    extra = {"prelude": cx.prelude} if cx.prelude is not None else {}  # replay runs it first
    return {**trace_to_json(expected_trace(cx.workload)), **extra,
            "finding": {k: v for k, v in cx.to_json().items() if k != "prelude"} | {"workload": None}}


def pytest_file(cx: Counterexample, submission: str, out_dir: Path) -> str:
    """A pytest file that reproduces the failure with only the submission (canonical API) and pytest."""
    trace = expected_trace(cx.workload)
    w = cx.workload
    c = w.config
    rel = os.path.relpath(Path(submission).resolve(), out_dir.resolve())
    eos_at = {k: list(v) for k, v in w.sample.eos_at}
    lines = [
        f'"""Counterexample: {cx.finding.check} [{cx.finding.rule}], step {cx.finding.step}.',
        "",
        f"{cx.finding.message}",
        'Run: pytest THIS_FILE (set SCHEDCHECK_SUBMISSION to test another file)."""',
        "import importlib.util, os, pathlib, sys",
        "",
        f"PATH = os.environ.get('SCHEDCHECK_SUBMISSION') or pathlib.Path(__file__).parent / {rel!r}",
        "sys.path.insert(0, str(pathlib.Path(PATH).resolve().parent))  # helpers beside the submission",
        "spec = importlib.util.spec_from_file_location('submission', PATH)",
        "m = importlib.util.module_from_spec(spec)",
        "spec.loader.exec_module(m)",
        f"BASE = {dict(w.sample.base)!r}",
        f"EOS_AT = {eos_at!r}  # output positions that sample eos",
        "",
        "",
        "def sample(seq):",
        f"    return {c.eos!r} if len(seq.output) in EOS_AT.get(seq.seq_id, ()) else BASE[seq.seq_id] + "
        "len(seq.output)",
        "",
        "",
    ]
    lanes = [("s", "seqs", trace)]
    if cx.finding.rule == "H.instances":  # the second instance (created first) runs beside, interleaved
        other = other_workload(w)
        lines += ["def sample_t(seq):  # the second instance's model: other tokens, same eos positions",
                  f"    return sample(seq) if len(seq.output) in EOS_AT.get(seq.seq_id, ()) else "
                  f"sample(seq) + {OTHER_BASE}", "", ""]
    name = f"test_{cx.finding.check}_{cx.finding.rule.replace('.', '_').lower()}"
    runs = history_runs(cx)
    lines.append("def run_case():" if runs > 1 else f"def {name}():")
    if cx.finding.rule == "H.instances":
        lines.append(_new("t", other.config, "sample_t") + "  # a second instance, another config")
        lanes.append(("t", "seqs_t", expected_trace(other)))
    lines.append(_new("s", c, "sample"))
    lines += [f"    {seqs} = {{}}" for _, seqs, _ in lanes] + ["    kept = []  # every returned value, re-checked at "
                                                                "the end"]
    lines += _calls(cx, lanes)
    if runs > 1:  # the earlier runs in the process are the history the failure needs
        lines += ["", "", f"def {name}():", f"    for _ in range({runs}):  # one after another, as replay runs it",
                  "        run_case()"]
    return "\n".join(lines) + "\n"


def history_runs(cx: Counterexample) -> int:
    """How many runs of the case, one after another in one process, its history prelude asks for: the earlier runs
    of the same workload and the case's own, or the repeat count (1 without such a prelude)."""
    before, _ = parse_prelude(cx.prelude)
    if any(w != cx.workload for w in before):
        return 1
    return max(len(before) + 1, repeats(cx.prelude))


def _new(var: str, c: Any, sample: str) -> str:
    return (f"    {var} = m.Scheduler(num_blocks={c.num_blocks}, block_size={c.block_size}, "
            f"max_num_seqs={c.max_num_seqs}, max_num_batched_tokens={c.max_num_batched_tokens}, sample_fn={sample}, "
            f"eos={c.eos!r})")


def _calls(cx: Counterexample, lanes: list[tuple[str, str, Any]]) -> list[str]:
    """The calls of each lane, step by step and interleaved, with the spec's results asserted."""
    f = cx.finding
    lines: list[str] = []
    whole = len(lanes) > 1 or f.call == "outputs" or f.rule in ("H.retained", "H.aliased")
    for k in range(1, max(len(t.steps) for _, _, t in lanes) + 1):
        live = [(var, seqs, t.steps[k - 1]) for var, seqs, t in lanes if k <= len(t.steps)]
        for var, seqs, step in live:
            for r in (r for r in next(t for v, _, t in lanes if v == var).workload.requests if r.arrival == k):
                lines.append(f"    {seqs}[{r.seq_id!r}] = m.Sequence({r.seq_id!r}, {r.prompt_len}, "
                             f"{r.max_tokens}); {var}.add({seqs}[{r.seq_id!r}])")
            lines.append(f"    batch = {var}.schedule()  # step {k}")
            lines.append("    kept.append((batch, list(batch.items())))")
            lines.append(f"    assert list(batch.items()) == {[tuple(p) for p in step.batch]!r}")
            if f.rule == "H.fresh_dict":
                lines.append("    batch.clear()  # a caller may change the returned dict; update() must not notice")
        for var, seqs, step in live:
            lines.append(f"    done = {var}.update()")
            lines.append("    kept.append((done, list(done)))")
            lines.append(f"    assert [q.seq_id for q in done] == {list(step.finished)!r}")
            lines.append(f"    assert all(q is {seqs}[q.seq_id] for q in done), 'update() must return the added "
                         "objects'")
        if not whole and k >= f.step:
            return lines
    for _, seqs, t in lanes:
        outputs = {key: list(v) for key, v in sorted(t.outputs().items())}
        lines.append(f"    assert {{k: list(q.output) for k, q in {seqs}.items()}} == {outputs!r}")
    lines += ["    for value, then in kept:  # nothing returned may change afterwards, or be returned twice",
              "        assert (list(value.items()) if isinstance(value, dict) else list(value)) == then",
              "    assert len({id(value) for value, _ in kept}) == len(kept)"]
    return lines


def adapter_pytest_file(cx: Counterexample, out_dir: Path, trace_name: str, target: str, adapter: str | None) -> str:
    """A pytest file that replays the trace beside it through the same adapter (or none), as `schedcheck replay`
    does.

    It imports schedcheck (an adapter does too). Paths are kept relative to the file, so the folder can move.
    """
    f = cx.finding

    def where(name: str | None) -> str:  # a path beside the test file, or the name as given (a module, 'vllm', ...)
        if name is None or not Path(name.partition("?")[0]).exists():
            return repr(name)
        path, sep, options = name.partition("?")
        rel = os.path.relpath(Path(path).resolve(), out_dir.resolve())
        return f"str(HERE / {rel!r}) + {sep + options!r}"

    return "\n".join([
        f'"""Counterexample: {f.check} [{f.rule}], step {f.step}, under policy {cx.workload.config.policy}.',
        "",
        f"{f.message}",
        f'Run: pytest THIS_FILE (replays {trace_name} on the target through its adapter, as schedcheck replay)."""',
        "import json",
        "import pathlib",
        "",
        "from conformance.adapters import load_target",
        "from conformance.checks.workload import probe_white_box, replay",
        "from spec.trace import load_workload",
        "",
        "HERE = pathlib.Path(__file__).parent",
        f"TARGET = {where(target)}",
        f"ADAPTER = {where(adapter)}",
        f"TRACE = HERE / {trace_name!r}",
        "",
        "",
        f"def test_{f.check}_{f.rule.replace('.', '_').lower()}():",
        "    white_box = probe_white_box(load_target(TARGET, ADAPTER)).on  # on a copy of its own, as check",
        "    prelude = json.loads(TRACE.read_text()).get('prelude')  # the earlier runs the finding needs",
        "    judged, _ = replay(load_workload(str(TRACE)), prelude, load_target(TARGET, ADAPTER), white_box)",
        "    failures = [f'{check}: [{x.rule}] {x.message}' for check, x in judged.findings.items() if x is not None]",
        "    assert not failures, failures",
        ""])


def write_all(cx: Counterexample, index: int, out_dir: Path, submission: str | None,
              adapter: str | None = None) -> list[Path]:
    """Write NNNN_<check>.json (replayable) and NNNN_<check>_test.py: standalone for a file submission with
    the canonical API, through the adapter (schedcheck installed) for any target checked through one."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{index:04d}_{cx.check}"
    paths = [out_dir / f"{stem}.json"]
    paths[0].write_text(json.dumps(trace_json(cx), indent=2, sort_keys=True) + "\n")
    if submission is None:
        return paths
    if adapter is not None or group_of(cx.prelude):  # a group of hundreds of instances: replayed, not spelled out
        paths.append(out_dir / f"{stem}_test.py")
        paths[1].write_text(adapter_pytest_file(cx, out_dir, paths[0].name, submission, adapter))
    elif submission.endswith(".py") and Path(submission).is_file():
        paths.append(out_dir / f"{stem}_test.py")
        paths[1].write_text(pytest_file(cx, submission, out_dir))
    return paths
