#!/usr/bin/env python3
"""Write a student release of minilm into DIR: the kit without its solutions, as a fresh git repository.

    python tools/make_student_release.py DIR              # every task module is the student's
    python tools/make_student_release.py DIR --given 1,2,5.1  # these ship with their reference

The release is this checkout's working tree, except:

* no ``solutions/``, and no text from inside any ``# BEGIN SOLUTION`` … ``# END SOLUTION`` block
  anywhere: checked after writing (every run of 3 consecutive non-blank lines of a block, or the
  whole block when it is shorter, must not occur in any file; and in a Python file, no run of 3
  statements of a block, compared as syntax trees with every local name renamed, so that a renamed
  or re-indented copy is found too). A doc page that quotes solution code is left out with a
  warning; any other file that does stops the release;
* no held-back graded tests (``@pytest.mark.hidden``, in ``tests/graded/hidden/``: the autograder
  runs them) and no autograder templates (``tools/autograder/``, the Classroom 50 autograder
  included), checked after writing; the release carries ``.github/workflows/classroom.yml``
  instead, a plain GitHub Actions workflow (no GitHub Classroom action: Classroom is being sunset)
  that runs ``minilm grade`` on every push (``tools/autograder/classroom.py``);
* no maintainer machinery: ``.ci/``, every ``tools/make_*`` (exercises, golden files, releases),
  ``tools/check_stubs.py`` and any other tool that mentions ``solutions``, this tool's test; no
  caches, ``.venv``, ``runs/``, build output;
* ``setup.cfg`` packages no ``solutions`` and its pytest ``testpaths`` is ``tests/graded``: in the
  release, plain ``pytest`` grades the student's ``exercises/`` (the task slots fall back to
  ``exercises`` when there is no ``solutions`` package, see ``autograd/tasks.py``). The rule for
  what ``pytest`` runs: the graded tests, and nothing else. ``tests/engine`` and ``tests/models`` ship
  but stay out of ``testpaths``: they drive the library, which here runs on the student's slots, so
  they pass only when the tasks they touch are done (a final check: ``pytest tests/engine tests/models``);
  a test that touches no slot checks code the student never edits and grades nothing;
* ``README.md`` (and ``README.zh-TW.md``) are the student's first page: install, ``minilm grade``,
  ``exercises/task01_autograd/``, ``docs/tasks/01-autograd.md``, ``pytest -m task1_1``;
* ``--given 1,2,5.1``: the slots of those task modules and tasks hold their reference bodies in
  ``exercises/``, and a graded test file is left out when every test in it grades a given task (for a
  course that starts later in the catalogue or skips a module others run on; see docs/course-map.md).

DIR must not exist yet (or be empty) and must lie outside this checkout. The release is committed
once (``git init`` + one commit), so its history holds nothing else. Needs ``exercises/`` in sync
with ``solutions/`` (``python tools/make_exercises.py --check``). Its parts: the leak check in
``make_student_release_leaks.py``, the release's README in ``make_student_release_readme.py``.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_student_release_leaks import (ROOT, ReleaseError, code_fragments, code_leaks, fragments,  # noqa: E402
                                        leaks, solution_blocks)
from make_student_release_readme import README, README_ZH, readme_intro, task_table  # noqa: E402

SKIP_TOP = {".git", ".ci", ".venv", "venv", "solutions", "runs", "build", "dist"}
SKIP_ANY = {"__pycache__", ".pytest_cache", ".hypothesis", ".ipynb_checkpoints", ".mypy_cache", ".ruff_cache"}
SKIP_SUFFIX = (".pyc", ".pyo", ".nbi", ".nbc", ".egg-info", ".DS_Store")
INSTRUCTOR_FILES = {"tools/check_stubs.py", "tests/models/test_student_release.py", "tests/models/test_autograder.py",
                    "tests/models/test_autograder_end_to_end.py", "tests/models/test_github_grading.py",
                    "tests/models/test_classroom50.py", "tests/models/test_grade_summary.py",
                    "tests/models/autograder_kit.py", "tests/models/conftest.py",
                    "docs/instructors.md", "docs/instructors.zh-TW.md"}
HIDDEN_MARK = "mark.hidden"  # a held-back graded test (tests/graded/hidden/): the autograder's, not the student's


# ---- what goes in ------------------------------------------------------------------------------
def release_files(root: Path = ROOT) -> list[Path]:
    """The files of ``root`` that a release copies (paths relative to ``root``)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root)
        dirnames[:] = sorted(d for d in dirnames
                             if not (rel_dir == Path(".") and d in SKIP_TOP) and d not in SKIP_ANY
                             and not d.endswith(SKIP_SUFFIX))
        for name in sorted(filenames):
            rel = rel_dir / name
            path = root / rel
            if (name.endswith(SKIP_SUFFIX) or path.is_symlink() or rel.as_posix() in INSTRUCTOR_FILES
                    or (rel_dir == Path(".") and name in SKIP_TOP)):  # in a git worktree, .git is a file
                continue
            if rel.parts[:2] == ("tools", "autograder") or (  # the Gradescope bundle's templates
                    rel.parts[:2] == ("tests", "graded") and name.endswith(".py")
                    and HIDDEN_MARK in path.read_text(encoding="utf-8", errors="ignore")):
                continue  # held-back tests never reach a student
            if rel.parts[0] == "tools" and (name.startswith("make_")  # generators: exercises, goldens, releases
                                            or "solutions" in path.read_text(encoding="utf-8", errors="ignore")):
                continue  # maintainers' tools: of no use to a student, and some read the reference
            out.append(rel)
    return out


