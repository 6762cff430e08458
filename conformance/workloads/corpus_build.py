"""Regenerate the non-golden corpus families: ``python -m conformance.workloads.corpus_build``.

- exhaustive: the BUILD small scope, keeping the first workload of each behaviour
  signature (features, rules fired, preemptions), smallest first;
- edge: edge-biased Hypothesis examples (derandomized), keeping behaviours exhaustive lacks;
- counterexamples: every counterexample pinned for a mutant (tests/mutants/expected).
The golden family is read from spec/golden/*.toml and never copied here. Output is
deterministic: rerunning it on the same code rewrites the same bytes.
"""

from __future__ import annotations

import argparse
import json
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings

from conformance.checks.checkers import expected_trace
from conformance.workloads.corpus import CORPUS_DIR, MANIFEST, features, load_corpus
from conformance.workloads.exhaustive import BUILD, small_scope
from conformance.workloads.generators import edge_workloads
from spec.trace import FORMAT_VERSION, RULES_VERSION, Workload, workload_from_json, workload_to_json

FAMILIES = ("exhaustive", "edge", "counterexamples")
EXPECTED_DIR = Path(__file__).resolve().parents[2] / "tests" / "mutants" / "expected"
EDGE_DRAWS = 3000


def signature(w: Workload) -> tuple[object, ...]:
    """What makes a workload new for the corpus: its features and the rules it fires."""
    trace = expected_trace(w)
    rules = tuple(sorted({e.rule for s in trace.steps for e in s.events}))
    return features(w), rules, min(trace.final.num_preemptions, 3)


def select(workloads: Iterable[Workload], seen: set[tuple[object, ...]]) -> Iterator[Workload]:
    """The first workload of each signature not in `seen`, in the order given (adds to `seen`)."""
    for w in workloads:
        sig = signature(w)
        if sig not in seen:
            seen.add(sig)
            yield w


def edge_examples(draws: int) -> list[Workload]:
    """Draw edge-biased workloads deterministically (a fixed derandomized Hypothesis run)."""
    out: list[Workload] = []

    @settings(max_examples=draws, derandomize=True, database=None, deadline=None, phases=(Phase.generate,),
              suppress_health_check=list(HealthCheck))
    @given(edge_workloads())
    def collect(w: Workload) -> None:
        out.append(w)

    collect()
    return out


def _write(family: str, named: list[tuple[str, Workload]], root: Path) -> int:
    folder = root / family
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for name, w in named:
        tagged = Workload(w.config, w.requests, w.sample, name, features(w))
        (folder / f"{name}.json").write_text(json.dumps(workload_to_json(tagged), indent=1, sort_keys=True) + "\n")
    return len(named)


def build(root: Path = CORPUS_DIR, families: Iterable[str] = FAMILIES, edge_draws: int = EDGE_DRAWS) -> dict[str, int]:
    """Rewrite the chosen families under `root` and the manifest; return the vector count per family."""
    counts: dict[str, int] = {}
    families = tuple(families)
    seen: set[tuple[object, ...]] = set()  # shared: edge keeps only behaviours exhaustive lacks
    if "exhaustive" in families:
        chosen = list(select(small_scope(BUILD), seen))
        counts["exhaustive"] = _write("exhaustive", [(f"x{i:04d}", w) for i, w in enumerate(chosen)], root)
    if "edge" in families:
        if "exhaustive" not in families:
            seen.update(signature(v.workload) for v in load_corpus(root, ["exhaustive"])[0])
        chosen = list(select(edge_examples(edge_draws), seen))
        counts["edge"] = _write("edge", [(f"e{i:04d}", w) for i, w in enumerate(chosen)], root)
    if "counterexamples" in families:
        named = []
        for path in sorted(EXPECTED_DIR.glob("*.json")):
            for check, pinned in sorted(json.loads(path.read_text()).get("counterexamples", {}).items()):
                named.append((f"{path.stem}.{check}", workload_from_json(pinned["workload"])))
        counts["counterexamples"] = _write("counterexamples", named, root)
    manifest_path = root / MANIFEST
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    old = manifest.get("families", {})
    for family in sorted(p.name for p in root.iterdir() if p.is_dir()):
        n = counts.get(family, len(list((root / family).glob("*.json"))))
        old[family] = {**old.get(family, {}), "vectors": n}
    old.setdefault("exhaustive", {})["scope"] = BUILD.to_json()
    old.setdefault("edge", {})["draws"] = edge_draws
    manifest = {"format": "schedcheck/corpus", "version": FORMAT_VERSION, "rules": RULES_VERSION,
                "corpus": manifest.get("corpus", 1),  # the content version grades name; bump it by hand
                "golden": "spec/golden/*.toml", "families": dict(sorted(old.items()))}
    manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.workloads.corpus_build", description=__doc__)
    parser.add_argument("--family", action="append", choices=FAMILIES, help="only this family (repeatable)")
    args = parser.parse_args()
    for family, n in build(families=args.family or FAMILIES).items():
        print(f"{family}: {n} vectors")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
