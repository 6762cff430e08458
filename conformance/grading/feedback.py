"""What a student reads about a failure: a counterexample to replay, a load error at its line, a misnamed file.

Every text here reaches a student's Gradescope page, so it has to be something a student
can act on without the grader's files: a failed item carries its smallest failing case as
a step table with the spec's reasons, plus the same case as a JSON file for `schedcheck
replay` and as a pytest file; a module that does not load is shown as `file:line`, the line
and a caret; a submission without p07_scheduler.py lists what was found. For a program in
another language (a folder with a wire.toml) every rerun names its command, as `schedcheck
check --wire` does (conformance.wire.cli.typed), and the pytest file replays the case through
it (conformance.reports.traces.adapter_pytest_file). Everything the submission controls is
escaped and bounded (conformance.grading.escape).
"""

from __future__ import annotations

import ast
import os
import re
import shlex
from dataclasses import replace
from pathlib import Path, PurePath
from typing import Any

from conformance.checks.checkers import Finding, expected_trace
from conformance.checks.history import REPEAT_MAX, group_json, other_workload, prelude_json, repeat_json
from conformance.grading.escape import TEXT_LIMIT, cut, json_inert, md, md_block, md_name, visible_json
from conformance.grading.observe import Case
from conformance.grading.tables import markdown_table
from conformance.sandbox.program import WIRE_FILE, is_wire, read_regular, wire_command
from conformance.wire.cli import ADAPTER as WIRE_ADAPTER
from conformance.wire.cli import typed
from spec.trace import workload_to_json

MODULE = "p07_scheduler.py"
LISTED_FILES = 20  # files of a submission listed when p07_scheduler.py is missing
WALK_LIMIT = 500  # entries of a submission folder looked at to list them
SANDBOX_DIR = re.compile(r"/[^\s'\"]*schedcheck-sandbox-[^/\s'\"]+/")  # the child's random directory
SYNTAX_ERRORS = ("SyntaxError", "IndentationError", "TabError")
REPLAY_FILE, REPRO_FILE = "counterexample.json", "test_counterexample.py"
LITERAL_ESCAPES = str.maketrans({c: f"\\x{ord(c):02x}" for c in "<>&`[]*_|#!"})


def submitted_command(source: Path | None) -> str | None:
    """The command of a wire program (its wire.toml's, as one shell line), or None for a Python module."""
    if source is None or not is_wire(source):
        return None
    try:
        text, _ = read_regular(source / WIRE_FILE, 1 << 16)
        argv, _ = wire_command(text.decode())
    except (OSError, ValueError):
        argv = ()
    return shlex.join(argv) if argv else "COMMAND"  # collection read it already: only a file changed since fails


def replay_command(command: str | None) -> str:
    """The shell line that replays the counterexample file on the submission: the module, or the wire program."""
    return f"schedcheck replay {REPLAY_FILE} " + (MODULE if command is None else typed(command))


def replay_md(command: str | None) -> str:
    """Where to save the counterexample and what to run, in Markdown."""
    if command is None:
        return f"save this as `{REPLAY_FILE}` beside your `{MODULE}` and run `{replay_command(None)}`"
    return (f"save this as `{REPLAY_FILE}` in your program's folder (beside `{WIRE_FILE}`) and run "
            f"{md_name(replay_command(command), 600)} there")


HISTORY_NOTE = ("hygiene [H.history]: the case failed only after earlier runs in the grading process, and a freshly "
                f"loaded copy passed it; replay runs it up to {REPEAT_MAX} times in one process and shows the first "
                "run that fails, which rebuilds the state it needs when that state comes from the case's own runs (a "
                "module-level list, dict or counter, or a table keyed by id() whose addresses come back), and may "
                "pass otherwise (so may the pytest file, which runs the case once): look for state that outlives a "
                "Scheduler")


def replay_json(case: Case, finding: Finding | None) -> dict[str, Any]:
    """The case as a workload file `schedcheck replay FILE p07_scheduler.py` reads, with the first finding; a
    finding of two instances carries the second as its prelude, so replay runs them call by call again, and a
    finding of process history ([H.history]) the case run again and again in one process until it fails, with a
    note that says what that can and cannot rebuild."""
    found = None if finding is None else visible_json(finding.to_json())  # every string visible and bounded
    extra: dict[str, Any] = {}
    if finding is not None and finding.rule == "H.instances" and case.lanes:  # the whole group, alive at once
        extra = {"prelude": group_json(case.lanes)}
    elif finding is not None and finding.rule == "H.instances":
        extra = {"prelude": prelude_json("interleaved", [other_workload(case.workload)])}
    elif finding is not None and finding.rule == "H.history":
        extra = {"prelude": repeat_json(), "note": HISTORY_NOTE}
    return {"format": "schedcheck/workload", **workload_to_json(case.workload), "finding": found, **extra}


