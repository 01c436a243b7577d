#!/usr/bin/env python3
"""The trusted side of the minilm autograder (Gradescope's ``run_autograder`` calls it).

    $AUTOGRADER_ROOT/submission/   the student's files, read here as text only (intake.py)
    $AUTOGRADER_ROOT/source/kit/   the kit with its reference solutions (never shown to student code)
    $AUTOGRADER_ROOT/grading/      made here: one kit copy per task module, the student's files inside
    $AUTOGRADER_ROOT/results/results.json   written here, after every child has finished

For task module M the graded tests run (through ``minilm.grading.grade``, in child processes with
a per-test time limit) in ``grading/mMM``: the kit with the student's task files, whose
``solutions/taskMM_*`` is replaced by modules that forward to the student's ``exercises/taskMM_*``
(so the reference of the graded module is not on disk there). Run as root, each module's children
run as their own unprivileged user and group (uid = gid = MINILM_AUTOGRADER_UID + M), which can read
its own kit copy only: not the others, not source/, not the submission, and cannot write results/.
See README.md for what this does and does not defend.

Environment: AUTOGRADER_ROOT (default /autograder); MINILM_AUTOGRADER_MODULES ("1,10": grade only
these modules); MINILM_AUTOGRADER_TIMEOUT (seconds per test); MINILM_AUTOGRADER_UID (default 61000;
"off" keeps the children as the calling user, e.g. for a local dry run as root).
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from intake import known_files, take  # noqa: E402

SHIM = '''"""Not the reference: the autograder grades module {m} here, so this forwards to the student's file."""
import importlib
import sys

