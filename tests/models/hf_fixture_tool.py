"""The fixture tools of tools/ as modules, for the tests that re-derive the fixtures with transformers."""
import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def import_tool(name: str):
    """``tools/<name>.py``, imported; the calling test is skipped in a copy without it (a student
    release leaves tools/make_* out)."""
    if not (ROOT / "tools" / f"{name}.py").is_file():
        pytest.skip(f"tools/{name}.py is not in this copy (a student release leaves tools/make_* out)")
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


def fixture_tool():
    """tools/make_hf_fixtures.py (see :func:`import_tool`)."""
    return import_tool("make_hf_fixtures")