# ---- rewritten files ---------------------------------------------------------------------------
def release_setup_cfg(text: str) -> str:
    """setup.cfg without the ``solutions`` package and with ``testpaths = tests/graded``."""
    lines, out, changed = text.splitlines(keepends=True), [], 0
    for line in lines:
        if line.strip() in ("solutions", "solutions.*"):
            changed += 1
            continue
        if re.match(r"^testpaths\s*=", line):
            line, changed = "testpaths = tests/graded\n", changed + 1
        out.append(line)
    if changed != 3:
        raise ReleaseError("setup.cfg: expected 'solutions', 'solutions.*' under [options.packages.find] "
                           "and one 'testpaths =' line; update release_setup_cfg() for the new layout")
    return "".join(out)


# ---- the release ---------------------------------------------------------------------------------
def given_tasks(spec: str | None, blocks) -> set[str]:
    """``"1,2,5.1"`` -> every task id of modules 1 and 2, and 5.1 (ids as in ``"2.3"``)."""
    known = {b.task for b in blocks}
    out = set()
    for part in (p.strip() for p in (spec or "").split(",")):
        if not part:
            continue
        if re.fullmatch(r"\d+", part):
            found = {t for t in known if t.split(".")[0] == part}
        elif re.fullmatch(r"\d+\.\d+", part):
            found = {part} & known
        else:
            raise ReleaseError(f"--given {spec!r}: expected task modules and tasks such as 1,2,5.1")
        if not found:
            raise ReleaseError(f"--given: no task slot of {part} in solutions/")
        out |= found
    return out


def exercise_with_given(text: str, blocks, given: set[str]) -> str:
    """A solution file as the release's exercise: given blocks keep their body (without the markers),
    the others become the stub line that tools/make_exercises.py writes."""
    lines = text.splitlines(keepends=True)
    for b in sorted(blocks, key=lambda b: b.span, reverse=True):
        first, last = b.span
        if b.task in given:
            lines[first:last + 1] = lines[first + 1:last]
        else:
            lines[first:last + 1] = [f'{b.indent}raise NotImplementedError("Task {b.task}: {b.func}")\n']
    return "".join(lines)


def graded_tasks(path: Path) -> set[str]:
    """The tasks a graded test file is marked with (``task4_capstone`` counts as module 4)."""
    found = re.findall(r"mark\.task(\d+)_(\d+|capstone)\b", path.read_text(encoding="utf-8"))
    return {f"{m}.{t}" for m, t in found}


