#!/usr/bin/env python3
"""The trusted side of the minilm autograder (Gradescope's ``run_autograder`` calls it).

    $AUTOGRADER_ROOT/submission/   the student's files, read here as text only (intake.py)
    $AUTOGRADER_ROOT/source/kit/   the kit with its reference solutions (never shown to student code)
    $AUTOGRADER_ROOT/grading/      made here: kit copies per task module, the student's files inside
    $AUTOGRADER_ROOT/cache/        numba's compiled kernels per module copy, compiled by setup.sh
    $AUTOGRADER_ROOT/results/results.json   written here, after every child has finished

For task module M the graded tests run (through ``minilm.grading.grade``, in child processes with
a CPU-time limit per test) in ``grading/mMM`` (its visible tests) and then ``grading/mMMh`` (its
held-back tests): the kit with the student's task files, whose ``solutions/taskMM_*`` is replaced by
modules that forward to the student's ``exercises/taskMM_*`` (so the reference of the graded module
is not on disk there), and with no held-back test in a copy whose results students see. Modules run
one after another. Run as root, each module's children run as their own unprivileged user and group
(uid = gid = MINILM_AUTOGRADER_UID + M), which can read its own kit copies only — not the others, not
source/, not the submission, not another module's scratch or cache — and after each module every
process of that user is killed and every file it left in a shared folder (/tmp, /var/tmp, /dev/shm)
is deleted. The list of tests, their points and their time limits come from the kit's manifest,
re-timed on this machine by ``setup.sh`` (``--calibrate``). See README.md for what this defends.

Environment: AUTOGRADER_ROOT (default /autograder); MINILM_AUTOGRADER_MODULES ("1,10": grade only
these modules); MINILM_AUTOGRADER_TIMEOUT (one CPU limit in seconds for every test, instead of the
measured ones); MINILM_AUTOGRADER_UID (default 61000; "off" keeps the children as the calling user,
e.g. for a local dry run as root).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from intake import known_files, take  # noqa: E402
from isolation import end_user, lock, make_preexec, private_dir, process_owner, remove_files_of  # noqa: E402

SHIM = '''"""Not the reference: the autograder grades module {m} here, so this forwards to the student's file."""
import importlib
import sys

