"""tools/make_student_release.py: the release has no solution text (history included), ``pytest``
there grades the stubs, ``minilm grade`` reports nothing done, and the README says where to start.

The release's commands run in a subprocess whose ``sys.path`` and import hooks cannot reach this
checkout (an editable install of it would otherwise make ``solutions`` importable there).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograd import tasks
from tests.release_kit import ROOT, TOOL, make_release, run_in

pytestmark = [
    pytest.mark.skipif(not tasks.solutions_available(), reason="a release is made from a full checkout"),
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]
make = make_release


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("release") / "minilm-student"
    done = make(dest)
    assert done.returncode == 0, done.stderr
    return dest


def solution_windows(root: Path, n: int = 3, skip: str = "") -> dict[tuple, str]:
    """Each run of n non-blank lines inside a BEGIN/END SOLUTION block (the whole block if shorter),
    leaving out the task package ``skip``."""
    out = {}
    for path in sorted((root / "solutions").rglob("*.py")):
        if skip and skip in path.parts:
            continue
        block = None
        for line in path.read_text(encoding="utf-8").splitlines():
            s = line.strip()
            if s == "# BEGIN SOLUTION":
                block = []
            elif s == "# END SOLUTION":
                k = min(n, len(block))
                for i in range(len(block) - k + 1):
                    out[tuple(block[i:i + k])] = str(path.relative_to(root))
                block = None
            elif block is not None and s:
                block.append(s)
    return out


def files_quoting(tree: Path, windows: dict) -> set[str]:
    hits = set()
    sizes = {len(w) for w in windows}
    for path in tree.rglob("*"):
        if not path.is_file() or ".git" in path.relative_to(tree).parts:
            continue
        try:
            lines = [s for s in (x.strip() for x in path.read_text(encoding="utf-8").splitlines()) if s]
        except UnicodeDecodeError:
            continue
        if any(tuple(lines[i:i + k]) in windows for k in sizes for i in range(len(lines) - k + 1)):
            hits.add(str(path.relative_to(tree)))
    return hits


def test_no_solution_text_anywhere(release):
    windows = solution_windows(ROOT)
    assert len(windows) > 50
    assert files_quoting(ROOT / "solutions", windows)      # the check does find solution text
    assert files_quoting(release, windows) == set()
    assert not (release / "solutions").exists()
    bodies = "".join(p.read_text(encoding="utf-8") for p in release.rglob("*.py"))
    assert "# BEGIN SOLUTION" not in bodies


def test_history_is_one_fresh_commit(release):
    git = lambda *a: subprocess.run(["git", *a], cwd=release, capture_output=True, text=True,  # noqa: E731
                                    check=True).stdout
    assert git("rev-list", "--all", "--count").strip() == "1"
    assert git("status", "--porcelain").strip() == ""
    tracked = git("ls-files").split()
    assert "exercises/task01_autograd/backward.py" in tracked
    assert not [f for f in tracked if f.startswith(("solutions/", ".ci/", "runs/", ".venv/"))
                or "__pycache__" in f or f.startswith("tools/make_")]


def test_contents_and_setup(release):
    for rel in ("exercises", "tests/graded", "autograd", "minilm", "docs/tasks"):
        assert (release / rel).is_dir(), rel
    for rel in (".ci", "runs", ".venv", "tools/make_exercises.py", "tools/make_student_release.py",
                "tests/models/test_student_release.py"):
        assert not (release / rel).exists(), rel
    assert not list(release.rglob("__pycache__"))
    for path in (ROOT / "exercises").rglob("*.py"):   # the stubs exactly as generated
        if "__pycache__" not in path.parts:
            rel = path.relative_to(ROOT)
            assert (release / rel).read_bytes() == path.read_bytes(), rel
    cfg = (release / "setup.cfg").read_text(encoding="utf-8")
    assert "testpaths = tests/graded" in cfg
    assert "solutions" not in cfg.replace("reference solutions", "")
    assert "task12_4:" in cfg and "--strict-markers" in cfg


def test_readme_says_what_to_do_first(release):
    text = (release / "README.md").read_text(encoding="utf-8")
    steps = ['pip install -e ".[test]"', "minilm grade", "exercises/task01_autograd/",
             "docs/tasks/01-autograd.md", "pytest -m task1_1"]
    positions = [text.find(s) for s in steps]
    assert -1 not in positions, dict(zip(steps, positions))
    assert positions == sorted(positions)                # in this order
    assert "no reference solutions" in text
    assert (release / "README.zh-TW.md").is_file()


def test_pytest_in_the_release_grades_the_stubs(release):
    collected = run_in(release, "pytest", "--collect-only", "-q")
    ids = [l for l in collected.stdout.splitlines() if "::" in l]
    assert ids and all(i.startswith("tests/graded/") for i in ids), collected.stdout[-2000:]
    run = run_in(release, "pytest", "-q", "-rf", "-m", "task1_1", "-p", "no:randomly")
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]
    summary = run.stdout.strip().splitlines()[-1]
    assert "failed" in summary and " passed" not in summary, summary
    assert "NotImplementedError: Task 1.1" in run.stdout
    assert "exercises/" in run.stdout                    # the header: graded tests call exercises/


@pytest.mark.slow
def test_minilm_grade_in_the_release_reports_nothing_done(release, tmp_path):
    results = tmp_path / "results.json"
    run = run_in(release, "minilm.cli", "grade", "--json", str(results))
    assert run.returncode == 1, run.stderr[-3000:]  # 0 only when every task passed
    rows = [l.split() for l in run.stdout.splitlines() if l[:1].isdigit()]
    assert len(rows) >= 20
    for row in rows:
        assert row[1].startswith("0/") and " ".join(row[2:4]) == "not started", row
    assert "total: 0 /" in run.stdout
    data = json.loads(results.read_text())
    assert data["score"] == 0 and data["max_score"] > 0
    assert data["tests"] and all(t["score"] == 0 for t in data["tests"])


def test_given_tasks_ship_their_reference(tmp_path):
    dest = tmp_path / "weekend"
    done = make(dest, "--given", "1,5.1", "--no-git")
    assert done.returncode == 0, done.stderr
    assert not (dest / ".git").exists()
    for rel in ("task01_autograd/elementwise.py", "task05_bert/wordpiece.py"):
        given = (dest / "exercises" / rel).read_text(encoding="utf-8")
        assert "NotImplementedError" not in given and "# BEGIN SOLUTION" not in given, rel
    assert "NotImplementedError" in (dest / "exercises" / "task05_bert" / "masking.py").read_text()
    graded = {p.name for p in (dest / "tests" / "graded").glob("test_*.py")}
    assert not {n for n in graded if n.startswith("test_task01_")} and "test_task05_wordpiece.py" not in graded
    assert "test_task05_masking.py" in graded and any(n.startswith("test_task02_") for n in graded)
    given_blocks = {k for k in solution_windows(ROOT) if k not in solution_windows(ROOT, skip="task01_autograd")}
    rest = {k: v for k, v in solution_windows(ROOT, skip="task01_autograd").items()
            if not v.endswith("wordpiece.py")}
    assert files_quoting(dest, rest) == set()
    assert given_blocks and files_quoting(dest, dict.fromkeys(given_blocks, "")), "module 1 is in"
    assert "Except module 1, Task 5.1" in (dest / "README.md").read_text(encoding="utf-8")


def test_stub_bodies_match_make_exercises():
    """The tool writes a partly given file itself; its stubs must be make_exercises.py's."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_student_release", TOOL)
    tool = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = tool                         # dataclasses look their module up there
    try:
        spec.loader.exec_module(tool)
    finally:
        del sys.modules[spec.name]
    blocks = tool.solution_blocks(ROOT)
    for file in sorted({b.file for b in blocks}):
        text = (ROOT / "solutions" / file).read_text(encoding="utf-8")
        stub = tool.exercise_with_given(text, [b for b in blocks if b.file == file], set())
        assert stub == (ROOT / "exercises" / file).read_text(encoding="utf-8"), file


