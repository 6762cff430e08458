"""``pytest --schedcheck PATH``: the conformance checks as pytest items, so a course's CI gets JUnit for free.

One item per check (golden, differential, invariants, ...), named
``schedcheck/<submission>::<check>`` (JUnit class ``schedcheck.<submission>``). The suite runs once per session, at the
first item; a failing item's report is the counterexample's step table and the
command that replays it. Without ``--schedcheck`` the plugin adds nothing and
imports nothing heavy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

CHECK_NAMES = ("golden", "differential", "invariants", "equivalence", "liveness", "hygiene", "stateful")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("schedcheck", "conformance of a P07 scheduler")
    group.addoption("--schedcheck", metavar="PATH", action="append", default=[],
                    help="check this submission (a .py file, impl or spec); one item per check; may repeat")
    group.addoption("--schedcheck-profile", metavar="P", default="quick", choices=("quick", "default", "thorough"),
                    help="how much the suite explores (default: quick)")
    group.addoption("--schedcheck-adapter", metavar="FILE", default=None,
                    help="an adapter for submissions with other names (as schedcheck check --adapter)")


class SchedcheckFailure(Exception):
    """A check failed; the message is the counterexample as the suite prints it."""


class SchedcheckItem(pytest.Item):
    def __init__(self, *, check: str, target: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check = check
        self.target = target

    def runtest(self) -> None:
        report = _report(self.config, self.target)
        result = report.checks[self.check]
        status = getattr(result, "status", "error")
        if status == "pass":
            return
        if status in ("skipped", "unknown"):
            pytest.skip(f"{self.check} did not run: " + "; ".join(report.notes or ["no white-box access"]))
        if status == "fail" and result.counterexample is not None:
            raise SchedcheckFailure(_explain(self.config, self.target, result.counterexample))
        raise SchedcheckFailure(f"{self.check}: status {status!r}; run `schedcheck check {self.target}` to see why")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, SchedcheckFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return Path(self.target), None, f"schedcheck {self.check}"


class SchedcheckCollector(pytest.Collector):
    def __init__(self, *, target: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target = target

    def collect(self) -> list[pytest.Item]:
        return [SchedcheckItem.from_parent(self, name=check, check=check, target=self.target)
                for check in CHECK_NAMES]


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    for target in config.getoption("schedcheck"):
        name = f"schedcheck/{_shown(target)}"
        collector = SchedcheckCollector.from_parent(session, name=name, nodeid=name, target=target)
        items.extend(collector.collect())


def _shown(target: str) -> str:
    """The target as the user would type it from the working directory."""
    path = Path(target)
    try:
        return str(path.resolve().relative_to(Path.cwd())) if path.exists() else target
    except ValueError:
        return target


def _report(config: pytest.Config, target: str) -> Any:
    """The suite's report on `target`, computed once per session."""
    cache: dict[str, Any] = config.stash.setdefault(_REPORTS, {})
    if target not in cache:
        from conformance.adapters import LoadError
        from conformance.suite import run

        try:
            cache[target] = run(target, config.getoption("schedcheck_profile"),
                                adapter=config.getoption("schedcheck_adapter"))
        except LoadError as e:
            raise pytest.UsageError(f"--schedcheck {target}: cannot load it: {e}") from None
    return cache[target]


def _explain(config: pytest.Config, target: str, cx: Any) -> str:
    from conformance.reports.traces import render, shown_run

    adapter = config.getoption("schedcheck_adapter")
    table = render(cx, shown_run(cx, target, adapter, white_box=True))
    flag = f" --adapter {adapter}" if adapter else ""
    return (f"{table}\n\nrerun: schedcheck check {target}{flag} --trace-dir failures/\n"
            f"then:  schedcheck replay failures/<file>.json {target}{flag}")


_REPORTS = pytest.StashKey[dict[str, Any]]()
