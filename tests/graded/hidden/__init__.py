"""Held-back graded tests (``@pytest.mark.hidden``): the autograder runs them, a student release leaves them out.

Each one checks a property that a visible test already checks, on other inputs, so that code tuned
to the visible cases still has to be right. results.json shows them with visibility "after_published".
"""
