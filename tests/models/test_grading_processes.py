"""The grader's children and its orphan hunt, run side by side as ``minilm grade`` runs them (threads)."""
from __future__ import annotations

import os
import subprocess
import threading

from minilm.grading import processes


def test_a_child_just_started_by_one_thread_is_not_killed_as_an_orphan_by_another(monkeypatch):
    """Seen in CI: module 4's child was killed (-9) by module 3's thread hunting orphans between the
    child's start and its entry among the live children, and module 4 "could not start". Here the other
    thread's hunt is made to come at that worst moment, every time."""
    hunters = []

    class HuntRightAfterTheFork(subprocess.Popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            hunter = threading.Thread(target=processes.kill_orphans)
            hunter.start()
            hunter.join(0.5)  # the hunt runs now, or waits until the child is known to be ours
            hunters.append(hunter)

    monkeypatch.setattr(processes.subprocess, "Popen", HuntRightAfterTheFork)
    env = dict(os.environ, MINILM_GRADING_CHILD="1")  # what a grading child carries
    proc = processes.start_child(["sleep", "30"], env=env, start_new_session=True)
    try:
        hunters[0].join(10)
        assert not hunters[0].is_alive()
        assert proc.poll() is None, f"the orphan hunt killed a child that was just started (exit code {proc.poll()})"
    finally:
        proc.kill()
        proc.wait()
        processes._LIVE.discard(proc.pid)


def test_an_adopted_orphan_is_still_hunted():
    """The lock must not make the hunt a no-op: a grading process that is ours but not live is killed."""
    env = dict(os.environ, MINILM_GRADING_CHILD="1")
    proc = subprocess.Popen(["sleep", "30"], env=env, start_new_session=True)  # not in _LIVE: an orphan to us
    try:
        processes.kill_orphans()
        proc.wait(10)  # the hunt killed and reaped it (a sleep of 30 s would run out this wait)
    finally:
        proc.kill()
        proc.wait()
