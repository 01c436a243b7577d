"""The instructor's autograder piece by piece: the intake of a submission (tools/autograder/intake.py),
the driver's notes on zeroed tasks and its per-module copies of the kit (tools/autograder/autograder.py),
and the Gradescope bundle (tools/make_autograder.py).

The whole autograder, run end to end on planted submissions, is tested in test_autograder_end_to_end.py.
"""
from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import zipfile

import pytest

from tests.models.autograder_kit import bundle, driver, fill_reference, intake
from tests.release_kit import ROOT


# ---- intake ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["top", "down", "bare-folders", "bare-files"])
def test_intake_finds_the_same_files_in_every_layout(tmp_path, layout):
    sub = tmp_path / "submission"
    if layout == "top":
        fill_reference(sub / "exercises", {1, 10})
    elif layout == "down":
        fill_reference(sub / "minilm-student" / "exercises", {1, 10})
    elif layout == "bare-folders":
        fill_reference(sub, {1, 10})
    else:
        fill_reference(tmp_path / "tmp", {1, 10})
        for f in (tmp_path / "tmp").rglob("*.py"):
            shutil.copyfile(f, sub / f.name) if sub.is_dir() else (sub.mkdir(), shutil.copyfile(f, sub / f.name))
    got = intake.take(sub, ROOT)
    want = {f"{p.parent.name}/{p.name}" for m in (1, 10) for p in (ROOT / "solutions").glob(f"task{m:02d}_*/*.py")
            if p.name != "__init__.py"}
    if layout == "bare-files":  # matmul.py exists in modules 1 and 2: a bare one is ambiguous
        want.discard("task01_autograd/matmul.py")
        assert any(i.startswith("matmul.py") for i in got.ignored), got.ignored
    assert set(got.taken) == want, (layout, got.layout, sorted(got.taken))
    assert not got.forbidden


def test_intake_ignores_everything_but_known_task_files(tmp_path):
    sub = tmp_path / "submission"
    fill_reference(sub / "exercises", {10})
    for rel in ("conftest.py", "sitecustomize.py", "evil.pth", "results.json", "setup.cfg", "tests/graded/x.py",
                "exercises/conftest.py", "exercises/__init__.py", "exercises/task10_distill/__init__.py",
                "exercises/task10_distill/helper.py", "exercises/task99_new/a.py", "solutions/task10_distill/x.py"):
        (sub / rel).parent.mkdir(parents=True, exist_ok=True)
        (sub / rel).write_text("raise SystemExit('ran')\n")
    os.symlink(ROOT / "solutions" / "task01_autograd" / "backward.py", sub / "exercises" / "task01_autograd_link.py")
    got = intake.take(sub, ROOT)
    assert set(got.taken) == {"task10_distill/intermediate.py", "task10_distill/soft_targets.py"}
    ignored = " ".join(got.ignored)
    for rel in ("conftest.py", "sitecustomize.py", "evil.pth", "results.json", "setup.cfg", "tests/graded/x.py",
                "exercises/conftest.py", "exercises/task10_distill/helper.py", "solutions/task10_distill/x.py",
                "exercises/task01_autograd_link.py"):
        assert rel in ignored, (rel, got.ignored)


@pytest.mark.parametrize("code", [
    "from solutions.task01_autograd.backward import backward\n",
    "import solutions\n",
    "import solutions.task01_autograd.backward as ref\n",
    "from ... import solutions\n",
    "import importlib\nref = importlib.import_module('solutions.task01_autograd.backward')\n",
    "src = open('../../solutions/task01_autograd/backward.py').read()\n",
    "x = solutions\n",
])
def test_scan_refuses_a_file_that_reaches_the_reference(code):
    bad, _ = intake.scan('"""My answer; the reference (solutions/) is not used."""\n' + code)
    assert bad and "line" in bad, (code, bad)


def test_scan_passes_plain_code_and_lists_tampering_for_review():
    assert intake.scan('"""Uses no solutions at all (a docstring may say so)."""\nimport numpy as np\n') == (None, [])
    bad, review = intake.scan("import sys\nimport _pytest.runner\nimport gc\nsys.modules['x'] = 1\neval('1')\n")
    assert bad is None
    text = " ".join(review)
    for word in ("_pytest", "gc", "sys.modules", "eval"):
        assert word in text, review
    assert intake.scan("def f(:\n") == (None, [])  # a SyntaxError is the grader's to report


