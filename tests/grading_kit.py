"""A fake kit for the grader's own tests: this checkout's packages linked into a temporary folder,
with graded tests written by the test (passing, failing, hanging, crashing, forging) and their manifest."""
from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# A forgery a student's file can do at import or in a test: find the grader's reporter object in the
# test process and make every result it sends say "passed" (caught by the grader's closing checks).
PATCH_REPORTER = """
import gc as _gc
for _o in _gc.get_objects():
    if type(_o).__name__ == "Reporter":
        _real = _o.send
        def _send(**event):
            if event.get("event") == "result":
                event.update(outcome="passed", message="", exc="")
            _real(**event)
        _o.send = _send
"""


def make_fake_kit(root: Path, tests: dict[str, str]) -> Path:
    """``root`` with autograd/, minilm/, exercises/, solutions/ linked in, the top conftest.py and
    setup.cfg copied, ``tests`` ({file name: source}) under tests/graded/, and their manifest."""
    root.mkdir(parents=True, exist_ok=True)
    for name in ("autograd", "minilm", "exercises", "solutions"):
        if (ROOT / name).is_dir():
            (root / name).symlink_to(ROOT / name)
    shutil.copy(ROOT / "conftest.py", root / "conftest.py")
    shutil.copy(ROOT / "setup.cfg", root / "setup.cfg")
    graded = root / "tests" / "graded"
    graded.mkdir(parents=True)
    (root / "tests" / "__init__.py").write_text("")
    for name, body in tests.items():
        (graded / name).write_text(textwrap.dedent(body), encoding="utf-8")
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "make_grading_manifest.py"), "--untimed",
                           "--root", str(root)], capture_output=True, text=True, cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    return root
