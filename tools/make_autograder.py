#!/usr/bin/env python3
"""Write the Gradescope autograder bundle of minilm: ``python tools/make_autograder.py OUT.zip``.

The zip holds, at its top (where Gradescope looks for them):

    setup.sh          run once when Gradescope builds the image: Python, the dependencies
                      (requirements.txt), a byte-compiled kit, a smoke test
    run_autograder    run for each submission: calls autograder.py with the image's Python
    autograder.py     the trusted driver: takes the submission in, grades it, writes results.json
    intake.py         which submitted files are taken (and the static scan of each)
    isolation.py      one unprivileged user per task module, and the clean-up after it
    requirements.txt  the kit's dependencies, from setup.cfg (install_requires and the test extra)
    README.md         for the instructor: layouts accepted, what is and is not defended
    kit/              this checkout's kit with its reference solutions and every graded test,
                      held-back ones included: autograd/ minilm/ solutions/ exercises/ (the stubs)
                      tests/ (graded/, helpers, data) setup.cfg pyproject.toml conftest.py

The templates live in ``tools/autograder/``. Needs ``exercises/`` in sync with ``solutions/``.
"""
from __future__ import annotations

import argparse
import configparser
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "tools" / "autograder"
TOP_FILES = ("setup.sh", "run_autograder", "autograder.py", "intake.py", "isolation.py", "README.md")
EXECUTABLE = {"setup.sh", "run_autograder"}
KIT_DIRS = ("autograd", "minilm", "solutions", "exercises", "tests/graded", "tests/data")
KIT_FILES = ("setup.cfg", "pyproject.toml", "conftest.py", "README.md", "tests/__init__.py",
             "tests/conftest.py", "tests/helpers.py",
             "tests/capstone_vocab.py")
SKIP_PARTS = {"__pycache__", ".pytest_cache", ".hypothesis", ".ipynb_checkpoints", ".grading"}
SKIP_SUFFIX = (".pyc", ".pyo", ".nbi", ".nbc")


class BundleError(Exception):
    pass


def requirements(setup_cfg: Path) -> list[str]:
    """install_requires plus the ``test`` extra of setup.cfg, one requirement a line."""
    cfg = configparser.ConfigParser()
    cfg.read(setup_cfg, encoding="utf-8")
    lines = cfg.get("options", "install_requires", fallback="").splitlines()
    lines += cfg.get("options.extras_require", "test", fallback="").splitlines()
    return [l.strip() for l in lines if l.strip()]


def kit_files(root: Path = ROOT) -> list[Path]:
    """The kit's files that the bundle carries, relative to ``root``."""
    out = [Path(f) for f in KIT_FILES if (root / f).is_file()]
    for d in KIT_DIRS:
        for path in sorted((root / d).rglob("*")):
            rel = path.relative_to(root)
            if (path.is_file() and not path.is_symlink() and not SKIP_PARTS & set(rel.parts)
                    and not path.name.endswith(SKIP_SUFFIX)):
                out.append(rel)
    return out


def _add(zf: zipfile.ZipFile, arcname: str, data: bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))  # reproducible bytes
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
    zf.writestr(info, data)


def make_bundle(out, root: Path = ROOT, check: bool = True) -> Path:
    """Write the bundle to ``out`` (a .zip path); returns it."""
    out, root = Path(out).resolve(), Path(root).resolve()
    if out.suffix != ".zip":
        raise BundleError(f"{out}: the bundle is a .zip file (Gradescope uploads a zip)")
    if not (root / "solutions").is_dir():
        raise BundleError(f"{root} has no solutions/: the bundle is made from a full checkout")
    if check and (root / "tools" / "make_exercises.py").is_file():
        res = subprocess.run([sys.executable, str(root / "tools" / "make_exercises.py"), "--check"],
                             cwd=root, capture_output=True, text=True)
        if res.returncode != 0:
            raise BundleError("exercises/ is out of sync with solutions/ (the bundle's clean copy would not match "
                              "the task pages): run python tools/make_exercises.py\n" + res.stderr[-1500:])
    if check and (root / "tools" / "make_grading_manifest.py").is_file():
        res = subprocess.run([sys.executable, str(root / "tools" / "make_grading_manifest.py"), "--check"],
                             cwd=root, capture_output=True, text=True)
        if res.returncode != 0:
            raise BundleError("tests/graded/manifest.json does not list the graded tests as they are (the grader "
                              "takes the tests and their points from it): run python tools/make_grading_manifest.py\n"
                              + res.stderr[-1500:])
    missing = [f for f in TOP_FILES if not (TEMPLATES / f).is_file()]
    if missing:
        raise BundleError(f"templates missing from {TEMPLATES}: {', '.join(missing)}")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with zipfile.ZipFile(tmp, "w") as zf:
        for name in TOP_FILES:
            _add(zf, name, (TEMPLATES / name).read_bytes(), name in EXECUTABLE)
        _add(zf, "requirements.txt", ("\n".join(requirements(root / "setup.cfg")) + "\n").encode())
        for rel in kit_files(root):
            _add(zf, f"kit/{rel.as_posix()}", (root / rel).read_bytes())
    tmp.replace(out)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Upload OUT.zip as the assignment's autograder (Gradescope: "
                                        "Configure Autograder → Zip file upload). See docs/instructors.md.")
    ap.add_argument("out", type=Path, metavar="OUT.zip", help="the bundle to write")
    args = ap.parse_args(argv)
    try:
        out = make_bundle(args.out)
    except (BundleError, OSError) as e:
        print(f"make_autograder: {e}", file=sys.stderr)
        return 1
    with zipfile.ZipFile(out) as zf:
        n = len(zf.namelist())
    print(f"wrote the Gradescope autograder bundle {out} ({n} files, {out.stat().st_size / 1e6:.1f} MB)\n"
          f"  try it locally:  see {TEMPLATES / 'README.md'} (AUTOGRADER_ROOT)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