def pytest_repro(case: Case, finding: Finding) -> str:
    """A standalone pytest file: the case's calls with the spec's results asserted step by step.

    Each step asserts schedule()'s batch (in order), update()'s result, the sample_fn calls made
    during the step and blocks_used, up to the first divergence; a finding about outputs or
    liveness runs every step and then asserts the final outputs.
    """
    w, c = case.workload, case.workload.config
    trace = expected_trace(w)
    last = finding.step if finding.call not in ("outputs", "run") and finding.step >= 1 else len(trace.steps)
    eos_at = {k: list(v) for k, v in w.sample.eos_at}
    alone = {"H.history": ["", "This runs the case alone, in a new process: it may pass, since the grade saw the case "
                           "fail only", "after earlier runs in one process ([H.history]); the replay file runs them "
                           "first."],
             "H.instances": ["", "This runs the case on one scheduler: it may pass, since the grade saw the case fail "
                             "only with", "other schedulers alive beside it ([H.instances]); the replay file creates "
                             "them too."]}.get(finding.rule, [])
    lines = [f'"""Counterexample {case.vector_id}: {finding.check} [{finding.rule}] at step {finding.step}.',
             "", "Run: pytest test_counterexample.py (with p07_scheduler.py in the same folder).", *alone, '"""',
             "import importlib.util", "import pathlib", "",
             'PATH = pathlib.Path(__file__).with_name("p07_scheduler.py")',
             'spec = importlib.util.spec_from_file_location("p07_scheduler", PATH)',
             "m = importlib.util.module_from_spec(spec)", "spec.loader.exec_module(m)",
             f"BASE = {dict(w.sample.base)!r}", f"EOS_AT = {eos_at!r}  # output positions that sample eos",
             "calls = []  # sample_fn calls of the current step: (seq_id, token)", "", "",
             "def sample(seq):",
             f"    token = {c.eos!r} if len(seq.output) in EOS_AT.get(seq.seq_id, ()) else "
             "BASE[seq.seq_id] + len(seq.output)",
             "    calls.append((seq.seq_id, token))", "    return token", "", "",
             "def test_counterexample():",
             f"    s = m.Scheduler(num_blocks={c.num_blocks}, block_size={c.block_size}, "
             f"max_num_seqs={c.max_num_seqs}, max_num_batched_tokens={c.max_num_batched_tokens}, "
             f"sample_fn=sample, eos={c.eos!r})",
             "    seqs = {}"]
    arrivals: dict[int, list[str]] = {}
    for r in w.requests:
        add = f"    seqs[{r.seq_id!r}] = m.Sequence({r.seq_id!r}, {r.prompt_len}, {r.max_tokens})"
        arrivals.setdefault(r.arrival, []).append(f"{add}; s.add(seqs[{r.seq_id!r}])")
    for step in trace.steps[:last]:
        n = step.step
        lines += arrivals.get(n, []) + ["    calls.clear()", "    batch = s.schedule()",
                                         f"    assert list(batch.items()) == {[tuple(p) for p in step.batch]!r}, "
                                         f"'step {n}: schedule()'"]
        if finding.rule == "H.fresh_dict":
            lines.append("    batch.clear()  # a caller may change the returned dict; update() must not notice")
        lines += [f"    assert [q.seq_id for q in s.update()] == {list(step.finished)!r}, 'step {n}: update()'",
                  f"    assert calls == {list(step.sampled)!r}, 'step {n}: sample_fn calls (seq_id, token)'",
                  f"    assert getattr(s, 'blocks_used', {step.after_update.blocks_used}) == "
                  f"{step.after_update.blocks_used}, 'step {n}: blocks_used after update()'"]
    if last == len(trace.steps):
        outputs = {k: list(v) for k, v in sorted(trace.outputs().items())}
        lines.append(f"    assert {{k: list(q.output) for k, q in seqs.items()}} == {outputs!r}, 'final outputs'")
    return "\n".join(lines) + "\n"


