"""The autograder on the Ubuntu releases Gradescope offers, with setup.sh run for real.

test_autograder.py runs run_autograder with this interpreter; here each release's own userland
does everything Gradescope's image build and a submission do: a minimal Ubuntu (debootstrap
--variant=minbase: no Python at all, only the `main` component, so setup.sh must find or
install everything itself), the zip unpacked to /autograder/source, setup.sh run as root, then
run_autograder on correct, buggy, broken and hostile submissions, at the best isolation level
the chroot allows and at `process-group` (a container without namespaces).

Opt-in, since it downloads two Ubuntu userlands and the pinned wheels (a few minutes each):

    sudo python -m pytest -m ubuntu tests/gradescope/test_ubuntu_images.py

It needs root (chroot, bind mounts), debootstrap, the Ubuntu archive keyring
(/usr/share/keyrings/ubuntu-archive-keyring.gpg, package ubuntu-keyring) and the Ubuntu archive.
Base userlands are cached in SCHEDCHECK_UBUNTU_CACHE (default /var/cache/schedcheck-ubuntu).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gradescope.test_autograder import BUGGY, CORRECT, LEAK, SECRET, STEAL, SYNTAX, assert_nothing_secret
from tests.gradescope.test_autograder import image as image  # noqa: F401  (the zip fixture, reused)

pytestmark = pytest.mark.ubuntu
RELEASES = {"jammy": "22.04", "noble": "24.04"}
MIRROR = "http://archive.ubuntu.com/ubuntu"
KEYRING = Path("/usr/share/keyrings/ubuntu-archive-keyring.gpg")
CACHE = Path(os.environ.get("SCHEDCHECK_UBUNTU_CACHE", "/var/cache/schedcheck-ubuntu"))
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")  # the host's trust store (a proxy's CA, if any)
HOST_CA = "/schedcheck-host-ca.crt"  # where the chroot sees it: apart from the image's own trust store


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "needs root (chroot and bind mounts)"
    if shutil.which("debootstrap") is None:
        return "needs debootstrap (apt-get install debootstrap)"
    if not KEYRING.is_file():
        return f"needs the Ubuntu archive keyring at {KEYRING} (package ubuntu-keyring)"
    return None


def _base(release: str) -> Path:
    """A minimal userland of `release`, made once and cached."""
    base = CACHE / release
    if base.is_dir():
        return base
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f"{release}.", dir=CACHE))
    script = Path("/usr/share/debootstrap/scripts") / release
    args = ["debootstrap", "--variant=minbase", f"--keyring={KEYRING}", release, str(partial), MIRROR]
    if not script.exists():  # an older debootstrap: every Ubuntu release since 7.10 uses gutsy's script
        args.append(str(script.with_name("gutsy")))
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        pytest.fail(f"debootstrap {release} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    partial.rename(base)
    return base


def _chroot(root: Path, script: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `script` in the chroot with the host's way out to the package registries, and nothing else of it."""
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "PIP_INDEX_URL", "PIP_DEFAULT_TIMEOUT")}
    if (root / HOST_CA.lstrip("/")).is_file():
        keep |= {"PIP_CERT": HOST_CA, "SSL_CERT_FILE": HOST_CA, "REQUESTS_CA_BUNDLE": HOST_CA}
    return subprocess.run(["chroot", str(root), "/bin/bash", "-c", script], env={**keep, **(env or {})},
                          capture_output=True, text=True, timeout=1800, check=False)


@pytest.fixture(scope="module", params=sorted(RELEASES))
def ubuntu(request: pytest.FixtureRequest, image: Path) -> Iterator[Path]:  # noqa: F811
    """A copy of the release's userland with the zip unpacked and setup.sh run, as Gradescope builds it."""
    why = _missing()
    if why is not None:
        pytest.skip(why)
    work = Path(tempfile.mkdtemp(prefix=f"schedcheck-{request.param}-"))
    root = work / "root"
    mounted: list[Path] = []
    try:
        subprocess.run(["cp", "-a", str(_base(request.param)), str(root)], check=True)
        for d in ("proc", "sys", "dev"):
            subprocess.run(["mount", "--rbind", f"/{d}", str(root / d)], check=True)
            mounted.append(root / d)
        if CA_BUNDLE.is_file():  # the host's trust store, for its proxy to the registries; not the image's
            shutil.copy(CA_BUNDLE, root / HOST_CA.lstrip("/"))
        shutil.copy("/etc/resolv.conf", root / "etc/resolv.conf")
        with zipfile.ZipFile(image) as z:
            z.extractall(root / "autograder/source")
        done = _chroot(root, "bash /autograder/source/setup.sh")
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        version = _chroot(root, ". /etc/os-release && echo $VERSION_ID").stdout.strip()
        assert version == RELEASES[request.param]
        assert "setup.sh: using /usr/bin/python3" in done.stdout
        yield root
    finally:
        for m in reversed(mounted):
            subprocess.run(["umount", "-R", "-l", str(m)], check=False)
        shutil.rmtree(work, ignore_errors=True)


def grade(root: Path, files: dict[str, str], isolation: str | None = None) -> dict:
    """Put `files` in /autograder/submission and run run_autograder in the chroot, as Gradescope does."""
    autograder = root / "autograder"
    for d in ("submission", "results"):
        shutil.rmtree(autograder / d, ignore_errors=True)
        (autograder / d).mkdir()
    for name, text in files.items():
        (autograder / "submission" / name).write_text(text.format(root="/autograder") if "{root" in text else text)
    (autograder / "submission_metadata.json").write_text(json.dumps({"users": [{"email": SECRET}]}))
    done = _chroot(root, "/autograder/source/run_autograder" if os.access(
        autograder / "source/run_autograder", os.X_OK) else "bash /autograder/source/run_autograder",
        {"SCHEDCHECK_ISOLATION": isolation} if isolation else None)
    assert done.returncode == 0, done.stderr
    assert list((root / "tmp").iterdir()) == []  # nothing left behind in the image's /tmp
    return {"results": json.loads((autograder / "results/results.json").read_text()), "stdout": done.stdout}


@pytest.mark.parametrize("isolation", [None, "process-group"])
def test_a_correct_and_a_buggy_submission_grade_alike_at_every_level(ubuntu: Path, isolation: str | None) -> None:
    correct, buggy = grade(ubuntu, {"p07_scheduler.py": CORRECT}, isolation), \
        grade(ubuntu, {"p07_scheduler.py": BUGGY}, isolation)
    assert correct["results"]["score"] == 100
    assert 0 < buggy["results"]["score"] < 100
    for got in (correct, buggy):
        level = got["results"]["extra_data"]["schedcheck"]["isolation"]
        if isolation is not None:
            assert level == isolation
        assert_nothing_secret(got)


def test_hostile_and_broken_submissions_get_nothing_without_namespaces(ubuntu: Path) -> None:
    steal = grade(ubuntu, {"p07_scheduler.py": STEAL}, "process-group")
    leak = grade(ubuntu, {"p07_scheduler.py": LEAK}, "process-group")
    syntax = grade(ubuntu, {"p07_scheduler.py": SYNTAX}, "process-group")
    for got in (steal, leak, syntax):
        assert got["results"]["score"] == 0
        assert_nothing_secret(got)
    assert "nothing to steal under" in steal["results"]["output"]
    assert "PermissionError" in leak["results"]["output"]
    assert "SyntaxError at `p07_scheduler.py:4`" in syntax["results"]["output"]
