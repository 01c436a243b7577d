"""The student release that the GitHub grading tests grade (test_github_grading.py, test_classroom50.py):
made once per session, however many test files ask for it.
"""
from __future__ import annotations

import pytest

from autograd import tasks
from tests.release_kit import make_release


@pytest.fixture(scope="session")
def release(tmp_path_factory):
    if not tasks.solutions_available():
        pytest.skip("a release is made from a full checkout")
    dest = tmp_path_factory.mktemp("rel") / "student"
    done = make_release(dest, "--no-git")
    assert done.returncode == 0, done.stderr[-3000:]
    return dest
