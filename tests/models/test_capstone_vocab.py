"""The capstones' ready-made vocabularies (tests/capstone_vocab.py) are what training gives today."""
import subprocess
import sys

import pytest

from autograd import tasks
from tests.release_kit import ROOT


@pytest.mark.skipif(not tasks.solutions_available(), reason="trained on the reference: a full checkout")
def test_the_capstone_vocabularies_are_current():
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "make_capstone_vocab.py"), "--check"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