sys.modules[__name__] = importlib.import_module("exercises.{mod}")
'''
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis", ".grading")
CHILD_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", "MPLBACKEND": "Agg",
             "NUMBA_NUM_THREADS": "1", "MINILM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
SHARED_DIRS = ("/tmp", "/var/tmp", "/dev/shm")  # where one module's user could leave something for the next
MANIFEST = Path("tests") / "graded" / "manifest.json"


def module_roots(work: Path, base: Path, modules: list[int], gid_of) -> dict[int, list[Path]]:
    """Two copies of ``base`` per module — its visible tests (``mMM``), its held-back tests
    (``mMMh``) — with ``solutions/taskMM_*`` swapped for forwarding modules, no other module's
    held-back tests, and no manifest (the grader holds it)."""
    roots = {}
    for m in modules:
        roots[m] = []
        for suffix, hidden in (("", False), ("h", True)):
            root = work / f"m{m:02d}{suffix}"
            shutil.copytree(base, root)
            (root / MANIFEST).unlink(missing_ok=True)
            for test in list((root / "tests" / "graded").rglob("test_task*_*.py")):
                held = "hidden" in test.relative_to(root).parts
                mine = test.name.startswith(f"test_task{m:02d}_")
                if (held and mine) if hidden else not held:
                    continue
                test.unlink()
            if hidden and not any((root / "tests" / "graded").rglob(f"test_task{m:02d}_*.py")):
                shutil.rmtree(root)
                continue
            for pkg in (root / "solutions").glob(f"task{m:02d}_*"):
                shutil.rmtree(pkg)
                pkg.mkdir()
                (pkg / "__init__.py").write_text(f'"""Module {m} is graded here: no reference, see its files."""\n')
                for src in sorted((root / "exercises" / pkg.name).glob("*.py")):
                    if src.name != "__init__.py":
                        (pkg / src.name).write_text(SHIM.format(m=m, mod=f"{pkg.name}.{src.stem}"), encoding="utf-8")
            lock(root, gid_of(m))
            roots[m].append(root)
    return roots


def selected_modules(kit: Path) -> list[int]:
    found = sorted({int(p.name[4:6]) for p in (kit / "exercises").glob("task[0-9][0-9]_*") if p.is_dir()})
    wanted = os.environ.get("MINILM_AUTOGRADER_MODULES", "").strip()
    if not wanted:
        return found
    chosen = sorted({int(x) for x in re.split(r"[,\s]+", wanted) if x})
    unknown = [m for m in chosen if m not in found]
    if unknown:
        raise SystemExit(f"MINILM_AUTOGRADER_MODULES={wanted!r}: no task module {unknown} in the kit")
    return chosen


def write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
    os.chmod(path, 0o644)


def _by_folder(files) -> str:
    """``task01_autograd/{backward, matmul}; task10_distill/{soft_targets}``."""
    groups: dict[str, list[str]] = {}
    for rel in files:
        folder, name = rel.split("/")
        groups.setdefault(folder, []).append(name[:-3])
    return "; ".join(f"{f}/{{{', '.join(names)}}}" for f, names in groups.items())


def header(intake, isolation: str, modules, all_modules) -> str:
    lines = ["minilm autograder", f"Submission layout: {intake.layout}",
             f"Graded modules: {', '.join(map(str, modules))}" + ("" if modules == all_modules else " (a subset)"),
             f"Taken ({len(intake.taken)}): " + (_by_folder(intake.taken) or "none — every task is graded on "
                                                 "its untouched stub")]
    if intake.ignored:
        shown = intake.ignored[:40]
        more = f" … and {len(intake.ignored) - 40} more" if len(intake.ignored) > 40 else ""
        lines.append(f"Ignored ({len(intake.ignored)}): " + "; ".join(shown) + more)
    for rel, why in intake.forbidden.items():
        lines.append(f"ZERO: exercises/{rel} {why}; its tasks are graded on the untouched stub (0 points)")
    for rel, reasons in intake.review.items():
        lines.append(f"For review (graded as usual): exercises/{rel}: " + "; ".join(reasons))
    lines += [f"Isolation: {isolation}", ""]
    return "\n".join(lines)


def annotate(data: dict, intake, known) -> None:
    """Put the reason of each zeroed file on its tasks' test entries (their score is 0: the stub ran)."""
    for rel, why in intake.forbidden.items():
        tasks = known.get(rel, set())
        for test in data.get("tests", []):
            if (test.get("extra_data") or {}).get("task") in tasks:
                test["score"] = 0
                test["output"] = f"0 points: exercises/{rel} {why}.\n" + test.get("output", "")
    data["score"] = sum(t.get("score", 0) for t in data.get("tests", []))


def timed_manifest(kit: Path, calibration: Path, out: Path) -> Path:
    """The kit's manifest with each test's reference time raised to what setup.sh measured here."""
    sys.path.insert(0, str(kit))
    from minilm.grading import manifest
    entries = manifest.load(kit, existing_only=False)
    measured = json.loads(calibration.read_text()) if calibration.is_file() else {}
    timed = [manifest.Entry(e.nodeid, e.task, e.points, e.hidden, max(e.cpu_seconds, measured.get(e.nodeid, 0.0)),
                            e.uses) for e in entries.values()]
    out.write_text(manifest.dump(timed, "the kit's manifest, re-timed by setup.sh on this machine"))
    os.chmod(out, 0o600)
    return out


class Grading:
    """One grading: the kit copies, the users, the scratch folders, the grader, the clean-up."""

    def __init__(self, root: Path, kit: Path, taken: dict, modules: list[int], base_uid: int | None):
        self.root, self.kit, self.modules, self.base_uid = root, kit, modules, base_uid
        busy = sorted({u for p in Path("/proc").glob("[0-9]*") if base_uid is not None
                       and (u := process_owner(p)) is not None and base_uid < u <= base_uid + 99})
        if busy:  # another grader on this kernel with the same users would end ours and delete our cache
            raise RuntimeError(f"processes of uids {busy} already run here: another autograder with "
                               f"MINILM_AUTOGRADER_UID={base_uid}? Give this one another base")
        self.work = root / "grading"
        shutil.rmtree(self.work, ignore_errors=True)
        self.work.mkdir(parents=True)
        os.chmod(self.work, 0o711 if base_uid is not None else 0o755)
        base = self.work / "base"
        shutil.copytree(kit, base, ignore=SKIP)
        for rel, src in taken.items():
            shutil.copyfile(src, base / "exercises" / rel)
        subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", str(base)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # compiles, runs nothing
        self.roots = module_roots(self.work, base, modules, self.uid_of)
        shutil.rmtree(base)
        self.removed: list[str] = []

    def uid_of(self, m) -> int | None:
        return None if self.base_uid is None or m is None else self.base_uid + int(m)

    def env_of(self, m) -> dict:
        scratch = private_dir(self.work / "scratch" / f"m{m:02d}", self.uid_of(m))
        cache = private_dir(self.root / "cache" / f"m{m:02d}", self.uid_of(m))  # compiled by setup.sh
        return dict(CHILD_ENV, HOME=str(scratch), TMPDIR=str(scratch), MPLCONFIGDIR=str(scratch / "matplotlib"),
                    NUMBA_CACHE_DIR=str(cache))

    def after_module(self, run) -> None:
        """No process of the module's user outlives it; nothing it left in a shared folder stays."""
        uid = self.uid_of(run.modules[0])
        if uid is None:
            return
        end_user(uid)
        self.removed += remove_files_of(uid, SHARED_DIRS, keep=self.root)

    def probe(self, preexec) -> None:
        first = self.roots[self.modules[0]][0]
        probe = subprocess.run([sys.executable, "-c", "import numpy, numba, pytest, minilm"], cwd=first,
                               env=dict(os.environ, PYTHONPATH=str(first), **self.env_of(self.modules[0])),
                               preexec_fn=preexec, capture_output=True, text=True)
        if probe.returncode != 0:
            who = f"as uid {self.base_uid}+M" if self.base_uid is not None else "(same user)"
            raise RuntimeError(f"a child {who} cannot start Python or read its kit copy ({sys.executable}): "
                               f"{probe.stderr.strip()[-500:]} — install Python and the dependencies where every "
                               f"user can read them, or set MINILM_AUTOGRADER_UID=off")

    def run(self, manifest_path: Path, timeout):
        sys.path.insert(0, str(self.kit))
        from minilm import grading  # the trusted kit's grader: it never imports the student's code
        preexec = make_preexec(self.base_uid)
        self.probe(preexec)
        return grading.grade("exercises", timeout=timeout, jobs=1, only=self.modules, manifest_path=manifest_path,
                             module_roots=lambda m: self.roots[int(m)], child_preexec=preexec,
                             child_env=self.env_of, after_module=self.after_module)


def selected_modules_all(kit: Path) -> list[int]:
    return sorted({int(p.name[4:6]) for p in (kit / "exercises").glob("task[0-9][0-9]_*") if p.is_dir()})


def settings():
    root = Path(os.environ.get("AUTOGRADER_ROOT", "/autograder")).resolve()
    as_root = os.geteuid() == 0
    uid_opt = os.environ.get("MINILM_AUTOGRADER_UID", "61000").strip().lower()
    base_uid = int(uid_opt) if as_root and uid_opt not in ("off", "") else None
    timeout = float(os.environ["MINILM_AUTOGRADER_TIMEOUT"]) if os.environ.get("MINILM_AUTOGRADER_TIMEOUT") else None
    return root, base_uid, timeout


def calibrate() -> int:
    """(setup.sh) Grade the reference itself through the whole pipeline: it must score full points;
    each test's CPU time here becomes the base of its limit, and numba's cache of every module copy
    is compiled into the image."""
    root, base_uid, _ = settings()
    kit = HERE / "kit"
    taken = {f"{p.parent.name}/{p.name}": p for p in sorted((kit / "solutions").glob("task[0-9][0-9]_*/*.py"))
             if p.name != "__init__.py"}
    modules = selected_modules_all(kit)
    g = Grading(root, kit, taken, modules, base_uid)
    report = g.run(timed_manifest(kit, Path("/nonexistent"), root / "manifest.untimed.json"), None)
    shutil.rmtree(g.work, ignore_errors=True)
    (root / "manifest.untimed.json").unlink(missing_ok=True)
    got, most = sum(s.points for s in report.tasks), sum(s.max_points for s in report.tasks)
    if got != most or report.flags or report.problems:
        print(f"setup.sh: the reference scored {got:g}/{most:g} here (it must score full points):\n"
              + grading_table(report), file=sys.stderr)
        return 1
    times = {t.nodeid: round(t.cpu, 3) for s in report.tasks for t in s.tests}
    (HERE / "calibration.json").write_text(json.dumps(times, indent=0))
    print(f"minilm autograder: the reference scored {got:g}/{most:g} here in {report.seconds:.0f} s "
          f"(its CPU times set the tests' limits; numba's cache is compiled)")
    return 0


def grading_table(report) -> str:
    from minilm import grading
    return grading.format_table(report)


def main() -> int:
    t0 = time.monotonic()
    root, base_uid, timeout = settings()
    kit, sub, results = HERE / "kit", root / "submission", root / "results" / "results.json"
    try:
        if results.exists():
            results.unlink()
        if base_uid is not None:  # the kit and the submission become root's alone
            for p in (HERE, sub):
                if p.exists():
                    os.chmod(p, 0o700)
        intake = take(sub, kit)
        modules = selected_modules(kit)
        g = Grading(root, kit, intake.taken, modules, base_uid)
        manifest_path = timed_manifest(kit, HERE / "calibration.json", g.work / "manifest.json")
        isolation = (f"each module's children ran as uid/gid {base_uid}+M, reading only their own kit copies"
                     if base_uid is not None else
                     "children ran as the calling user (not root, or MINILM_AUTOGRADER_UID=off): file "
                     "permissions do not separate them from the reference")
        report = g.run(manifest_path, timeout)
        report.seconds = time.monotonic() - t0
        from minilm import grading
        data = grading.results_json(report)
        annotate(data, intake, known_files(kit))
        data["output"] = header(intake, isolation, modules, selected_modules_all(kit)) + data["output"]
        if g.removed:  # state one module left for another: deleted, and shown for review
            data["output"] += (f"\nFLAGGED for review: the modules' users left {len(g.removed)} files in shared "
                               f"folders, deleted before the next module ran: " + ", ".join(g.removed[:10]))
        if report.interrupted:
            data["output"] += "\n(interrupted)"
        write_json(results, data)
        print(f"minilm autograder: {data['score']:g} / {data['max_score']:g} points in {report.seconds:.0f} s → "
              f"{results}")
        for flag in report.flags:
            print(f"FLAGGED for review: {flag}")
        if g.removed:
            print(f"removed {len(g.removed)} files the modules' users left in shared folders: "
                  + ", ".join(g.removed[:20]))
        return 0
    except Exception:  # an instructor-side failure: say so in results.json rather than leave none
        write_json(results, {"score": 0, "output": "The minilm autograder failed (not the student's fault; "
                                                   "please tell your instructor).", "tests": [],
                             "stdout_visibility": "hidden"})
        traceback.print_exc()
        return 1


if __name__ == "__main__":
    sys.exit(calibrate() if sys.argv[1:] == ["--calibrate"] else main())
