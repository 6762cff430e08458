"""Find the submissions in a folder: `.py` files, folders holding p07_scheduler.py, or zips of those.

Every entry of the folder is accounted for: one that is not a usable submission
still gets an Entry with a `problem`, so it is graded 0 with the reason instead
of being lost. Zips are unpacked with caps and no path escapes.
"""

from __future__ import annotations

import shutil
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MODULE = "p07_scheduler.py"
ZIP_MAX_BYTES = 2_000_000  # uncompressed bytes kept from one zip
ZIP_MAX_MEMBERS = 200


@dataclass(frozen=True, slots=True)
class Entry:
    name: str  # the entry's name in the folder, without .py/.zip: its results go to OUT/<name>/
    source: Path  # what the instructor gave
    module: Path | None  # the p07_scheduler.py to grade, None when there is none
    problem: str = ""  # why there is nothing to grade


def _zip_module(path: Path, workdir: Path) -> tuple[Path | None, str]:
    """Unpack the .py members of a zip under caps; return its p07_scheduler.py."""
    dest = workdir / path.stem
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    try:
        with zipfile.ZipFile(path) as z:
            members = z.infolist()
            if len(members) > ZIP_MAX_MEMBERS:
                return None, f"the zip has {len(members)} members, more than {ZIP_MAX_MEMBERS}"
            budget = ZIP_MAX_BYTES
            for m in members:
                name = PurePosixPath(m.filename)
                if m.is_dir() or name.suffix != ".py" or "__MACOSX" in name.parts:
                    continue
                if name.is_absolute() or ".." in name.parts or stat.S_ISLNK(m.external_attr >> 16):
                    return None, f"the zip member {m.filename!r} points outside the zip; zip the files themselves"
                budget -= m.file_size
                if budget < 0:
                    return None, f"the zip's .py files exceed {ZIP_MAX_BYTES} bytes"
                target = dest.joinpath(*name.parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                with z.open(m) as src:
                    target.write_bytes(src.read(m.file_size + 1)[: m.file_size])
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        return None, f"the zip cannot be read: {e}"
    found = sorted(dest.rglob(MODULE), key=lambda p: (len(p.parts), str(p)))
    if not found:
        return None, f"the zip holds no {MODULE}"
    return found[0], ""


def collect(folder: str | Path, workdir: str | Path) -> list[Entry]:
    """Every entry of `folder`, sorted by name; zips are unpacked under `workdir`."""
    folder, workdir = Path(folder), Path(workdir)
    if not folder.is_dir():
        raise NotADirectoryError(f"SUBMISSIONS must be a folder of submissions, got {str(folder)!r}")
    entries = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        if path.is_dir():
            inner = path / MODULE
            entries.append(Entry(path.name, path, inner, "") if inner.is_file()
                           else Entry(path.name, path, None, f"the folder holds no {MODULE}"))
        elif path.suffix == ".py":
            entries.append(Entry(path.stem, path, path))
        elif path.suffix == ".zip":
            unpacked, problem = _zip_module(path, workdir)
            entries.append(Entry(path.stem, path, unpacked, problem))
        else:
            entries.append(Entry(path.name, path, None, f"not a submission: expected a .py file, a folder "
                                                        f"holding {MODULE}, or a .zip of those"))
    names = [e.name for e in entries]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"two entries would write to the same result folder: {', '.join(dupes)}; rename one")
    return entries
