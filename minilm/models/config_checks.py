"""The checks every model config and model constructor repeats, written once.

A config dataclass calls them from ``__post_init__``; a model's ``__init__`` calls
:func:`check_config` before it reads the config. Each raises ``ConfigError`` with the config's
class name, the field, the value received and what was expected.
"""
from __future__ import annotations

import numpy as np

from autograd import nn
from autograd.errors import ConfigError


def check_positive_ints(config, names) -> None:
    """Each field of ``config`` in ``names`` is a positive int (``True`` is refused: it is a bool)."""
    for name in names:
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
            raise ConfigError(f"{type(config).__name__}: {name}={value!r} must be a positive integer")


def check_heads(config) -> None:
    """``n_embd`` splits into ``n_head`` heads of equal width."""
    if config.n_embd % config.n_head:
        raise ConfigError(f"{type(config).__name__}: n_embd={config.n_embd} is not a multiple of "
                          f"n_head={config.n_head}")


def check_dropout(config) -> None:
    """0 <= ``dropout`` < 1."""
    if not 0.0 <= config.dropout < 1.0:
        raise ConfigError(f"{type(config).__name__}: dropout={config.dropout} must be in [0, 1)")


def check_config(owner: str, config, expected: type) -> None:
    """A model built from the wrong kind of config fails here, not deep in its ``__init__``."""
    if not isinstance(config, expected):
        article = "an" if expected.__name__[:1] in "AEIOX" else "a"  # an XLNetConfig, a GPTConfig
        raise ConfigError(f"{owner}: config must be {article} {expected.__name__}, got {type(config).__name__}")


def check_model_args(owner: str, config, expected: type, rng) -> object:
    """The top of a model's ``__init__``: :func:`check_config`, then the ``numpy.random.Generator``
    its weights are drawn from (``nn.check_rng``). Returns ``config``."""
    check_config(owner, config, expected)
    nn.check_rng(owner, rng)
    return config
