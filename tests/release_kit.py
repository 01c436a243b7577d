"""Make a student release for a test and run commands inside it as if this checkout did not exist.

An editable install of this checkout puts its ``solutions`` on every interpreter's import path; the
commands below run with that finder and this checkout's path entries removed, so a release behaves
as it does on a student's machine.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "make_student_release.py"

BOOT = """\
import os, runpy, sys
root = {root!r}
sys.path[:] = [p for p in sys.path if os.path.realpath(p or '.') != root]
sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, '__module__', '').startswith('__editable__')]
sys.path.insert(0, os.getcwd())
sys.argv = [{module!r}, *sys.argv[1:]]
runpy.run_module({module!r}, run_name='__main__', alter_sys=True)
"""


def run_in(where: Path, module: str, *args: str, timeout: int = 900, env: dict | None = None,
           cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``python -m module args`` in the release at ``where`` (``cwd`` may be one of its folders)."""
    base = {k: v for k, v in os.environ.items() if k not in ("MINILM_IMPL", "PYTHONPATH", "PYTEST_ADDOPTS")}
    base["MPLBACKEND"] = "Agg"
    base.update(env or {})
    code = BOOT.format(root=os.path.realpath(ROOT), module=module)
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd or where, env=base,
                          capture_output=True, text=True, timeout=timeout)


def make_release(dest: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOL), str(dest), *extra], capture_output=True, text=True,
                          timeout=600)


def fill_from_reference(release: Path, *files: str) -> None:
    """Copy reference files (``task01_autograd/backward.py`` or a whole ``task01_autograd``) into the
    release's exercises/: a student who did those tasks right."""
    for rel in files:
        src = ROOT / "solutions" / rel
        dst = release / "exercises" / rel
        if src.is_dir():
            for f in src.glob("*.py"):
                if f.name != "__init__.py":
                    shutil.copy(f, dst / f.name)
        else:
            shutil.copy(src, dst)


def plant(release: Path, rel: str, old: str, new: str, *, from_reference: bool = False) -> None:
    """Replace ``old`` by ``new`` (once) in exercises/``rel`` — a student's mistake."""
    if from_reference:
        fill_from_reference(release, rel)
    path = release / "exercises" / rel
    text = path.read_text(encoding="utf-8")
    if old not in text:
        raise AssertionError(f"plant: {old!r} not found in exercises/{rel}")
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
