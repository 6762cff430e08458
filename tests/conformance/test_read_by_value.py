"""`check` judges behaviour, not form: every value is read by value, through the interface's operations.

Each style below is a correct scheduler (impl/scheduler.py or a style file of conformance/selfcheck/styles,
changed in one or two places) that keeps a queue, an output or update()'s result in another container
than docs/api.md names, or keeps its statuses as plain values equal to the SequenceStatus members. Each
must pass every check, with one note naming the deviation. A hostile container (one that never ends, raises,
lies about its len(), or holds seq_ids instead of Sequences) is a finding that names the attribute,
never a hang or a traceback. tests/conformance/test_read_by_value_sandbox.py runs the same in the sandbox.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.adapters import load_target
from conformance.checks.workload import check_workload
from conformance.suite import run
from spec.golden import golden_cases
from spec.model import Config
from spec.trace import Request, make_workload

ROOT = Path(__file__).resolve().parents[2]
IMPL = (ROOT / "impl" / "scheduler.py").read_text()
STYLES_DIR = ROOT / "conformance" / "selfcheck" / "styles"


def style(name: str) -> str:
    return (STYLES_DIR / f"{name}.py").read_text()


def changed(text: str, *edits: tuple[str, str], extra: str = "") -> str:
    """The text with each edit made (each `old` appears once), then `extra` appended."""
    for old, new in edits:
        assert text.count(old) == 1, f"{old!r} appears {text.count(old)} times"
        text = text.replace(old, new)
    return text + extra


RUN_LIST = '''

class RunList(list):
    """running as a list subclass."""
'''
FROZEN = '''

class Frozen(tuple):
    """running as a tuple subclass, made anew at every change."""
'''
VIEW = '''

class View:
    """A read-only sequence of its own: iteration, len() and indexing, no list, deque or tuple base."""

    def __init__(self, items):
        self._items = list(items)

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def __getitem__(self, index):
        return self._items[index]
'''
RUNNING = "return list(self._queues[SequenceStatus.RUNNING])"  # dict_of_deques's running
# a str-valued SequenceStatus whose members' values are kept as plain strs, which equal the members
PLAIN_STATUS = (("class SequenceStatus(enum.Enum):", "class SequenceStatus(str, enum.Enum):"),
                *((f'{n} = "{n}"', f'{n} = "{n.lower()}"') for n in ("WAITING", "RUNNING", "FINISHED")),
                *((f"_{n} = SequenceStatus.{n}", f'_{n} = "{n.lower()}"') for n in ("WAITING", "RUNNING", "FINISHED")))
STATUS_NOTE = "status is a str; docs/api.md says SequenceStatus"

# name -> (source, the notes it must get, in the order the checks first read them)
FOREIGN = '_foreign: dict[str, object] = {}\nexec("def described(self):\\n    return self.seq_id", _foreign)\n\n\n'
STYLES: dict[str, tuple[str, list[str]]] = {
    "status_names_foreign_method": (changed(IMPL, ("_WAITING = SequenceStatus.WAITING\n",  # statuses kept as names,
                                                   FOREIGN + '_WAITING = "WAITING"\n'),  # and a method whose
                                            ("_RUNNING = SequenceStatus.RUNNING\n", '_RUNNING = "RUNNING"\n'),
                                            ("_FINISHED = SequenceStatus.FINISHED\n", '_FINISHED = "FINISHED"\n'),
                                            ("class Sequence:\n",
                                             "class Sequence:\n    described = _foreign['described']\n")),
                                    ["status is a str; docs/api.md says SequenceStatus"]),  # globals hold no enum
    "status_twin_enum": (changed(IMPL, ("_WAITING = SequenceStatus.WAITING\n",  # members of another Enum, same names
                                        "class State(enum.Enum):\n    WAITING = 1\n    RUNNING = 2\n    FINISHED = 3\n"
                                        "\n\n_WAITING = State.WAITING\n"),
                                 ("_RUNNING = SequenceStatus.RUNNING\n", "_RUNNING = State.RUNNING\n"),
                                 ("_FINISHED = SequenceStatus.FINISHED\n", "_FINISHED = State.FINISHED\n")),
                         ["status is a State; docs/api.md says SequenceStatus"]),
    "running_deque": (changed(style("dict_of_deques"), (RUNNING, "return self._queues[SequenceStatus.RUNNING]")),
                      ["running is a deque; docs/api.md says list"]),
    "running_tuple": (changed(style("functional_copy"), ("return list(self.q.running)", "return self.q.running")),
                      ["running is a tuple; docs/api.md says list"]),
    "running_list_subclass": (changed(IMPL, ("self.running: list[Sequence] = []", "self.running = RunList()"),
                                      extra=RUN_LIST),
                              ["running is a RunList (a list subclass, read by its list items); docs/api.md says "
                               "list"]),
    "running_tuple_subclass": (changed(style("functional_copy"), ("return list(self.q.running)",
                                                                  "return Frozen(self.q.running)"), extra=FROZEN),
                               ["running is a Frozen (a tuple subclass, read by its tuple items); docs/api.md says "
                                "list"]),
    "running_custom_sequence": (changed(style("dict_of_deques"), (RUNNING, RUNNING.replace("list(", "View(")),
                                        extra=VIEW), ["running is a View; docs/api.md says list"]),
    "waiting_list": (changed(style("functional_copy"), ("return deque(self.q.waiting)", "return list(self.q.waiting)")),
                     ["waiting is a list; docs/api.md says deque"]),
    "waiting_fresh_generator": (changed(style("heap_queue"), ("return deque(seq for", "return (seq for")),
                                ["waiting is a generator; docs/api.md says deque"]),
    "output_tuple": (changed(style("dict_of_deques"), ("self.output: list[int] = []", "self.output = ()"),
                             ("seq.output.append(tok)", "seq.output = seq.output + (tok,)")),
                     ["output is a tuple; docs/api.md says list"]),
    "output_deque": (changed(IMPL, ("self.output: list[int] = []", "self.output = deque()")),
                     ["output is a deque; docs/api.md says list"]),
    "update_tuple": (changed(IMPL, ("        return done\n", "        return tuple(done)\n")),
                     ["update()'s result is a tuple; docs/api.md says list"]),
    "status_plain_value": (changed(IMPL, *PLAIN_STATUS), [STATUS_NOTE]),
}
WORKLOADS = [c.workload for c in golden_cases()] + [
    make_workload(Config(4, 2, 2, 4), [Request("a1", 3, 2), Request("a2", 2, 2, arrival=2)]),
    make_workload(Config(3, 2, 8, 64), [Request("p1", 2, 3), Request("p2", 2, 3)], name="self-preemption"),
    make_workload(Config(6, 2, 2, 5, eos=0), [Request("e1", 4, 3), Request("e2", 3, 4, arrival=2)],
                  eos_at={"e2": [1]}, name="eos")]

ENDLESS = '''

import itertools


class Endless:
    """Its items over and over: it never ends while it holds one (and has no len())."""

    def __init__(self, items):
        self.items = list(items)

    def __iter__(self):
        return itertools.cycle(self.items)
'''
RAISING = '''

class Raising:
    def __init__(self, items):
        self.items = list(items)

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        raise RuntimeError("the queue is being rebuilt")
'''
LYING_LEN = '''

class LyingLen:
    def __init__(self, items):
        self.items = list(items)

    def __len__(self):
        return len(self.items) + 1

    def __iter__(self):
        return iter(self.items)
'''
IDS = '''

class Ids:
    """The seq_ids of the sequences, not the Sequence objects."""

    def __init__(self, items):
        self.items = [seq.seq_id for seq in items]

    def __iter__(self):
        return iter(self.items)
'''
TOKENS = '''

import itertools


class Tokens:
    """An output that appends like a list but iterates its tokens over and over."""

    def __init__(self):
        self.items = []

    def append(self, token):
        self.items.append(token)

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return itertools.cycle(self.items)
'''
# name -> (source, what the finding says, "update" or "output" when the driver reads it too, else "")
HOSTILE: dict[str, tuple[str, str, str]] = {
    "running_endless": (changed(style("dict_of_deques"), (RUNNING, RUNNING.replace("list(", "Endless(")),
                                extra=ENDLESS), "cannot read running: iterating it gives more than", ""),
    "running_raises": (changed(style("dict_of_deques"), (RUNNING, RUNNING.replace("list(", "Raising(")),
                               extra=RAISING),
                       "cannot read running: reading it raised RuntimeError: the queue is being rebuilt", ""),
    "running_lying_len": (changed(style("dict_of_deques"), (RUNNING, RUNNING.replace("list(", "LyingLen(")),
                                  extra=LYING_LEN), "cannot read running: len() is 2 but iterating it gives 1 item;",
                          ""),
    "running_holds_ids": (changed(style("dict_of_deques"), (RUNNING, RUNNING.replace("list(", "Ids(")), extra=IDS),
                          "cannot read running: it holds 'a1' (str), which is not a Sequence", ""),
    "output_endless": (changed(style("dict_of_deques"), ("self.output: list[int] = []", "self.output = Tokens()"),
                               extra=TOKENS),
                       "cannot read a1.output: len() is 1 but iterating it gives more than 1 item;", "output"),
    "update_endless": (changed(IMPL, ("        return done\n", "        return Endless(done)\n"), extra=ENDLESS),
                       "cannot read update()'s result: iterating it gives more than", "update"),
}
HOSTILE_WORKLOAD = make_workload(Config(4, 2, 2, 4), [Request("a1", 3, 2), Request("a2", 2, 2, arrival=2)])
# waiting as one generator made in __init__ (over the empty heap), stored and handed out at every read
STORED_GENERATOR = changed(style("heap_queue"), (
    "self._heap: list[tuple[int, Sequence]] = []",
    "self._heap: list[tuple[int, Sequence]] = []\n        self._stored = (seq for _, seq in sorted(self._heap))"),
    ("return deque(seq for _, seq in sorted(self._heap, key=lambda item: item[0]))", "return self._stored"))
QUEUED = make_workload(Config(8, 2, 1, 8), [Request("q1", 2, 2), Request("q2", 2, 2)])  # q2 waits for q1


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name / "p07_scheduler.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(source)
    return path


@pytest.mark.parametrize("name", sorted(STYLES))
def test_a_correct_scheduler_in_another_container_passes_with_a_note(name: str, tmp_path: Path) -> None:
    source, notes = STYLES[name]
    factory = load_target(str(write(tmp_path, name, source)))
    for workload in WORKLOADS:
        found = check_workload(workload, factory)
        assert all(f is None for f in found.values()), (workload.name, found)
    assert list(factory.notes.values()) == notes  # one per attribute and type, not one per call


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_container_is_a_finding_that_names_it(name: str, tmp_path: Path) -> None:
    source, says, call = HOSTILE[name]
    factory = load_target(str(write(tmp_path, name, source)))
    found = check_workload(HOSTILE_WORKLOAD, factory, only=("invariants", "hygiene"))
    if call == "update":  # the driver reads update()'s result: a finding on the call, the run stops there
        finding = found["hygiene"]
        assert finding is not None and finding.call == "update" and says in finding.message, found
    else:
        finding = found["invariants"]
        assert finding is not None and finding.rule == "I6" and says in finding.message, found
    assert "docs/api.md" in finding.message  # and says what the container must hold


def test_a_stored_one_shot_generator_fails_on_behaviour(tmp_path: Path) -> None:
    """Read as any container, it is empty from then on: the sequences it should hold are in no queue."""
    factory = load_target(str(write(tmp_path, "stored_generator", STORED_GENERATOR)))
    finding = check_workload(QUEUED, factory, only=("invariants",))["invariants"]
    assert finding is not None and "cannot read" not in finding.message, finding
    assert "q2 disappeared from every queue" in finding.message, finding
    assert list(factory.notes.values()) == ["waiting is a generator; docs/api.md says deque"]


@pytest.mark.long
def test_running_in_a_deque_passes_check_with_one_note(tmp_path: Path) -> None:
    """running kept in a deque (it once failed every white-box vector, I6) passes, and the note says so once."""
    source, notes = STYLES["running_deque"]
    report = run(str(write(tmp_path, "running_deque", source)), "quick")
    assert report.verdict == "PASS", report.summary()
    assert [n for n in report.notes if "docs/api.md says" in n] == notes
    assert report.to_json()["notes"].count(notes[0]) == 1
    assert f"note: {notes[0]}" in report.summary().splitlines()


# several deviations at once, some of them (the queues, the status) read in white-box runs only
SEVERAL = changed(IMPL, ("self.output: list[int] = []", "self.output = deque()"),
                  ("self.running: list[Sequence] = []", "self.running = RunList()"),
                  ("        return done\n", "        return tuple(done)\n"), *PLAIN_STATUS, extra=RUN_LIST)
SEVERAL_NOTES = ["output is a deque; docs/api.md says list", STATUS_NOTE,
                 "running is a RunList (a list subclass, read by its list items); docs/api.md says list",
                 "update()'s result is a tuple; docs/api.md says list"]


@pytest.mark.long
def test_several_deviations_at_once_pass_check_each_noted_once(tmp_path: Path) -> None:
    report = run(str(write(tmp_path, "several", SEVERAL)), "quick")
    assert report.verdict == "PASS", report.summary()
    assert sorted(n for n in report.notes if "docs/api.md says" in n) == sorted(SEVERAL_NOTES)
