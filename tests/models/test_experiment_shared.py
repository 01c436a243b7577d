"""``minilm.experiments.shared``: what a seed's conditions have in common is built once per run,
across the ``--jobs`` worker processes, and the distillation teacher survives the trip through
the shared folder unchanged."""
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from minilm.experiments import distillation, shared


def _build_in_worker(log: str, key: str) -> float:
    """Runs in a spawned worker, as ``run_experiment``'s pairs do: ``once`` with a slow build that
    leaves a line in ``log`` each time it really runs."""
    def build():
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
        time.sleep(0.5)                   # long enough for the other worker to ask meanwhile
        return np.arange(5.0) * 2

    value = shared.once(key, build, lambda v, path: np.savez(path, v=v),
                        lambda path: np.load(path, allow_pickle=False)["v"])
    return float(value.sum())


def test_the_workers_of_a_run_build_a_shared_value_once(tmp_path):
    log = tmp_path / "builds.txt"
    with shared.folder_for_workers() as folder:
        assert os.environ[shared.ENV] == str(folder)
        with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
            sums = list(pool.map(_build_in_worker, [str(log)] * 4, ["teacher 0"] * 4))
            other = pool.submit(_build_in_worker, str(log), "teacher 1").result()
    assert sums == [20.0] * 4 and other == 20.0
    assert len(log.read_text().split()) == 2, "each key must be built once per run, by one worker"
    assert not Path(folder).exists() and shared.ENV not in os.environ       # the run's folder is gone


def run_one(condition: str, seed: int, settings: dict) -> dict:
    """An experiment's run_one, for the runner: every condition of a seed asks for the seed's value."""
    return {"sum": _build_in_worker(settings["log"], f"seed {seed}")}


def test_the_runners_workers_share_a_seeds_value(tmp_path):
    """minilm experiment --jobs 2 as it runs: the runner's spawned workers get the shared folder, so
    six rows over two seeds build two values."""
    from minilm.experiments import runner
    log, runs = tmp_path / "builds.txt", []
    todo = [(c, s) for s in (0, 1) for c in ("a", "b", "c")]
    runner._run_in_processes(__name__, todo, {"log": str(log)}, runs.append, None, jobs=2)
    assert sorted((r["condition"], r["seed"]) for r in runs) == sorted(todo)
    assert all(r["metrics"]["sum"] == 20.0 for r in runs)
    assert len(log.read_text().split()) == 2, "each seed's value must be built once by the run's workers"
    assert shared.ENV not in os.environ


def test_without_the_folder_every_call_builds(tmp_path, monkeypatch):
    monkeypatch.delenv(shared.ENV, raising=False)
    calls = []
    for _ in range(2):
        shared.once("k", lambda: calls.append(1) or 3, lambda v, p: None, lambda p: 0)
    assert calls == [1, 1]


def test_a_teacher_saved_for_the_other_workers_is_the_same_teacher(tmp_path):
    from minilm.experiments import settings_of
    s = settings_of(distillation.CONFIG.quick())
    built = distillation._train_teacher(0, s)
    distillation._save_teacher(built, tmp_path / "t.npz")
    loaded = distillation._load_teacher(tmp_path / "t.npz", 0, s)
    assert loaded["accuracy"] == built["accuracy"]
    pair = ("the dog runs .", "an animal runs .")
    assert loaded["tokenizer"].encode_pair(*pair) == built["tokenizer"].encode_pair(*pair)
    assert loaded["tokenizer"].vocab_size == built["tokenizer"].vocab_size
    for key in ("ids", "mask", "y", "test_ids", "test_mask", "y_test"):
        np.testing.assert_array_equal(loaded[key], built[key], err_msg=key)
    a = built["teacher"](built["test_ids"], None, built["test_mask"])["logits"].data
    b = loaded["teacher"](built["test_ids"], None, built["test_mask"])["logits"].data
    np.testing.assert_array_equal(a, b)
