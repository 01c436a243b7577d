"""Files written whole or not at all: checkpoints, results.json, experiment tables, figures.

Every writer in the kit goes through ``atomic_open``: the bytes go to a new temporary file in the
destination's own folder (so the final rename never crosses a file system), are flushed to disk,
and only then does ``os.replace`` put the file in place, in one step. A reader, or a run that is
killed half-way, sees the old file or the new one, never a torn one; on any failure the temporary
file is removed and the old file is left as it was.
"""
from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from autograd.errors import ConfigError


def _new_temporary(path: Path) -> tuple[int, Path]:
    """Create ``<folder>/<name>.<random>.tmp`` exclusively; its permissions are those ``open()``
    would give the file (0o666 less the umask), so the renamed file looks like any other."""
    for _ in range(100):
        tmp = path.with_name(f"{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"atomic_open {path}: no free temporary name after 100 tries")


@contextlib.contextmanager
def atomic_open(path, mode: str = "wb", encoding: str | None = None):
    """``with atomic_open(path, "wb") as f: f.write(...)`` — ``path`` appears only when the block ends
    without an exception. ``mode`` is ``"wb"`` or ``"w"`` (text; ``encoding`` then defaults to UTF-8)."""
    if mode not in ("wb", "w"):
        raise ConfigError(f"atomic_open {path}: mode {mode!r}, expected 'wb' or 'w'")
    path = Path(path)
    fd, tmp = _new_temporary(path)
    try:
        f = os.fdopen(fd, mode, encoding=(encoding or "utf-8") if mode == "w" else None)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    try:
        with f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write(path, data: bytes | str) -> Path:
    """Write ``data`` (bytes, or text as UTF-8) to ``path`` atomically; returns ``path`` as a Path."""
    with atomic_open(path, "w" if isinstance(data, str) else "wb") as f:
        f.write(data)
    return Path(path)
