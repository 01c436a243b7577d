"""The instructor's autograder end to end (``slow``): the Gradescope bundle (tools/make_autograder.py,
tools/autograder/), set up in a fresh virtual environment and run as Gradescope runs it, against planted
submissions: complete, untouched, in other layouts, hostile, broken (a hang, a segfault) and forged.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import pytest

from tests.grading_kit import PATCH_REPORTER
from tests.models.autograder_kit import bundle, fill_reference
from tests.release_kit import ROOT


def _world_usable(path: Path) -> bool:
    return all(os.stat(p).st_mode & stat.S_IXOTH for p in [*Path(path).resolve().parents])


def _base_python() -> str:
    """An interpreter that the unprivileged children can run, when this test runs as root."""
    candidates = [getattr(sys, "_base_executable", sys.executable), "/usr/bin/python3", "/usr/local/bin/python3"]
    for c in candidates:
        if c and os.path.exists(c) and (os.geteuid() != 0 or _world_usable(Path(c))):
            ok = subprocess.run([c, "-c", "import sys, venv; assert sys.version_info >= (3, 10)"],
                                capture_output=True).returncode == 0
            if ok:
                return c
    pytest.skip("no Python >= 3.10 with venv that every user can run")


HOSTILE_CONFTEST = """import pytest
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
"""
WRITE_RESULTS = """
import json as _json, os as _os
for _p in (_os.path.join(_os.environ.get("AUTOGRADER_ROOT", "/autograder"), "results", "results.json"), "results.json"):
    try:
        with open(_p, "w") as _f:
            _json.dump({"score": 999, "tests": []}, _f)
    except OSError:
        pass