def test_a_verbatim_copy_of_the_reference_is_listed_for_review(tmp_path):
    sub = tmp_path / "submission" / "exercises" / "task10_distill"
    sub.mkdir(parents=True)
    copied = (ROOT / "solutions" / "task10_distill" / "soft_targets.py").read_text()
    copied = re.sub(r"(?m)^((?:    )+)", lambda m: "\t" * (len(m.group(1)) // 4), copied)  # re-indented
    (sub / "soft_targets.py").write_text(copied.replace("# BEGIN SOLUTION", "# mine\n\n"))
    shutil.copyfile(ROOT / "exercises" / "task10_distill" / "intermediate.py", sub / "intermediate.py")
    got = intake.take(tmp_path / "submission", ROOT)
    assert "task10_distill/soft_targets.py" in got.taken  # graded as usual ...
    assert any("verbatim" in r for r in got.review["task10_distill/soft_targets.py"])  # ... and flagged
    assert "task10_distill/intermediate.py" not in got.review


def test_annotate_names_the_reason_on_the_zeroed_tasks():
    data = {"score": 5, "tests": [
        {"name": "Task 1.1: test_a", "score": 2, "output": "passed", "extra_data": {"task": "1.1"}},
        {"name": "Task 1.12: test_b", "score": 3, "output": "passed", "extra_data": {"task": "1.12"}}]}
    got = intake.Intake(forbidden={"task01_autograd/backward.py": "imports solutions (line 1)"})
    driver.annotate(data, got, {"task01_autograd/backward.py": {"1.1"}})
    assert data["tests"][0]["score"] == 0 and "imports solutions" in data["tests"][0]["output"]
    assert data["tests"][1]["score"] == 3 and data["score"] == 3


# ---- the bundle -----------------------------------------------------------------------------------
def test_bundle_holds_the_scripts_the_kit_and_the_hidden_tests(tmp_path):
    out = bundle.make_bundle(tmp_path / "ag.zip", check=False)
    with zipfile.ZipFile(out) as zf:
        names = set(zf.namelist())
        for top in ("setup.sh", "run_autograder", "autograder.py", "intake.py", "isolation.py", "README.md",
                    "requirements.txt"):
            assert top in names, top
        for exe in ("setup.sh", "run_autograder"):
            assert zf.getinfo(exe).external_attr >> 16 & stat.S_IXUSR, f"{exe} is not executable in the zip"
        reqs = zf.read("requirements.txt").decode()
    assert "kit/solutions/task01_autograd/backward.py" in names
    assert "kit/exercises/task01_autograd/backward.py" in names
    assert "kit/minilm/grading/__init__.py" in names or "kit/minilm/grading.py" in names
    hidden = {n for n in names if n.startswith("kit/tests/graded/hidden/test_task")}
    assert {int(re.search(r"task(\d+)", n).group(1)) for n in hidden} == set(range(1, 13))
    assert not any("__pycache__" in n or n.endswith(".pyc") or "/tests/models/" in n for n in names)
    assert "numpy" in reqs and "pytest" in reqs
    with pytest.raises(bundle.BundleError):
        bundle.make_bundle(tmp_path / "ag.tar", check=False)


def test_module_copy_has_no_reference_of_its_module(tmp_path):
    base = tmp_path / "base"
    shutil.copytree(ROOT, base, ignore=shutil.ignore_patterns(".git", ".venv", "docs", "__pycache__", "runs"))
    roots = driver.module_roots(tmp_path, base, [3], lambda m: None)
    visible, held = roots[3]
    for root in (visible, held):
        for f in (root / "solutions" / "task03_transformer").glob("*.py"):
            assert "BEGIN SOLUTION" not in f.read_text(), f"{f} still holds the reference"
        assert "BEGIN SOLUTION" in (root / "solutions" / "task01_autograd" / "backward.py").read_text()
        assert not (root / "tests" / "graded" / "manifest.json").exists()  # the grader holds the list
    # the copy whose results students see holds no held-back test; the other only module 3's
    assert not list((visible / "tests" / "graded").rglob("hidden/test_*.py"))
    assert [f.name for f in (held / "tests" / "graded").rglob("test_*.py")] == ["test_task03_hidden.py"]
    roots = {3: visible}
    code = ("import solutions.task03_transformer.heads as s, exercises.task03_transformer.heads as e; "
            "assert s is e, (s, e); print('forwarded')")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MINILM_IMPL")}
    res = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, '.'); {code}"],
                         cwd=roots[3], env=env, capture_output=True, text=True)
    assert res.returncode == 0 and "forwarded" in res.stdout, res.stderr[-1500:]