def test_refuses_unsafe_destinations(tmp_path):
    inside = make(ROOT / "runs" / "release-inside")
    assert inside.returncode == 1 and "inside the checkout" in inside.stderr
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "file.txt").write_text("x")
    full = make(tmp_path / "full")
    assert full.returncode == 1 and "not empty" in full.stderr


def _tool():
    """tools/make_student_release.py as a module."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import make_student_release as tool
    finally:
        sys.path.remove(str(ROOT / "tools"))
    return tool


def test_leak_check_finds_a_renamed_copy(tmp_path):
    """A solution block with every local name changed and re-indented is still found; the block's
    plain library call sites are not."""
    tool = _tool()
    blocks = [b for b in tool.solution_blocks() if b.func == "choose_groups"]
    cfrags = tool.code_fragments(blocks)
    planted = tmp_path / "helper.py"
    planted.write_text(
        "def pick(gs, total, *, gen, p=0.15, cap=20):\n"
        "    if True:\n"
        "        lim = min(int(cap), max(1, round(total * p)))\n"
        "        out = []\n"
        "        for j in gen.permutation(len(gs)):\n"
        "            if len(out) >= lim:\n"
        "                break\n"
        "            if len(out) + len(gs[j]) > lim:\n"
        "                continue\n"
        "            out.extend(gs[j])\n"
        "        return out\n")
    assert tool.code_leaks(planted, cfrags) == [f"solutions/{blocks[0].file}:{blocks[0].span[0] + 1}"]
    assert tool.leaks(planted, tool.fragments(blocks)) == []       # the verbatim check alone misses it
    assert tool.code_leaks(ROOT / "minilm" / "corruption" / "bert.py", cfrags) == []


# Task 2.5's forward with every name changed: what autograd/functional.py once carried as its
# "composed twin" of layer norm (a second copy of the answer, shipped to every student)
RENAMED_LAYER_NORM = """

