"""Every style file is a correct submission: the suite passes it under the quick profile."""

import subprocess
import sys
from pathlib import Path

import pytest

STYLES = sorted((Path(__file__).resolve().parents[2] / "conformance" / "selfcheck" / "styles").glob("*.py"))
FAST = "heap_queue"   # one style runs by default; the rest are marked slow


def test_there_are_at_least_six_styles_each_naming_its_style() -> None:
    assert len(STYLES) >= 6
    for path in STYLES:
        assert path.read_text().startswith('"""Style: '), f"{path.name} must open with a docstring naming its style"


@pytest.mark.long
@pytest.mark.parametrize("style", [
    pytest.param(p, marks=() if p.stem == FAST else pytest.mark.slow, id=p.stem) for p in STYLES
])
def test_style_passes_the_quick_profile(style: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "conformance", "check", str(style), "--profile", "quick", "--quiet"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
