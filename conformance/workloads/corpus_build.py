"""Regenerate the non-golden corpus families: ``python -m conformance.workloads.corpus_build``.

- exhaustive: the BUILD small scope, keeping the first workload of each behaviour
  signature (features, rules fired, preemptions), smallest first;
- edge: edge-biased Hypothesis examples (derandomized), keeping behaviours exhaustive lacks;
- counterexamples: every counterexample pinned for a mutant (tests/mutants/expected);
- scale-<family>: the first seeds of each scale family (conformance/workloads/scale.py)
  whose workload reaches the family's target tags at a bounded checking cost.
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
from conformance.workloads import scale
from conformance.workloads.corpus import CORPUS_DIR, MANIFEST, features, load_corpus
from conformance.workloads.exhaustive import BUILD, small_scope
from conformance.workloads.generators import edge_workloads
from spec.trace import FORMAT_VERSION, RULES_VERSION, Workload, workload_from_json, workload_to_json

SCALE = {  # family -> (vectors, tags each must carry)
    "large-numbers": (16, ("large-numbers",)),
    "crowd": (3, ("crowd", "burst", "long-waiting-queue")),
    "long-run": (2, ("long-run",)),
    "thrash": (6, ("thrash",)),
    "mix": (3, ("crowd", "thrash", "large-numbers")),
}
MIN_STEPS = {"long-run": 300}  # long enough for a counter that wraps at 256
MAX_STEPS = 700  # a frozen scale vector runs at most this many steps ...
MAX_COST = 6_000  # ... and steps x (requests + 4) at most this: white-box checking is linear in both
MAX_SEEDS = 400
FAMILIES = ("exhaustive", "edge", "counterexamples", *(f"scale-{f}" for f in SCALE))
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


def scale_seeds(family: str) -> list[int]:
    """The first seeds of a scale family whose workload carries its target tags within the cost bounds."""
    want, tags = SCALE[family]
    chosen: list[int] = []
    for i in range(MAX_SEEDS):
        w = scale.build(family, i)
        steps = len(expected_trace(w).steps)
        if not MIN_STEPS.get(family, 0) <= steps <= MAX_STEPS or steps * (len(w.requests) + 4) > MAX_COST:
            continue
        if set(tags) <= set(features(w)):
            chosen.append(i)
            if len(chosen) == want:
                return chosen
    raise RuntimeError(f"scale family {family!r}: only {len(chosen)} of the first {MAX_SEEDS} seeds reach {tags} "
                       f"within {MAX_STEPS} steps; widen the family in scale.py or lower SCALE[{family!r}]")


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
    for family in (f for f in SCALE if f"scale-{f}" in families):
        seeds = scale_seeds(family)
        counts[f"scale-{family}"] = _write(f"scale-{family}", [(f"{family}-{i:04d}", scale.build(family, i))
                                                               for i in seeds], root)
    manifest_path = root / MANIFEST
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    old = manifest.get("families", {})
    for family in sorted(p.name for p in root.iterdir() if p.is_dir()):
        n = counts.get(family, len(list((root / family).glob("*.json"))))
        old[family] = {**old.get(family, {}), "vectors": n}
    old.setdefault("exhaustive", {})["scope"] = BUILD.to_json()
    old.setdefault("edge", {})["draws"] = edge_draws
    for family, (_, tags) in SCALE.items():
        old.setdefault(f"scale-{family}", {}).update(
            {"source": "conformance/workloads/scale.py", "tags": list(tags), "max_steps": MAX_STEPS,
             "max_cost": MAX_COST, "min_steps": MIN_STEPS.get(family, 0)})
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