def _git(dest: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="minilm release", GIT_AUTHOR_EMAIL="minilm-release@localhost",
               GIT_COMMITTER_NAME="minilm release", GIT_COMMITTER_EMAIL="minilm-release@localhost")
    subprocess.run(["git", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
                   cwd=dest, env=env, check=True, stdout=subprocess.DEVNULL)


def make_release(dest, *, given: str | None = None, root: Path = ROOT, git: bool = True) -> Path:
    """Write the release into ``dest`` (see the module docstring); returns its path."""
    dest, root = Path(dest).resolve(), Path(root).resolve()
    if dest == root or root in dest.parents:
        raise ReleaseError(f"{dest} is inside the checkout {root}: choose a folder outside it")
    if dest.exists() and any(dest.iterdir()):
        raise ReleaseError(f"{dest} exists and is not empty: give a new folder")
    if not (root / "solutions").is_dir():
        raise ReleaseError(f"{root} has no solutions/: a release is made from a full checkout")
    check = subprocess.run([sys.executable, str(root / "tools" / "make_exercises.py"), "--check"],
                           cwd=root, capture_output=True, text=True)
    if check.returncode != 0:
        raise ReleaseError("exercises/ is out of sync with solutions/; run python tools/make_exercises.py\n"
                           + check.stderr[-2000:])
    blocks = solution_blocks(root)
    gift = given_tasks(given, blocks)
    module_tasks: dict[str, set] = {}
    for b in blocks:
        module_tasks.setdefault(b.task.split(".")[0], set()).add(b.task)

    def is_given(task: str) -> bool:  # a capstone is given when its whole module is
        module, _, n = task.partition(".")
        return module_tasks.get(module, {None}) <= gift if n == "capstone" else task in gift

    frags = fragments(b for b in blocks if b.task not in gift)
    cfrags = code_fragments([b for b in blocks if b.task not in gift], root)
    left_out, copies = [], []
    for rel in release_files(root):
        if rel.parts[:2] == ("tests", "graded") and rel.suffix == ".py":
            marked = graded_tasks(root / rel)
            if marked and all(is_given(t) for t in marked):
                continue  # every test in it grades a given task
        found = leaks(root / rel, frags) + code_leaks(root / rel, cfrags)
        if found and (rel.parts[0] == "docs" or rel.suffix in (".md", ".rst", ".txt")):
            left_out.append(f"{rel} (quotes {', '.join(found[:3])})")
            continue
        if found:
            copies.append(f"{rel}: {', '.join(found)}")
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)
    if copies:  # STYLE.md habit 11: the library calls the slot, it never carries the answer
        raise ReleaseError("these files copy a solution block (a renamed or re-indented copy counts): make "
                           "the library call the task slot through autograd.tasks instead:\n  " + "\n  ".join(copies))
    for file in sorted({b.file for b in blocks if b.task in gift}):
        text = (root / "solutions" / file).read_text(encoding="utf-8")
        (dest / "exercises" / file).write_text(exercise_with_given(text, [b for b in blocks if b.file == file], gift),
                                               encoding="utf-8")
    (dest / "setup.cfg").write_text(release_setup_cfg((root / "setup.cfg").read_text(encoding="utf-8")),
                                    encoding="utf-8")
    whole = sorted((m for m, ts in module_tasks.items() if ts <= gift), key=int)
    parts = [f"module {m}" for m in whole] + sorted(
        (f"Task {t}" for t in gift if t.split(".")[0] not in whole), key=lambda x: [int(v) for v in x[5:].split(".")])
    listed = ", ".join(parts)
    note = f" Except {listed}: they come with their reference and are not graded." if gift else ""
    note_zh = f" 已附參考實作、不計分的任務：{listed}。" if gift else ""
    (dest / "README.md").write_text(README.format(intro=readme_intro(root), given=note,
                                                  table="\n".join(task_table(dest, gift))),
                                    encoding="utf-8")
    (dest / "README.zh-TW.md").write_text(README_ZH.format(given=note_zh), encoding="utf-8")
    for rel in left_out:
        print(f"make_student_release: warning: left out {rel}", file=sys.stderr)
    bad = [f"{p.relative_to(dest)}: {', '.join(found)}" for p in sorted(dest.rglob("*"))
           if p.is_file() and (found := leaks(p, frags) + code_leaks(p, cfrags))]
    if bad or (dest / "solutions").exists():
        raise ReleaseError("the release would contain solution text:\n  " + "\n  ".join(bad or ["solutions/"]))
    held = [str(p.relative_to(dest)) for p in sorted((dest / "tests" / "graded").rglob("*.py"))
            if HIDDEN_MARK in p.read_text(encoding="utf-8")]
    if held:
        raise ReleaseError("the release would contain held-back tests: " + ", ".join(held))
    _release_manifest(root, dest)
    _classroom_workflow(dest)
    if git:
        _git(dest, "init", "-q")
        _git(dest, "add", "-A")
        _git(dest, "commit", "-q", "-m", "minilm student release")
    return dest


def _release_manifest(root: Path, dest: Path) -> None:
    """The release's tests/graded/manifest.json lists only the tests the release has: no held-back test
    (not even its name), none of a given task."""
    sys.path.insert(0, str(root))
    from minilm.grading import manifest
    kept = [e for e in manifest.load(root, existing_only=False).values() if not e.hidden and (dest / e.file).is_file()]
    (dest / manifest.PATH).write_text(manifest.dump(kept, "the kit's manifest, for a student release"),
                                      encoding="utf-8")


def _classroom_workflow(dest: Path) -> None:
    """Write the release's grading workflow (tools/autograder/classroom.py, kept out of the release)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("minilm_classroom", ROOT / "tools" / "autograder" / "classroom.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.write_workflow(dest)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="See the module docstring for what a release holds.")
    ap.add_argument("dest", type=Path, metavar="DIR", help="the new folder to write (must not exist or be empty)")
    ap.add_argument("--given", metavar="TASKS", help="task modules and tasks to ship with their reference and "
                                                     "leave ungraded, e.g. 1,2,5.1")
    ap.add_argument("--no-git", action="store_true", help="do not make DIR a git repository")
    args = ap.parse_args(argv)
    try:
        dest = make_release(args.dest, given=args.given, git=not args.no_git)
    except (ReleaseError, subprocess.CalledProcessError, OSError) as e:
        print(f"make_student_release: {e}", file=sys.stderr)
        return 1
    print(f"wrote the student release to {dest}\n"
          f"  check it:  cd {dest} && python -m minilm.cli grade   (every task 'not started')\n"
          f"  students:  read {dest / 'README.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
