"""tools/make_hf_fixtures.py as a module, for the tests that re-derive the fixtures with transformers."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def fixture_tool():
    """The fixture tool, imported from tools/; the calling test is skipped in a copy without it (a
    student release leaves tools/make_* out)."""
    if not (ROOT / "tools" / "make_hf_fixtures.py").is_file():
        pytest.skip("tools/make_hf_fixtures.py is not in this copy (a student release leaves tools/make_* out)")
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import make_hf_fixtures
    finally:
        sys.path.pop(0)
    return make_hf_fixtures
