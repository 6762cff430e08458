"""The rubric file: the documented default loads; every malformed field is named with its value."""

import pytest

from conformance.grading.rubric import DEFAULT_RUBRIC, RubricError, load_rubric, parse_rubric
from spec.model import DEFAULT_POLICY, Policy

MINIMAL = """
corpus = "p07-corpus/1"
[[item]]
id = "a"
points = 5
"""


def test_default_rubric_covers_the_card_acceptance_points_invariants_and_differential():
    r = load_rubric()
    assert r.total == 100
    assert [i.id for i in r.items] == ["budget_chunked", "max_num_seqs", "fcfs", "preemption", "eos",
                                       "invariants", "differential"]
    assert r.explore and not r.explore_counts
    assert r.digest == load_rubric(DEFAULT_RUBRIC).digest


def test_minimal_rubric_gets_defaults():
    r = parse_rubric(MINIMAL)
    assert r.items[0].visibility == "visible" and r.items[0].features == () and r.items[0].seconds is None
    assert (r.limits.workload_seconds, r.limits.run_seconds, r.limits.max_timeouts) == (2.0, 600.0, 20)
    assert r.scoring == "proportional"


@pytest.mark.parametrize(("text", "match"), [
    (MINIMAL.replace("points = 5", "points = -1"), r"item\[0\].points must be >= 0, got -1"),
    (MINIMAL.replace("points = 5", 'points = "5"'), r"item\[0\].points has the wrong type: '5'"),
    (MINIMAL + 'visibility = "secret"\n', r"visibility is 'secret'; use one of hidden"),
    (MINIMAL + 'checks = ["vibes"]\n', r"checks names 'vibes'"),
    (MINIMAL + 'visibility = "hidden"\n', r"item\[0\] \('a'\) is hidden with 5 points; .* \"after_published\""),
    (MINIMAL + '[[item]]\nid = "a"\npoints = 1\n', r"id 'a' is used twice"),
    (MINIMAL.replace('corpus = "p07-corpus/1"', ""), r"missing field 'corpus'"),
    ('scoring = "curve"\n' + MINIMAL, r"scoring is 'curve'"),
    (MINIMAL + "[limits]\nworkload_seconds = 0\n", r"limits.workload_seconds must be a positive number, got 0"),
    (MINIMAL + "[limits]\nturbo = 1\n", r"limits.turbo is not a known limit"),
    ('corpus = "x"\n', r"no \[\[item\]\] tables"),
    ("corpus = ", r"not valid TOML"),
])
def test_bad_rubrics_name_the_field_and_value(text, match):
    with pytest.raises(RubricError, match=match):
        parse_rubric(text)


def test_missing_rubric_file_is_a_clear_error(tmp_path):
    with pytest.raises(RubricError, match="cannot read rubric"):
        load_rubric(tmp_path / "nope.toml")


def test_an_item_may_set_its_own_time_limit():
    assert parse_rubric(MINIMAL + "seconds = 7.5\n").items[0].seconds == 7.5
    with pytest.raises(RubricError, match=r"item\[0\].seconds must be a positive number, got 0"):
        parse_rubric(MINIMAL + "seconds = 0\n")


def test_a_rubric_for_another_corpus_version_is_refused():
    from conformance.grading.judge import check_scope, corpus_id

    rubric = load_rubric()
    assert rubric.corpus == corpus_id()
    with pytest.raises(RubricError, match="grades on corpus 'p07-corpus/0' but this schedcheck ships"):
        check_scope(parse_rubric(MINIMAL.replace("p07-corpus/1", "p07-corpus/0")))


def test_a_rubric_item_matching_no_case_is_refused():
    from conformance.grading.judge import check_scope, corpus_id

    text = MINIMAL.replace("p07-corpus/1", corpus_id()) + 'features = ["no-such-feature"]\n'
    with pytest.raises(RubricError, match=r"rubric items \['a'\] match no corpus case; use feature tags from"):
        check_scope(parse_rubric(text))


def test_a_hidden_item_without_points_is_accepted():
    assert parse_rubric(MINIMAL.replace("points = 5", "points = 0") + 'visibility = "hidden"\n').total == 0


@pytest.mark.parametrize(("name", "value", "match"), [
    ("SCHEDCHECK_ISOLATION", "chroot", r"SCHEDCHECK_ISOLATION is 'chroot'; use one of"),
    ("SCHEDCHECK_HIDE", "/ok:relative/dir", r"SCHEDCHECK_HIDE holds relative paths \['relative/dir'\]"),
])
def test_bad_deployment_settings_are_refused_before_grading(monkeypatch, name, value, match):
    from conformance.grading.judge import check_scope

    monkeypatch.setenv(name, value)
    with pytest.raises(RubricError, match=match):
        check_scope(load_rubric())


def test_deployment_settings_reach_the_sandbox_limits(monkeypatch):
    from conformance.grading.judge import limits_for

    monkeypatch.setenv("SCHEDCHECK_ISOLATION", "process-group")
    monkeypatch.setenv("SCHEDCHECK_HIDE", "/autograder:/srv/x")
    limits = limits_for(load_rubric())
    assert limits.isolation == "process-group" and limits.hide == ("/autograder", "/srv/x")


def test_a_rubric_names_its_policy_and_an_unknown_one_is_refused():
    from conformance.grading.rubric import DEFAULT_RUBRIC, RubricError, parse_rubric, under_policy

    text = DEFAULT_RUBRIC.read_text()
    assert parse_rubric(text).policy == DEFAULT_POLICY
    v1 = parse_rubric('policy = "vllm-v1"\n' + text)
    assert v1.policy == Policy("vllm-v1") and v1.digest != parse_rubric(text).digest
    chunk = parse_rubric('policy = "vllm-v1:reserve_full_isl=false"\n' + text)
    assert str(chunk.policy) == "vllm-v1:reserve_full_isl=false" and chunk.digest != v1.digest
    with pytest.raises(RubricError, match=r"rubric.policy: policy must be one of p07, vllm-v1 .*got 'vllm'"):
        parse_rubric('policy = "vllm"\n' + text)
    assert under_policy(v1, Policy("vllm-v1")) is v1
    assert under_policy(parse_rubric(text), Policy("vllm-v1")).policy == Policy("vllm-v1")
