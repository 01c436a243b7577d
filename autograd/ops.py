"""Every primitive Function in one namespace (``tensor.py`` calls them as ``F.Add`` etc.)."""
from .elementwise import (Add, Sub, Mul, Div, Neg, Pow, RPow, Exp, Log, Tanh, Sigmoid, LogSigmoid,  # noqa: F401
                          ReLU, Where)
from .reductions import Sum, Mean, Max  # noqa: F401
from .movement import Reshape, Transpose, GetItem, Gather, Cat, Stack, cat, stack, where  # noqa: F401
from .linalg import MatMul  # noqa: F401