def _normalise_rows(v, gain, shift, tiny=1e-5):
    centre = v.mean(axis=-1, keepdims=True)
    dev = v - centre
    spread = (dev * dev).mean(axis=-1, keepdims=True)
    inv = 1.0 / np.sqrt(spread + tiny)
    return dev * inv * gain + shift, centre, inv
"""


def test_a_library_copy_of_a_solution_block_stops_the_release(tmp_path):
    """No allow-list: a renamed copy of a solution block in a library file is an error that names
    the file and the block, and the same kit without it releases."""
    tool = _tool()
    kit = tmp_path / "kit"
    for rel in ("solutions", "exercises"):
        shutil.copytree(ROOT / rel, kit / rel, ignore=shutil.ignore_patterns("__pycache__"))
    for rel in ("tools/make_exercises.py", "setup.cfg", "README.md", "autograd/functional.py",
                "tests/graded/manifest.json"):
        if (ROOT / rel).is_file():
            (kit / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / rel, kit / rel)
    assert not hasattr(tool, "KNOWN_COPIES")
    tool.make_release(tmp_path / "clean", root=kit, git=False)  # the library as it is: no copy

    library = kit / "autograd" / "functional.py"
    library.write_text(library.read_text(encoding="utf-8") + RENAMED_LAYER_NORM, encoding="utf-8")
    block = next(b for b in tool.solution_blocks(kit) if b.func == "layer_norm_forward")
    with pytest.raises(tool.ReleaseError) as caught:
        tool.make_release(tmp_path / "leaky", root=kit, git=False)
    message = str(caught.value)
    assert f"autograd/functional.py: solutions/{block.file}:{block.span[0] + 1}" in message, message
    assert "call the task slot" in message
