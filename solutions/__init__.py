"""Reference solutions of every task slot in minilm.

Each slot's body sits between ``# BEGIN SOLUTION`` and ``# END SOLUTION``; ``tools/make_exercises.py``
writes ``exercises/`` from this package with those bodies replaced by stubs. A student release ships
without this package (``tools/make_student_release.py``).
"""
