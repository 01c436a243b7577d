"""One exception family for the whole kit. Messages name the operation, what was received and
what was expected, e.g. ``ShapeError("matmul: (4, 3) @ (5, 2): inner sizes 3 != 5")``."""


class MiniLMError(Exception):
    """Base class of every error minilm raises on purpose."""


class ShapeError(MiniLMError, ValueError):
    """Arrays whose shapes do not fit the operation."""


class IndexOutOfRangeError(ShapeError, IndexError):
    """An index or an axis outside a tensor's range. Also an ``IndexError`` (as NumPy's
    ``AxisError`` is), so that Python's iteration protocol stops at the end of a tensor and
    ``np.asarray``, ``list(t)`` and ``for row in t`` work."""


class GradcheckError(MiniLMError, AssertionError):
    """An analytic gradient disagrees with central differences."""


class CheckpointError(MiniLMError):
    """A checkpoint or weight file that is missing, truncated, malformed or does not fit the model."""


class TokenizerError(MiniLMError, ValueError):
    """Text or ids a tokenizer cannot handle (unknown characters, ids outside the vocabulary)."""


class ConfigError(MiniLMError, ValueError):
    """A configuration value that is out of range or inconsistent with another."""


class TrainingError(MiniLMError):
    """Training cannot go on (e.g. a non-finite loss); the message names the step."""
