"""One unprivileged user per task module (tools/autograder/autograder.py's isolation).

Run as root, the autograder gives task module M its own uid = gid = MINILM_AUTOGRADER_UID + M:

* ``lock``: the module's kit copies belong to root and are readable by that group only, so a
  module's code cannot read another module's copy (nor rewrite its own);
* ``private_dir``: its scratch and numba cache are folders only that user may enter;
* ``make_preexec``: each child drops to that user before it runs, with no core files, private new
  files, and caps on processes and file size;
* ``end_user`` and ``remove_files_of``: after the module, every process of that user is killed and
  every file it left in a folder all users share (/tmp, /var/tmp, /dev/shm) is deleted, so nothing
  a module leaves behind reaches the next.

Without root (MINILM_AUTOGRADER_UID=off, a local dry run) the uid is None and these do nothing
beyond the umask and the core-file limit.
"""
from __future__ import annotations

import os
import re
import resource
import shutil
import signal
import time
from pathlib import Path


def lock(top: Path, gid: int | None) -> None:
    """Owned by root, readable by group ``gid`` only (dirs 0750, files 0640), writable by nobody else."""
    if gid is None:
        return
    for path in [top, *top.rglob("*")]:
        os.chown(path, 0, gid, follow_symlinks=False)
        os.chmod(path, 0o750 if path.is_dir() else 0o640)


def private_dir(path: Path, uid: int | None) -> Path:
    """A folder only ``uid`` may use (0700), made anew unless it is a cache."""
    path.mkdir(parents=True, exist_ok=True)
    if uid is not None:
        for p in [path, *path.rglob("*")]:
            os.chown(p, uid, uid, follow_symlinks=False)
        os.chmod(path, 0o700)
    return path


def make_preexec(base_uid: int | None):
    """The children's ``preexec_fn``: no core files, private new files; as root, switch to the
    module's own uid/gid."""

    def preexec():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.umask(0o077)
        if base_uid is None:
            return
        match = re.fullmatch(r"m(\d\d)h?", Path(os.getcwd()).name)  # subprocess chdirs before preexec_fn
        uid = base_uid + (int(match.group(1)) if match else 0)
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        resource.setrlimit(resource.RLIMIT_NPROC, (256, 256))
        resource.setrlimit(resource.RLIMIT_FSIZE, (200 << 20, 200 << 20))

    return preexec


def end_user(uid: int) -> None:
    """Kill every process of ``uid``: a forked helper that becomes ``uid`` and signals all of its
    processes at once (kill(-1) is one system call, so a fork loop cannot outrun it), until none is left."""
    for _ in range(20):
        if not any(process_owner(p) == uid for p in Path("/proc").glob("[0-9]*")):
            return
        pid = os.fork()
        if pid == 0:
            try:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        time.sleep(0.05)


def process_owner(proc: Path) -> int | None:
    try:
        return proc.stat().st_uid
    except OSError:
        return None


def remove_files_of(uid: int, folders, keep: Path) -> list[str]:
    """Delete what ``uid`` left in ``folders`` (shared, writable by all), except under ``keep`` (the
    autograder's own tree: the module's cache is kept); returns what was removed."""
    gone = []
    for top in map(Path, folders):
        if not top.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(top, topdown=True, followlinks=False):
            if Path(dirpath) == keep.parent:
                dirnames[:] = [d for d in dirnames if Path(dirpath) / d != keep]
            for name in list(dirnames) + filenames:
                path = Path(dirpath) / name
                try:
                    if path.lstat().st_uid != uid:
                        continue
                except OSError:
                    continue
                if name in dirnames:
                    dirnames.remove(name)
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
                gone.append(str(path))
    return gone