def wire_repro(case: Case, finding: Finding, command: str) -> str:
    """A pytest file that replays the case file through the wire program's command, as `check --wire` writes one."""
    from conformance.reports.report import Counterexample
    from conformance.reports.traces import adapter_pytest_file

    ours = f"case {case.vector_id}: the table above says what went wrong"  # the file's docstring: no submission text
    cx = Counterexample(finding.check, replace(finding, message=ours), case.workload, case.vector_id)
    text = adapter_pytest_file(cx, Path("."), REPLAY_FILE, command, WIRE_ADAPTER)
    # the command is the one text of the submission's in the file: as escapes inside its string literal, the
    # characters Markdown or HTML act on never show raw, and the literal still holds the same command
    return "\n".join(line.translate(LITERAL_ESCAPES) if line.startswith("TARGET = ") else line
                     for line in text.split("\n"))


def counterexample_md(case: Case, observed: dict[str, Any], finding: Finding | None,
                      command: str | None = None) -> str:
    """The step table, the spec's reasons, and the case as replay JSON and as a pytest file, in Markdown.

    command: a wire program's command (submitted_command); the reruns then name it instead of p07_scheduler.py."""
    parts = [markdown_table(case.workload, observed, finding, case.vector_id), "",
             f"Replay it: {replay_md(command)}:", "", md_block(json_inert(replay_json(case, finding)), "json")]
    if finding is not None:
        if command is None:
            repro, how = pytest_repro(case, finding), f"beside it and run `pytest {REPRO_FILE}`"
        else:
            repro, how = wire_repro(case, finding, command), \
                f"beside it and run `pytest {REPRO_FILE}` in that folder (with schedcheck installed)"
        parts += ["", f"Or save this as `{REPRO_FILE}` {how}:", "", md_block(repro, "python")]
    return "\n".join(parts)


def first_counterexample_md(table: str, command: str | None) -> str:
    """The report's first counterexample: its step table and the command that replays counterexample.json."""
    if command is None:
        return f"{table}\n\nReplay it: `{replay_command(None)}`"
    return (f"{table}\n\nReplay it: copy `{REPLAY_FILE}` (written beside this report) into your program's folder "
            f"(beside `{WIRE_FILE}`) and run {md_name(replay_command(command), 600)} there.")


def _syntax_from_text(message: str) -> dict[str, Any] | None:
    """SyntaxError's args as the sandbox's text gives them: ('msg', (file, line, column, text, ...))."""
    try:
        args = ast.literal_eval(message)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if (isinstance(args, tuple) and len(args) == 2 and isinstance(args[0], str) and isinstance(args[1], tuple)
            and len(args[1]) >= 4):
        filename, lineno, column, text = args[1][:4]
        return {"message": args[0], "filename": filename, "lineno": lineno, "column": column, "text": text}
    return None


def load_error_parts(result: object, load_error: str) -> dict[str, object]:
    """exc_type, message, and for a syntax error filename, lineno, column and text (each may be None).

    Read from the sandbox's structured `load_failure` (conformance.sandbox.types.LoadFailure) when the
    result has one, else parsed from the `load_error` sentence.
    """
    failure = getattr(result, "load_failure", None)
    if failure is not None:
        line = getattr(failure, "line", None)
        parts: dict[str, object] = {
            "exc_type": getattr(failure, "exc_type", None) or getattr(failure, "kind", None),
            "message": getattr(failure, "message", ""), "filename": getattr(failure, "file", None),
            "lineno": line if type(line) is int else None, "text": getattr(failure, "text", None),
            "column": getattr(failure, "column", None)}
        syntax = _syntax_from_text(str(parts["message"])) if parts["exc_type"] in SYNTAX_ERRORS else None
        if syntax is not None:  # the message is SyntaxError's args: keep its first part, fill what is missing
            parts = {**syntax, **{k: v for k, v in parts.items() if v is not None}, "message": syntax["message"]}
        return parts
    match = re.match(r"^(\w+): (\w+): (.*)$", load_error, re.S)
    if match is None:
        return {"exc_type": None, "message": load_error}
    exc_type, message = match.group(2), match.group(3)
    if exc_type in SYNTAX_ERRORS and (syntax := _syntax_from_text(message)) is not None:
        return {"exc_type": exc_type, **syntax}
    return {"exc_type": exc_type, "message": message}


