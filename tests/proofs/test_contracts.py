"""CrossHair finds no counterexample to the helper contracts, and does find one in a planted wrong contract."""

import subprocess
import sys
import textwrap

import pytest

from spec.bounded import contracts


def test_contracts_hold_on_samples():
    assert contracts.blocks_for_rounds_up(4, 9) == 3
    assert contracts.try_grow_keeps_accounting(4, 2, 3, 1, 4)
    assert contracts.chunk_stays_within_tokens(6, 0, 0, 4) == 4


@pytest.mark.slow
def test_crosshair_finds_nothing_in_the_contracts():
    r = subprocess.run([sys.executable, "-m", "crosshair", "check", "--per_condition_timeout=20",
                        "spec.bounded.contracts"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and not r.stdout.strip(), r.stdout


@pytest.mark.slow
def test_crosshair_refutes_a_wrong_contract(tmp_path):
    bad = tmp_path / "wrong_contract.py"
    bad.write_text(textwrap.dedent('''
        from spec.model import Config
        from spec.rules import blocks_for

        def floor_not_ceil(block_size: int, tokens: int) -> int:
            """
            pre: 1 <= block_size <= 8 and 0 <= tokens <= 64
            post: __return__ * block_size <= tokens
            """
            return blocks_for(Config(1, block_size, 1, 1), tokens)
    '''))
    r = subprocess.run([sys.executable, "-m", "crosshair", "check", "--per_condition_timeout=20", str(bad)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode != 0 and "floor_not_ceil" in r.stdout
