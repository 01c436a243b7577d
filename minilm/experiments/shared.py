"""Work that every condition of a seed needs, done once per experiment run, even with ``--jobs``.

The distillation experiments train one teacher per seed and distil every student of that seed
from it. Each worker process keeps the teacher it trained in memory, but with ``--jobs 2`` both
workers start on the same seed at once, so each would train its own copy (identical: a run is a
pure function of its condition, seed and settings) and the run pays for it twice.

``run_experiment`` gives every run with more than one worker a scratch folder
(``folder_for_workers``; its path in the environment variable ``MINILM_EXPERIMENT_SHARED``, which
the spawned workers inherit). :func:`once` builds a value in the first process that asks for it,
saves it there, and lets every other process wait for the file (an exclusive ``flock`` on a lock
file beside it) and load it. Without the folder (one process, or a system without ``fcntl``)
:func:`once` simply builds. Files are ``.npz`` checkpoints (``minilm.checkpoint``: no pickle), and
the folder is deleted when the run ends.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, TypeVar

__all__ = ["ENV", "folder_for_workers", "once"]

ENV = "MINILM_EXPERIMENT_SHARED"
T = TypeVar("T")


@contextmanager
def folder_for_workers():
    """A scratch folder for the run's workers, named in ``ENV`` until the block ends, then deleted."""
    saved = os.environ.get(ENV)
    with tempfile.TemporaryDirectory(prefix="minilm-experiment-shared-") as folder:
        os.environ[ENV] = folder
        try:
            yield Path(folder)
        finally:
            if saved is None:
                os.environ.pop(ENV, None)
            else:
                os.environ[ENV] = saved


def once(key: str, build: Callable[[], T], save: Callable[[T, Path], None], load: Callable[[Path], T]) -> T:
    """``build()``'s value for ``key`` (a string naming everything the value depends on), built by
    one process of the run and loaded by the others: ``save(value, path)`` must write ``path`` (an
    ``.npz``) so that ``load(path)`` gives back the same value."""
    folder = os.environ.get(ENV)
    try:
        import fcntl
    except ImportError:          # not POSIX: every process builds its own
        fcntl = None
    if not folder or fcntl is None or not Path(folder).is_dir():
        return build()
    path = Path(folder) / (hashlib.sha256(key.encode("utf-8")).hexdigest()[:20] + ".npz")
    with open(path.with_suffix(".lock"), "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)        # the others wait here while the first one builds
        try:
            if path.is_file():
                return load(path)
            value = build()
            save(value, path)
            return value
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
