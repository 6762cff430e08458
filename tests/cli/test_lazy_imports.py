"""Each subcommand imports only what it needs: `check` runs where z3 and CrossHair are not installed."""

import subprocess
import sys
import textwrap

import pytest

# Runs the CLI in a fresh interpreter in which z3 and crosshair cannot be imported.
WITHOUT_SOLVERS = textwrap.dedent("""
    import importlib.abc, sys
    class Missing(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("z3", "crosshair"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    sys.meta_path.insert(0, Missing())
    from conformance.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def run_cli(*args):
    return subprocess.run([sys.executable, "-c", WITHOUT_SOLVERS, *args], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.long
def test_check_runs_without_z3():
    done = run_cli("check", "impl", "--profile", "quick", "--quiet")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "No module named" not in done.stderr


def test_prove_without_z3_says_what_to_install():
    done = run_cli("prove", "--quick")
    assert done.returncode == 2
    assert "z3-solver" in done.stderr and "Traceback" not in done.stderr


def test_help_lists_every_subcommand_without_importing_them():
    done = run_cli("--help")
    assert done.returncode == 0
    for name in ("explain", "check", "replay", "prove", "grade", "merge"):
        assert f"    {name} " in done.stdout
