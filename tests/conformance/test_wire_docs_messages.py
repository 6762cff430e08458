"""docs/wire-protocol.md against a real conversation: the schemas, the flow control, the edge cases, the examples.

examples/wire/scheduler.py runs behind a relay that logs every line in the order it passed (a line is
logged before it is passed on, so the log's order is the conversation's). The suite drives it through
golden cases, the counterexample corpus, generated workloads, the state machine and a workload with an
idle step and chunked prefill. Every line must fit conformance/schemas/wire-suite.schema.json or the
reply definition of conformance/schemas/wire-program.schema.json for the message it answers; the doc's
field table must list exactly the schemas' fields; its JSON examples must fit them; and its JavaScript
reader and writer (the ones examples/wire/scheduler.js uses) must read and write integers exactly.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

from conformance.checks.workload import check_workload
from conformance.profiles import Profile
from conformance.suite import run
from conformance.wire import WireFactory
from spec.model import Config
from spec.trace import Request, make_workload
from tests.conformance.test_wire_docs_ranges import doc_table

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "wire-protocol.md"
EXAMPLE = ROOT / "examples" / "wire" / "scheduler.py"
SCHEMAS = {name: json.loads((ROOT / "conformance" / "schemas" / f"{name}.schema.json").read_text())
           for name in ("snapshot", "wire-suite", "wire-program")}
REGISTRY: Registry = Registry().with_resources(
    [(s["$id"], Resource.from_contents(s)) for s in SCHEMAS.values()])
SMALL = Profile("wire-small", None, 10, 3, 10)  # golden + one corpus family + a few generated runs
NODE = shutil.which("node")
REPLY_TO = {"hello": "hello", "new": "ok", "add": "ok", "close": "ok", "schedule": "batch", "update": "update",
            "snapshot": "snapshot", "outputs": "outputs"}
# an idle step (a1 done, a2 not arrived yet at step 2), then a chunked prefill of a2 that samples nothing until step 5
IDLE_AND_CHUNKED = make_workload(Config(8, 2, 2, 2), [Request("a1", 1, 1, 1), Request("a2", 5, 1, 3)])

RELAY = textwrap.dedent('''
    """Pass lines between the suite and a program, logging each ('>' suite, '<' program) before passing it on."""
    import json, subprocess, sys, threading
    log, mode, argv = open(sys.argv[1], "a", buffering=1), sys.argv[2], sys.argv[3:]
    lock = threading.Lock()
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def reorder(line):  # the program's seqs and outputs, keys in reverse order
        reply = json.loads(line)
        for holder, key in ((reply.get("snapshot"), "seqs"), (reply, "outputs")):
            if isinstance(holder, dict) and isinstance(holder.get(key), dict):
                holder[key] = dict(reversed(list(holder[key].items())))
        return (json.dumps(reply) + "\\n").encode()

    def relay(source, sink, mark):
        for line in iter(source.readline, b""):
            if mark == "<" and mode == "reverse":
                line = reorder(line)
            with lock:
                log.write(mark + line.decode())
            sink.write(line)
            sink.flush()
        sink.close()

    threading.Thread(target=relay, args=(child.stdout, sys.stdout.buffer, "<"), daemon=True).start()
    relay(sys.stdin.buffer, child.stdin, ">")
    child.wait()
''')


def relayed(tmp: Path, mode: str) -> tuple[str, Path]:
    """The command that runs the example behind the relay, and its log."""
    (tmp / "relay.py").write_text(RELAY)
    log = tmp / f"{mode}.log"
    return " ".join(shlex.quote(a) for a in (sys.executable, str(tmp / "relay.py"), str(log), mode, sys.executable,
                                             str(EXAMPLE))), log


def read_log(log: Path) -> list[tuple[str, dict[str, Any]]]:
    return [(line[0], json.loads(line[1:])) for line in log.read_text().splitlines(keepends=True)
            if line.endswith("\n")]


@pytest.fixture(scope="module")
def conversation(tmp_path_factory) -> list[tuple[str, dict[str, Any]]]:
    """Every line of a real wire run of examples/wire/scheduler.py, in order: ('>', suite line) or ('<', reply)."""
    cmd, log = relayed(tmp_path_factory.mktemp("conversation"), "log")
    report = run(cmd, SMALL, adapter="conformance.wire", families=("counterexamples",))
    assert report.verdict == "PASS", report.summary()
    with WireFactory(cmd) as factory:
        assert all(f is None for f in check_workload(IDLE_AND_CHUNKED, factory).values())
    return read_log(log)


def exchanges(lines: list[tuple[str, dict[str, Any]]]) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """(message, the program's lines answering it) for every message; asserts the flow the doc states:
    one reply per message, in order, the suite writing nothing while it waits; inside an update, each sample
    answered by exactly one token line."""
    at = 0
    while at < len(lines):
        way, message = lines[at]
        assert way == ">" and "op" in message, f"line {at}: {message} where a message was due"
        answer: list[dict[str, Any]] = []
        at += 1
        while True:
            assert at < len(lines) and lines[at][0] == "<", f"line {at}: the suite wrote before the reply to {message}"
            answer.append(lines[at][1])
            at += 1
            if message["op"] != "update" or "sample" not in answer[-1]:
                break
            assert lines[at][0] == ">" and set(lines[at][1]) == {"token"}, f"line {at}: not a token"
            at += 1
        yield message, answer


def validator(schema: str, definition: str | None = None) -> jsonschema.Draft202012Validator:
    ref = SCHEMAS[schema]["$id"] + ("" if definition is None else f"#/$defs/{definition}")
    return jsonschema.Draft202012Validator({"$ref": ref}, registry=REGISTRY)


# --- the real conversation -----------------------------------------------------------------------------------


@pytest.mark.long
def test_the_suite_waits_for_each_reply_and_every_line_fits_the_schemas(conversation) -> None:
    suite = validator("wire-suite")
    replies = {op: validator("wire-program", name) for op, name in REPLY_TO.items()}
    seen: set[str] = set()
    for message, answer in exchanges(conversation):
        suite.validate(message)
        seen.add(message["op"])
        for reply in answer:
            replies[message["op"]].validate(reply)
    for way, line in conversation:
        if way == ">" and "token" in line:
            suite.validate(line)
    assert seen == set(REPLY_TO)  # every message of the protocol was exercised


def test_the_replies_to_the_edge_cases_are_the_docs(conversation) -> None:
    """Each row of the doc's edge-case table happens in the run, answered as the table says."""
    text = DOC.read_text()
    for reply in ('`{"batch": []}`', '`{"finished": []}`, with no `sample` before it',
                  'one `sample` per sequence that caught up, then `{"finished": []}`', "its `output` is `[]`"):
        assert reply in text
    last: dict[int, list[Any]] = {}  # each instance's last batch
    live: dict[int, set[str]] = {}  # each instance's added and not yet finished sequences
    seen = dict.fromkeys(("idle", "after empty", "chunked", "sampled, none finished", "interleaved", "no output"), 0)
    previous: dict[str, Any] = {}
    for message, answer in exchanges(conversation):
        op, instance = message["op"], message.get("instance")
        if op == "add":
            live.setdefault(instance, set()).add(message["seq_id"])
        if op == "schedule":
            last[instance] = answer[0]["batch"]
            if not last[instance]:
                assert not live.get(instance), f"an empty batch while {live[instance]} had not finished"
                seen["idle"] += 1
        if op == "update":
            samples, (final,) = answer[:-1], answer[-1:]
            live.setdefault(instance, set()).difference_update(final["finished"])
            if not last[instance]:
                assert answer == [{"finished": []}]
                seen["after empty"] += 1
            elif not samples:
                assert final == {"finished": []}
                seen["chunked"] += 1
            elif final == {"finished": []}:
                seen["sampled, none finished"] += 1
            if previous.get("op") == "schedule" and previous["instance"] != instance:
                seen["interleaved"] += 1  # schedule of one instance, then update of another
        if op == "snapshot" and any(row["output"] == [] for row in answer[0]["snapshot"]["seqs"].values()):
            seen["no output"] += 1
        previous = message
    assert all(seen.values()), seen


def test_key_order_in_seqs_and_outputs_does_not_matter(tmp_path) -> None:
    cmd, log = relayed(tmp_path, "reverse")
    report = run(cmd, SMALL, adapter="conformance.wire", families=("counterexamples",))
    assert report.verdict == "PASS", report.summary()
    reordered = [r["snapshot"]["seqs"] for way, r in read_log(log)
                 if way == "<" and isinstance(r.get("snapshot"), dict)]
    assert any(list(seqs) != sorted(seqs) for seqs in reordered)  # the example sorts them; the relay reversed them


# --- the doc itself ------------------------------------------------------------------------------------------


def code_blocks(lang: str) -> list[str]:
    return re.findall(rf"^ *```{lang}\n(.*?)^ *```$", DOC.read_text(), re.S | re.M)


def test_every_json_example_of_the_doc_fits_a_schema() -> None:
    suite, program = validator("wire-suite"), validator("wire-program")
    examples = [json.loads(block) for block in code_blocks("json")]  # one per message and reply
    examples += [json.loads(line[2:]) for line in DOC.read_text().splitlines() if line.startswith(("> {", "< {"))]
    assert len(examples) > 20
    for example in examples:
        assert suite.is_valid(example) or program.is_valid(example), example


def schema_fields(schema: dict[str, Any], node: dict[str, Any], prefix: str = "") -> set[str]:
    """The field paths of an object schema, as the doc writes them: config.eos, batch[i][1], snapshot.seqs.ID.output."""
    while "$ref" in node:
        ref = node["$ref"]
        if ref.startswith("#/$defs/"):
            node = schema["$defs"][ref.removeprefix("#/$defs/")]
        else:
            schema = SCHEMAS[ref.removesuffix(".schema.json")]
            node = schema
    out = set()
    for name, prop in node.get("properties", {}).items():
        while "$ref" in prop and prop["$ref"].startswith("#/$defs/"):
            prop = schema["$defs"][prop["$ref"].removeprefix("#/$defs/")]
        path = prefix + name
        if "properties" in prop or "$ref" in prop:
            out |= schema_fields(schema, prop, path + ".")
            continue
        out.add(path)
        for k, _ in enumerate(prop.get("items", {}).get("prefixItems", [])):
            out.add(f"{path}[i][{k}]")
        if isinstance(prop.get("additionalProperties"), dict) and "properties" in prop["additionalProperties"]:
            out |= schema_fields(schema, prop["additionalProperties"], path + ".ID.")
        elif isinstance(prop.get("additionalProperties"), dict) and "$ref" in prop["additionalProperties"]:
            inner = prop["additionalProperties"]["$ref"].removeprefix("#/$defs/")
            if "properties" in schema["$defs"].get(inner, {}):
                out |= schema_fields(schema, schema["$defs"][inner], path + ".ID.")
    return out


def test_the_docs_field_table_lists_exactly_the_schemas_fields() -> None:
    suite, program = SCHEMAS["wire-suite"], SCHEMAS["wire-program"]
    expected = set()
    for name in ("hello", "new", "add", "schedule", "update", "snapshot", "outputs", "close", "token"):
        for field in schema_fields(suite, suite["$defs"][name]):
            expected.add(("every message" if field == "op" else name, field))
    lines = {"hello": ["hello reply"], "ok": ["new", "add", "close"], "batch": ["schedule"], "sample": ["sample"],
             "finished": ["update"], "snapshot": ["snapshot"], "outputs": ["outputs"], "error": ["error reply"]}
    for name, doc_lines in lines.items():
        for field in schema_fields(program, program["$defs"][name]):
            expected |= {(line, field) for line in doc_lines}
    assert set(doc_table(DOC.read_text())) == expected


def test_the_messages_table_names_every_line_and_every_snapshot_field() -> None:
    text = DOC.read_text()
    table = text[text.index("| line | sent by |"):text.index("### `hello`")]
    for line in ("hello", "new", "add", "schedule", "update", "sample", "token", "snapshot", "outputs", "close"):
        assert f"| `{line}` |" in table, line
    snapshot = SCHEMAS["snapshot"]
    for field in [*snapshot["required"], *snapshot["$defs"]["seq"]["required"]]:
        assert f"`{field}`" in table, field


# --- the JavaScript reader and writer ------------------------------------------------------------------------

BIG = ('{"op":"new","instance":3,"config":{"num_blocks":67108864,"block_size":2199023255554,"max_num_seqs":17,'
       '"max_num_batched_tokens":1152921504606846977,"eos":-9007199254740992},"x":[18446746272732807168,'
       '-9007199254740993,0,[]],"s":"a\\"1\\u00e9\\n","o":{},"t":true,"f":false,"n":null}')
CHECK = textwrap.dedent(r'''
    const line = process.argv[process.argv.length - 1];
    const value = read(line);
    const big = [value.config.max_num_batched_tokens, value.x[0], value.x[1], value.config.eos];
    console.log(JSON.stringify({
      types: big.map((v) => typeof v), digits: big.map(String), s: value.s, back: write(value),
    }));
''')


def node_output(program: str, *flags: str) -> dict[str, Any]:
    assert NODE is not None
    ran = subprocess.run([NODE, *flags, "-e", program, BIG], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)  # type: ignore[no-any-return]


def assert_exact(out: dict[str, Any]) -> None:
    assert out["types"] == ["bigint"] * 4
    assert out["digits"] == [str(2**60 + 1), str(2**64 + 2**41), str(-(2**53) - 1), str(-(2**53))]
    assert out["s"] == 'a"1\u00e9\n'
    assert json.loads(out["back"]) == json.loads(BIG)
    assert out["back"] == BIG.replace("\\u00e9", "\u00e9")  # the same digits, written back as digits


@pytest.mark.skipif(NODE is None, reason="node is not on PATH")
def test_the_docs_javascript_reader_and_writer_are_the_examples_and_exact() -> None:
    snippet = next(b for b in code_blocks("js") if "function parseExact" in b)
    example = (ROOT / "examples" / "wire" / "scheduler.js").read_text()
    assert snippet in example  # the example runs what the doc shows
    assert_exact(node_output(snippet + "const read = parseExact, write = stringifyExact;\n" + CHECK))
    rejects = [text for text in ('{"a":1,}', "[1 2]", "01", '{"a" 1}', "[1]x", "{", '"abc', "-", "[,1]")
               if subprocess.run([NODE, "-e", snippet + "parseExact(process.argv[process.argv.length - 1]);", text],
                                 capture_output=True, timeout=60).returncode == 0]
    assert rejects == []


@pytest.mark.skipif(NODE is None, reason="node is not on PATH")
def test_the_docs_reviver_alternative_is_exact_where_node_passes_the_source_text() -> None:
    snippet = textwrap.dedent(next(b for b in code_blocks("js") if "context.source" in b))
    major = int(subprocess.run([NODE, "--version"], capture_output=True, text=True).stdout.strip("v\n").split(".")[0])
    flags = ("--harmony-json-parse-with-source",) if major == 20 else ()
    if major < 20:
        pytest.skip(f"Node.js {major} has no JSON.parse source text access")
    assert_exact(node_output(snippet + CHECK, *flags))
    if major == 20:  # without the flag, Node.js 20 fails loudly instead of rounding
        assert subprocess.run([NODE, "-e", snippet + CHECK, BIG], capture_output=True).returncode != 0
