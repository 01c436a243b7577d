"""Your implementations of minilm's task slots. Fill in the bodies that raise NotImplementedError.

Generated from solutions/ by tools/make_exercises.py: the names, signatures and docstrings are the
reference's; only the bodies are left to you. Run the graded tests of one task with
``pytest --impl exercises -m task1_2`` or see everything with ``minilm grade``.
"""