sys.modules[__name__] = importlib.import_module("exercises.{mod}")
'''
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis")
CHILD_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", "MPLBACKEND": "Agg",
             "NUMBA_NUM_THREADS": "1", "MINILM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def module_roots(work: Path, base: Path, modules: list[int], gid_of) -> dict[int, Path]:
    """One copy of ``base`` per module, ``solutions/taskMM_*`` swapped for forwarding modules."""
    roots = {}
    for m in modules:
        root = work / f"m{m:02d}"
        shutil.copytree(base, root)
        for pkg in (root / "solutions").glob(f"task{m:02d}_*"):
            shutil.rmtree(pkg)
            pkg.mkdir()
            (pkg / "__init__.py").write_text(f'"""Module {m} is graded here: no reference, see its files."""\n')
            for src in sorted((root / "exercises" / pkg.name).glob("*.py")):
                if src.name != "__init__.py":
                    (pkg / src.name).write_text(SHIM.format(m=m, mod=f"{pkg.name}.{src.stem}"), encoding="utf-8")
        lock(root, gid_of(m))
        roots[m] = root
    return roots


def lock(top: Path, gid: int | None) -> None:
    """Owned by root, readable by group ``gid`` only (dirs 0750, files 0640), writable by nobody else."""
    if gid is None:
        return
    for path in [top, *top.rglob("*")]:
        os.chown(path, 0, gid, follow_symlinks=False)
        os.chmod(path, 0o750 if path.is_dir() else 0o640)


def make_preexec(base_uid: int | None):
    """The children's ``preexec_fn``: no core files; as root, switch to the module's own uid/gid."""

    def preexec():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if base_uid is None:
            return
        match = re.fullmatch(r"m(\d\d)", Path(os.getcwd()).name)  # subprocess chdirs before preexec_fn
        uid = base_uid + (int(match.group(1)) if match else 0)
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        resource.setrlimit(resource.RLIMIT_NPROC, (256, 256))
        resource.setrlimit(resource.RLIMIT_FSIZE, (200 << 20, 200 << 20))

    return preexec


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


def header(intake, isolation: str, seconds: float, modules, all_modules) -> str:
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
    lines += [f"Isolation: {isolation}", f"Time: {seconds:.0f} s", ""]
    return "\n".join(lines)


def annotate(data: dict, intake, known) -> None:
    """Put the reason of each zeroed file on its tasks' test entries (their score is 0: the stub ran)."""
    for rel, why in intake.forbidden.items():
        tasks = known.get(rel, set())
        for test in data.get("tests", []):
            task = (test.get("extra_data") or {}).get("task") or test.get("name", "").split(":")[0][5:]
            if task in tasks:
                test["score"] = 0
                test["output"] = f"0 points: exercises/{rel} {why}.\n" + test.get("output", "")
    data["score"] = sum(t.get("score", 0) for t in data.get("tests", []))


def grade(kit: Path, roots: dict, preexec, scratch: Path, timeout):
    """Run the grader on every chosen module; returns (results dict, interrupted)."""
    sys.path.insert(0, str(kit))
    from minilm import grading  # the trusted kit's grader: it never imports the student's code

    env = dict(CHILD_ENV, HOME=str(scratch), TMPDIR=str(scratch), MPLCONFIGDIR=str(scratch / "matplotlib"),
               NUMBA_CACHE_DIR=str(scratch / "numba"))
    kw = dict(timeout=timeout if timeout else grading.DEFAULT_TIMEOUT, module_root=lambda m: roots[int(m)],
              child_preexec=preexec, child_env=env)
    all_found = sorted(roots) == sorted(int(p.name[4:6]) for p in (kit / "exercises").glob("task[0-9][0-9]_*"))
    reports = [grading.grade("exercises", None, **kw)] if all_found else [
        grading.grade("exercises", str(m), **kw) for m in sorted(roots)]
    report = reports[0]
    if len(reports) > 1:  # one table for the chosen modules
        report = dataclasses.replace(report, tasks=[t for r in reports for t in r.tasks],
                                     problems=[p for r in reports for p in getattr(r, "problems", [])],
                                     interrupted=any(r.interrupted for r in reports))
    return grading.results_json(report), report.interrupted


def main() -> int:
    t0 = time.monotonic()
    root = Path(os.environ.get("AUTOGRADER_ROOT", "/autograder")).resolve()
    kit, sub, results = HERE / "kit", root / "submission", root / "results" / "results.json"
    as_root = os.geteuid() == 0
    uid_opt = os.environ.get("MINILM_AUTOGRADER_UID", "61000").strip().lower()
    base_uid = int(uid_opt) if as_root and uid_opt not in ("off", "") else None
    try:
        if results.exists():
            results.unlink()
        if base_uid is not None:  # the kit and the submission become root's alone
            for p in (HERE, sub):
                if p.exists():
                    os.chmod(p, 0o700)
        intake = take(sub, kit)
        known = known_files(kit)
        work = root / "grading"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        os.chmod(work, 0o711 if base_uid is not None else 0o755)
        base = work / "base"
        shutil.copytree(kit, base, ignore=SKIP)
        for rel, src in intake.taken.items():
            shutil.copyfile(src, base / "exercises" / rel)
        subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", str(base)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # compiles, runs nothing
        modules = selected_modules(kit)
        gid_of = (lambda m: base_uid + m) if base_uid is not None else (lambda m: None)
        roots = module_roots(work, base, modules, gid_of)
        shutil.rmtree(base)
        scratch = work / "scratch"
        for d in (scratch, scratch / "numba", scratch / "matplotlib"):  # shared by the module users: sticky
            d.mkdir()
            os.chmod(d, 0o1777)
        preexec = make_preexec(base_uid)
        probe = subprocess.run([sys.executable, "-c", "import numpy, numba, pytest, minilm"], cwd=roots[modules[0]],
                               env=dict(os.environ, PYTHONPATH=str(roots[modules[0]]), HOME=str(scratch)),
                               preexec_fn=preexec, capture_output=True, text=True)
        if probe.returncode != 0:
            who = f"as uid {base_uid}+M" if base_uid is not None else "(same user)"
            raise RuntimeError(f"a child {who} cannot start Python or read its kit copy "
                               f"({sys.executable}): {probe.stderr.strip()[-500:]} — install Python and the "
                               f"dependencies where every user can read them, or set MINILM_AUTOGRADER_UID=off")
        isolation = (f"each module's children ran as uid/gid {base_uid}+M, reading only their own kit copy"
                     if base_uid is not None else
                     "children ran as the calling user (not root, or MINILM_AUTOGRADER_UID=off): file "
                     "permissions do not separate them from the reference")
        timeout = float(os.environ["MINILM_AUTOGRADER_TIMEOUT"]) if os.environ.get("MINILM_AUTOGRADER_TIMEOUT") else None
        data, interrupted = grade(kit, roots, preexec, scratch, timeout)
        annotate(data, intake, known)
        data["output"] = header(intake, isolation, time.monotonic() - t0, modules,
                                sorted(int(p.name[4:6]) for p in (kit / "exercises").glob("task[0-9][0-9]_*"))
                                ) + data.get("output", "") + ("\n(interrupted)" if interrupted else "")
        write_json(results, data)
        print(f"minilm autograder: {data['score']:g} / {data['max_score']:g} points → {results}")
        return 0
    except Exception:  # an instructor-side failure: say so in results.json rather than leave none
        write_json(results, {"score": 0, "output": "The minilm autograder failed (not the student's fault; "
                                                   "please tell your instructor):\n" + traceback.format_exc(),
                             "tests": []})
        traceback.print_exc()
        return 1


if __name__ == "__main__":
    sys.exit(main())
