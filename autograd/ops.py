"""Every primitive Function in one namespace (``tensor.py`` calls them as ``F.Add`` etc.)."""
from .elementwise import Add, Sub, Mul, Div, Neg, Pow, Exp, Log, Tanh, Sigmoid, ReLU, Where  # noqa: F401
from .reductions import Sum, Mean, Max  # noqa: F401
from .movement import Reshape, Transpose, GetItem, Gather, Cat, Stack, cat, stack, where  # noqa: F401
from .linalg import MatMul  # noqa: F401
