"""An engine's known differences (conformance/capabilities.py Difference): an adapter that states them gets them as
the report's causes, and a diagnosis of it never names a catalog bug the engine does not have.

The engines here are catalog mutants with an adapter's declaration on top, so the tests run without any engine
installed; tests/external/test_nanovllm.py checks nano-vllm's own differences the same way."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import load_target
from conformance.capabilities import Capabilities, CapabilityError, Difference
from conformance.checks.checkers import Finding, differential
from conformance.checks.diagnosis import Evidence, diagnose, reproduce
from conformance.drivers import run_workload
from conformance.workloads.corpus import load_corpus, run_corpus
from spec.trace import Workload

MUTANTS = Path(__file__).resolve().parents[2] / "conformance" / "mutants"
CHUNKS = Difference("only-first", "only the first sequence of a step chunks", "engine.py:1", ("chunk_only_first",))
OTHER = Difference("never-shown", "a difference no finding shows", "engine.py:2")


def engine(name: str, caps: Capabilities) -> Any:
    """A catalog mutant's factory whose instances declare `caps`, as an engine's adapter class does."""
    made = load_target(str(MUTANTS / f"{name}.py"))

    def factory(config: Any, sample: Any) -> Any:
        sut = made(config, sample)
        sut.__class__ = type("EngineAdapter", (type(sut),), {"capabilities": caps})
        return sut
    return factory


@functools.cache
def failing(name: str, most: int = 12) -> list[tuple[str, Workload, Finding]]:
    """The mutant's first failing corpus vectors, each with its first finding (the engine's adapter changes none)."""
    vectors, _ = load_corpus()
    lead = run_corpus(vectors, load_target(str(MUTANTS / f"{name}.py")), False).lead
    by_id = {v.vector_id: v.workload for v in vectors}
    return [(f"corpus/{vid}", by_id[vid], f) for vid, f in list(lead.items())[:most]]


def diagnosed(name: str, caps: Capabilities) -> Any:
    factory = engine(name, caps)
    corpus = failing(name)
    source, w, f = corpus[0]
    return diagnose([Evidence(f.check, w, f, source)], factory, reproduce, corpus=corpus[1:], white_box=False,
                    engine=caps)


def by_rule(rule: str, name: str) -> Any:
    def explain(factory: Any, w: Workload, f: Finding) -> str | None:
        found = differential(w, run_workload(w, factory, white_box=False))
        return name if found and found[0].rule == rule else None
    return explain


def test_the_engines_differences_are_the_causes_and_one_no_finding_shows_is_none() -> None:
    caps = Capabilities(differences=(OTHER, CHUNKS), explain=by_rule("P2", "only-first"))
    d = diagnosed("chunk_only_first", caps)
    named = [c for c in d.causes if c.difference is not None]
    assert [c.difference.name for c in named] == ["only-first"]  # a difference no finding shows is no cause
    assert named[0].line().startswith("engine difference only-first (only the first sequence of a step chunks; "
                                      "engine.py:1)")
    assert named[0].to_json()["difference"]["bugs"] == ["chunk_only_first"]
    assert all(c.bugs == () or set(c.bugs) <= {"chunk_only_first"} for c in d.causes)


@pytest.mark.long
def test_a_diagnosis_of_an_engine_names_no_catalog_bug_it_does_not_state() -> None:
    """reserve_whole_prompt's mutant as an engine that states one difference with no catalog bug, and explains
    nothing: the catalog would name reserve_whole_prompt; under the engine's statement no cause names any bug."""
    plain = load_target(str(MUTANTS / "reserve_whole_prompt.py"))
    corpus = failing("reserve_whole_prompt")
    source, w, f = corpus[0]
    unstated = diagnose([Evidence(f.check, w, f, source)], plain, reproduce, corpus=corpus[1:], white_box=False)
    assert any("reserve_whole_prompt" in c.bugs for c in unstated.causes)  # the catalog alone names it
    caps = Capabilities(differences=(OTHER,), explain=lambda factory, w, f: None)
    d = diagnosed("reserve_whole_prompt", caps)
    assert d.kept == () and d.consistent == ()
    assert all(c.bugs == () and c.difference is None for c in d.causes), [c.line() for c in d.causes]
    assert all(c.what for c in d.causes)


def test_a_stated_bug_still_names_the_findings_the_engine_does_not_explain() -> None:
    caps = Capabilities(differences=(CHUNKS,), explain=lambda factory, w, f: None)
    d = diagnosed("chunk_only_first", caps)
    assert d.kept == ("chunk_only_first",)
    assert [c.bugs for c in d.causes if c.bugs] == [("chunk_only_first",)]


def test_an_explain_that_names_no_stated_difference_or_raises_is_the_adapters_error() -> None:
    with pytest.raises(CapabilityError, match="'elsewhere', which is none of its differences"):
        diagnosed("chunk_only_first", Capabilities(differences=(CHUNKS,), explain=lambda factory, w, f: "elsewhere"))

    def broken(factory: Any, w: Workload, f: Finding) -> str | None:
        raise KeyError("seq")
    with pytest.raises(CapabilityError, match=r"the adapter's explain raised KeyError: 'seq' on the finding"):
        diagnosed("chunk_only_first", Capabilities(differences=(CHUNKS,), explain=broken))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"differences": (CHUNKS,)}, "go together"),
    ({"explain": lambda factory, w, f: None}, "go together"),
    ({"differences": (CHUNKS, CHUNKS), "explain": lambda factory, w, f: None}, "names 'only-first' twice"),
    ({"differences": (Difference("x", "t", "s", ("no_such_bug",)),), "explain": lambda factory, w, f: None},
     "'no_such_bug', which is not a catalog bug"),
    ({"differences": (Difference("", "t", "s"),), "explain": lambda factory, w, f: None}, "printable word"),
    ({"differences": ["x"], "explain": lambda factory, w, f: None}, "tuple of conformance.capabilities.Difference"),
])
def test_a_declaration_the_suite_cannot_use_is_refused_with_what_to_write(kwargs: dict[str, Any], message: str
                                                                          ) -> None:
    with pytest.raises(CapabilityError, match=message):
        Capabilities(**kwargs)
