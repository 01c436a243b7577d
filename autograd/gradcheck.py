"""``gradcheck(fn, *inputs)``: analytic gradients against central differences (Task 1.5)."""
from . import tasks

# Task 1.5: solutions/task01_autograd/gradcheck.py
gradcheck = tasks.bind("task01_autograd.gradcheck", "gradcheck")