def load_error_md(result: object, load_error: str, command: str | None = None) -> tuple[str, str]:
    """A one-line reason for every item and the full Markdown (file:line, the line, a caret) for the summary.

    command: a wire program's command, named in the advice to run it locally."""
    p = load_error_parts(result, load_error)
    exc = str(p.get("exc_type") or "error")
    message = SANDBOX_DIR.sub("", str(p.get("message") or ""))
    lineno = p.get("lineno")
    if type(lineno) is int:
        name = PurePath(str(p.get("filename") or MODULE)).name
        where = f"{name}:{lineno}"
        lines = [f"**`{MODULE}` does not load:** {md(exc, 80)} at {md_name(where, 120)}: {md(message)}", ""]
        text = p.get("text")
        if isinstance(text, str) and text.strip():
            raw = text.rstrip("\n").expandtabs(4)
            stripped = raw.lstrip()
            column = p.get("column")
            pad = max(0, (column if type(column) is int else 1) - 1 - (len(raw) - len(stripped)))
            lines += [md_block(f"{lineno:>5} | {cut(stripped, 200)}\n      | {' ' * min(pad, 200)}^"), ""]  # visible
        lines.append("Fix that line and resubmit; `python -m py_compile p07_scheduler.py` finds it locally.")
        return f"does not load: {cut(exc, 80)} at {cut(where, 120)}", "\n".join(lines)
    shown = f"{exc}: {message}" if message else exc
    if getattr(result, "wire", False):  # a program that did not start, greet or answer in time
        return f"does not start: {cut(exc, 80)}", wire_start_md(shown, str(getattr(result, "stderr", "")), command)
    lines = [f"**`{MODULE}` does not load:** {md(shown, TEXT_LIMIT)}", "",
             "Importing the module must succeed and define `Scheduler` and `Sequence`, as the interface requires; run "
             "`python -c \"import p07_scheduler\"` in its folder to see the full error."]
    return f"does not load: {cut(exc, 80)}", "\n".join(lines)


WIRE_STDERR_LINES = 10


def wire_start_md(shown: str, stderr: str, command: str | None = None) -> str:
    """Why a wire program did not start, with the last lines it wrote to stderr."""
    check = md_name(f"schedcheck check {typed(command)}", 600) if command else \
        "`schedcheck check --wire \"COMMAND\"`"
    lines = [f"**The program of `wire.toml` does not start:** {md(shown, TEXT_LIMIT)}", "",
             "The command must start a program that answers the hello of the wire protocol with "
             f"`\"snapshot\": true`; run {check} in its folder to see the exchange."]
    tail = [cut(line, 200) for line in stderr.splitlines()[-WIRE_STDERR_LINES:]]
    if tail:
        lines += ["", f"The last {len(tail)} line(s) it wrote to stderr:", "", md_block("\n".join(tail))]
    return "\n".join(lines)


def _files(source: Path) -> list[str]:
    """The files of a submission, relative to it: walked without following links, at most WALK_LIMIT entries."""
    if not source.is_dir() or source.is_symlink():
        return [source.name] if os.path.lexists(source) else []
    found: list[str] = []
    seen = 0
    for folder, dirs, files in os.walk(source, followlinks=False):
        dirs.sort()
        seen += len(dirs) + len(files)
        found += [os.path.relpath(os.path.join(folder, f), source) for f in files]
        if seen > WALK_LIMIT:
            break
    return sorted(found)


def missing_md(source: Path, problem: str) -> str:
    """What was submitted instead of p07_scheduler.py, and what to rename."""
    if is_wire(source):  # a program in another language that was refused: the reason says what to fix
        return "\n".join([f"**Nothing to grade:** {md(problem)}.", "",
                          "A folder with a `wire.toml` is graded as a program that speaks the wire protocol; "
                          "fix what the reason says and resubmit."])
    found = _files(source)
    lines = [f"**Nothing to grade:** {md(problem)}. The autograder grades one file named `{MODULE}`."]
    if not found:
        return "\n".join(lines + ["", "Your submission holds no files. Upload `p07_scheduler.py` and resubmit."])
    lines += ["", f"Your submission holds {len(found)} file(s):", ""]
    lines += [f"- {md_name(f, 120)}" for f in found[:LISTED_FILES]]  # the submission's own names
    if len(found) > LISTED_FILES:
        lines.append(f"- … and {len(found) - LISTED_FILES} more")
    pythons = [f for f in found if f.endswith(".py")]
    near = [f for f in pythons if PurePath(f).name.lower().replace("-", "_") == MODULE]
    pick = near[0] if near else pythons[0] if len(pythons) == 1 else None
    lines.append("")
    if pick is not None and source.is_dir() and not source.is_symlink():
        lines.append(f"Rename {md_name(pick, 120)} to `{MODULE}` (exactly this name, lower case) and resubmit.")
    else:
        lines.append(f"Put your scheduler in a file named `{MODULE}` (exactly this name) and resubmit.")
    return "\n".join(lines)