"""
REACH_REFERENCE = '''
import importlib as _il, os as _os
_name = "sol" + "utions"
_REACHED = []
try:
    _m = _il.import_module(_name + ".task01_autograd.gradcheck")
    if _name in (_m.__file__ or ""):
        _REACHED.append("import")
except ImportError:
    pass
_root = _os.environ.get("AUTOGRADER_ROOT", "/autograder")
for _p in (_os.path.join(_root, "source", "kit", _name, "task01_autograd", "gradcheck.py"),
           _os.path.join("..", "m02", _name, "task01_autograd", "gradcheck.py")):
    try:
        open(_p).read()
        _REACHED.append(_p)
    except OSError:
        pass
if not _REACHED:
    def gradcheck(*args, **kwargs):
        raise RuntimeError("the reference was out of reach")
'''


def _by_task(data) -> dict:
    """{task: score, max, status (the worst of its tests'), outputs} from a results.json."""
    out = {}
    order = ("flagged", "crashed", "timed out", "error", "failed", "blocked", "not implemented", "not run", "passed")
    for t in data["tests"]:
        task = t["extra_data"]["task"]
        s = out.setdefault(task, {"score": 0, "max": 0, "status": "passed", "out": []})
        s["score"] += t["score"]
        s["max"] += t["max_score"]
        s["out"].append(t.get("output", ""))
        st = t["extra_data"]["minilm_status"] if not t["output"].startswith("flagged") else "flagged"
        s["status"] = min(s["status"], st, key=lambda x: order.index(x) if x in order else 0)
    return out


RELAY_OUT = """
import os as _os
_ref = _os.path.join("sol" + "utions", "task02_kernels", "softmax.py")  # module 2's reference, in module 1's copy
try:
    with open(_ref) as _f, open("/tmp/minilm_relay_softmax.py", "w") as _g:
        _g.write(_f.read())
    _os.chmod("/tmp/minilm_relay_softmax.py", 0o666)
except OSError:
    pass
"""
RELAY_IN = """
import os as _os
if _os.path.exists("/tmp/minilm_relay_softmax.py"):
    exec(open("/tmp/minilm_relay_softmax.py").read())
"""


@pytest.mark.slow
def test_autograder_bundle_end_to_end(tmp_path):
    work = Path(tempfile.mkdtemp(prefix="minilm-ag-test-"))  # not under pytest's 0700 tmp: the children read it
    os.chmod(work, 0o755)
    try:
        _end_to_end(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _end_to_end(work: Path):
    ag, venv = work / "ag", work / "venv"
    (ag / "source").mkdir(parents=True)
    with zipfile.ZipFile(bundle.make_bundle(work / "ag.zip", check=False)) as zf:
        zf.extractall(ag / "source")
    for exe in ("setup.sh", "run_autograder"):
        os.chmod(ag / "source" / exe, 0o755)
    # a fresh virtual environment; setup.sh installs the dependencies (from pip's cache when warm)
    subprocess.run([_base_python(), "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "MINILM_IMPL", "PYTEST_ADDOPTS", "VIRTUAL_ENV", "PYTHONHOME")}
    # module users of their own: another autograder on this machine (one per container on Gradescope)
    # ends every process of its module users after each module
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", AUTOGRADER_ROOT=str(ag),
               MINILM_AUTOGRADER_UID=str(62000 + 20 * (os.getpid() % 400)))
    res = subprocess.run(["bash", str(ag / "source" / "setup.sh")], env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout[-2000:] + "\n".join(
        l for l in res.stderr.splitlines() if not l.startswith("WARNING: Location"))[-3000:]

    # Gradescope copies run_autograder to /autograder/run_autograder and runs that copy, from /autograder
    shutil.copy2(ag / "source" / "run_autograder", ag / "run_autograder")

    def run(plant, modules="1,10", timeout=None, cwd=ag) -> dict:
        shutil.rmtree(ag / "submission", ignore_errors=True)
        shutil.rmtree(ag / "results", ignore_errors=True)
        (ag / "submission").mkdir()
        plant(ag / "submission")
        e = dict(env, MINILM_AUTOGRADER_MODULES=modules or "")
        if timeout:
            e["MINILM_AUTOGRADER_TIMEOUT"] = str(timeout)
        t0 = time.monotonic()
        r = subprocess.run([str(ag / "run_autograder")], env=e, capture_output=True, text=True, cwd=cwd,
                           timeout=3600)
        data = json.loads((ag / "results" / "results.json").read_text())
        data["_seconds"] = time.monotonic() - t0
        assert r.returncode == 0, r.stdout[-1500:] + r.stderr[-3000:] + data.get("output", "")
        return data

    as_root = os.geteuid() == 0
    # 1. everything filled in from the reference: full score (the one full run, every module), with numba's
    #    cache cold and both cores kept busy by other processes, from another working directory
    shutil.rmtree(ag / "cache", ignore_errors=True)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        full = run(lambda s: fill_reference(s / "exercises"), modules=None, cwd=Path("/"))
    finally:
        for p in busy:
            p.kill()
            p.wait()
    total = sum(e["points"] for e in json.loads((ROOT / "tests" / "graded" / "manifest.json").read_text())["tests"])
    assert full["max_score"] == total and full["score"] == total, full["output"][-3000:]
    hidden = [t for t in full["tests"] if t["visibility"] == "after_published"]
    assert len(hidden) >= 12 and all(t["score"] == t["max_score"] for t in hidden)
    assert {t["visibility"] for t in full["tests"]} == {"visible", "after_published"}
    assert full["stdout_visibility"] == "hidden" and full["execution_time"] > 0
    assert len(json.dumps(full)) < 1_000_000
    print(f"\nfull autograder run on a complete submission, cold cache, both cores busy: {full['_seconds']:.0f} s",
          file=sys.stderr)
    ref = {k: v for k, v in _by_task(full).items() if k.split(".")[0] in ("1", "10")}
    want = sum(v["max"] for v in ref.values())

    # 2. untouched stubs
    stubs = run(lambda s: shutil.copytree(ROOT / "exercises", s / "exercises"))
    assert stubs["score"] == 0 and stubs["max_score"] == want

    # 3. the repository one folder down, and bare task folders: graded like exercises/ at the top
    for plant in (lambda s: fill_reference(s / "minilm-student" / "exercises", {1, 10}),
                  lambda s: fill_reference(s, {1, 10})):
        got = run(plant)
        assert got["score"] == want, got["output"][:3000]

    # 4. hostile: imports solutions (1.1), reaches for the reference at run time (1.5), writes results.json
    #    at import (1.4), forces passes with conftest.py / sitecustomize.py; module 10 left as stubs
    def hostile(s):
        ex = s / "exercises"
        fill_reference(ex, {1})
        bw = ex / "task01_autograd" / "backward.py"
        bw.write_text("from solutions.task01_autograd.backward import backward as _ref  # noqa\n" + bw.read_text())
        gc = ex / "task01_autograd" / "gradcheck.py"
        gc.write_text(gc.read_text() + REACH_REFERENCE)
        mm = ex / "task01_autograd" / "matmul.py"
        mm.write_text(mm.read_text() + WRITE_RESULTS)
        for rel in ("conftest.py", "exercises/conftest.py", "exercises/task10_distill/conftest.py"):
            (s / rel).parent.mkdir(parents=True, exist_ok=True)
            (s / rel).write_text(HOSTILE_CONFTEST)
        (s / "sitecustomize.py").write_text(WRITE_RESULTS)
        (s / "exercises" / "sitecustomize.py").write_text(WRITE_RESULTS)
        (s / "evil.pth").write_text("import os; os.environ['MINILM_IMPL'] = 'solutions'\n")
        (s / "results.json").write_text('{"score": 999}')

    bad = run(hostile)
    tasks = _by_task(bad)
    assert bad["score"] != 999 and bad["score"] < want
    assert tasks["1.1"]["score"] == 0 and all("imports solutions" in o for o in tasks["1.1"]["out"]), tasks["1.1"]
    assert "ZERO: exercises/task01_autograd/backward.py imports solutions" in bad["output"]
    assert tasks["10.1"]["score"] == 0 and tasks["10.2"]["score"] == 0  # the forced passes never ran
    for rel in ("conftest.py", "exercises/conftest.py", "sitecustomize.py", "evil.pth", "results.json"):
        assert f"{rel} (" in bad["output"], rel
    assert "task01_autograd/gradcheck.py: line" in bad["output"]  # importlib: listed for review
    if as_root:  # the reference is out of reach of the unprivileged child: by import, by path, in other copies
        assert tasks["1.5"]["score"] == 0, tasks["1.5"]
    assert tasks["1.3"]["score"] == ref["1.3"]["max"]  # the others graded

    # 5. a hang (10.1) and a segfault (1.4): the tests that meet them score 0, the others are graded
    def broken(s):
        ex = s / "exercises"
        fill_reference(ex, {1, 10})
        st = ex / "task10_distill" / "soft_targets.py"
        st.write_text(st.read_text() + "\n\ndef soft_target_loss(student_logits, teacher_logits, T):\n"
                                       "    while True:\n        pass\n")
        mm = ex / "task01_autograd" / "matmul.py"
        mm.write_text(mm.read_text() + "\n\ndef matmul_backward(grad_output, a, b):\n    import os, signal\n"
                                       "    os.kill(os.getpid(), signal.SIGSEGV)\n")

    hurt_data = run(broken, timeout=10)
    hurt = _by_task(hurt_data)
    # each costs only the tests that run into it: 10.1's tests that never call soft_target_loss still pass
    assert hurt["10.1"]["status"] == "timed out" and 0 < hurt["10.1"]["score"] < hurt["10.1"]["max"], hurt["10.1"]
    assert hurt["1.4"]["status"] == "crashed" and hurt["1.4"]["score"] < hurt["1.4"]["max"], hurt["1.4"]
    assert any("timed out" in o or "still running" in o for o in hurt["10.1"]["out"])
    assert any("SIGSEGV" in o for o in hurt["1.4"]["out"])
    for task in ("1.1", "1.3", "10.2"):
        assert hurt[task]["score"] == ref[task]["max"], (task, hurt[task])

    # 6. forgeries: module 1 copies module 2's reference (in module 1's copy: the library runs on it) to
    #    /tmp for module 2's file to run; module 10's file rewrites its reporter to say "passed"
    def forged(s):
        ex = s / "exercises"
        shutil.copytree(ROOT / "exercises", ex)
        gc = ex / "task01_autograd" / "gradcheck.py"
        gc.write_text(gc.read_text() + RELAY_OUT)
        sm = ex / "task02_kernels" / "softmax.py"
        sm.write_text(sm.read_text() + RELAY_IN)
        st = ex / "task10_distill" / "soft_targets.py"
        st.write_text(st.read_text() + PATCH_REPORTER)

    Path("/tmp/minilm_relay_softmax.py").unlink(missing_ok=True)
    got = run(forged, modules="1,2,10")
    tasks = _by_task(got)
    assert all(tasks[t]["score"] == 0 for t in ("10.1", "10.2")), tasks  # the patched reporter: caught
    assert tasks["10.1"]["status"] == "flagged" and "FLAGGED for review: module 10" in got["output"]
    if as_root:  # the relay: module 1's file was deleted before module 2 ran
        assert tasks["2.1"]["score"] == 0, tasks["2.1"]
        assert "FLAGGED for review: the modules' users left" in got["output"] and "minilm_relay" in got["output"]
        assert not Path("/tmp/minilm_relay_softmax.py").exists()
    held_back = [e["nodeid"].split("::")[1] for e in json.loads(
        (ROOT / "tests" / "graded" / "manifest.json").read_text())["tests"] if e["hidden"]]
    for data in (got, bad, hurt_data):
        leaked = [n for n in held_back if n in data["output"]]
        assert not leaked, f"held-back tests named in the top-level output: {leaked}"
