"""``Parameter`` and ``Module``: the bookkeeping that turns tensors into a model (PyTorch's design).

A :class:`Module` notices what you assign to it in ``__init__``::

    class MLP(Module):
        def __init__(self, *, rng):
            super().__init__()
            self.fc1 = Linear(2, 64, rng=rng)        # a sub-Module: registered under "fc1"
            self.scale = Parameter(np.ones(64))      # a Parameter: registered under "scale"
            self.register_buffer("mask", np.tril(np.ones((4, 4), bool)))  # an array, not trained

and then knows its parameters by dotted names in assignment order (``fc1.weight``, ``fc1.bias``,
``scale``), as PyTorch and Hugging Face checkpoints name them. ``state_dict()`` copies them out as
plain arrays and ``load_state_dict()`` puts them back — checking everything before changing anything.

Unlike PyTorch, ``parameters()``, ``named_parameters()``, ``modules()``... return **lists**, not
generators: a generator read twice is silently empty the second time (an optimiser and a gradient
clipper given the same ``model.parameters()`` would otherwise disagree).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..errors import CheckpointError, ConfigError, MiniLMError
from ..tensor import Tensor

LoadResult = namedtuple("LoadResult", ["missing_keys", "unexpected_keys"])


class Parameter(Tensor):
    """A tensor that a Module trains: ``requires_grad=True`` and owned by the model.

    The data is **copied** (float dtype kept, or cast to ``dtype``): optimisers update parameters in
    place, which must never change an array the caller still holds.
    """

    def __init__(self, data, requires_grad: bool = True, dtype=None):
        if isinstance(data, Tensor):
            data = data.data
        super().__init__(np.array(data, dtype=dtype, copy=True), requires_grad=requires_grad)

    def __repr__(self):
        return "Parameter(" + super().__repr__()[len("Tensor("):]


class Module:
    """Base class of every layer and model. Subclasses call ``super().__init__()`` first, assign
    Parameters and sub-Modules as attributes, and write ``forward``; ``module(x)`` calls it."""

    def __init__(self):
        # object.__setattr__: our own __setattr__ needs these dictionaries to exist already
        object.__setattr__(self, "_parameters", {})  # name -> Parameter (or None, e.g. no bias)
        object.__setattr__(self, "_modules", {})     # name -> Module
        object.__setattr__(self, "_buffers", {})     # name -> np.ndarray
        object.__setattr__(self, "_non_persistent", set())  # buffers left out of state_dict
        object.__setattr__(self, "training", True)

    # ---- registration ------------------------------------------------------------------------
    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise MiniLMError(f"{type(self).__name__}: call super().__init__() before assigning "
                              f"attributes (assigning {name!r})")
        params, modules, buffers = self._parameters, self._modules, self._buffers
        if isinstance(value, Parameter):
            modules.pop(name, None)
            buffers.pop(name, None)
            params[name] = value
        elif isinstance(value, Module):
            params.pop(name, None)
            buffers.pop(name, None)
            modules[name] = value
        elif name in buffers:  # re-assigning a buffer keeps it a buffer
            if value is not None:
                value = np.asarray(value)
            buffers[name] = value
        elif name in params and value is None:
            params[name] = None  # e.g. ``self.bias = None``: still a known (absent) parameter
        else:
            params.pop(name, None)
            modules.pop(name, None)
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for registry in (self._parameters, self._modules, self._buffers):
            registry.pop(name, None)
        self._non_persistent.discard(name)
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Same as ``self.name = param``, but also accepts ``None`` (a parameter that is absent)."""
        if param is not None and not isinstance(param, Parameter):
            raise ConfigError(f"register_parameter({name!r}): expected a Parameter or None, "
                              f"got {type(param).__name__}")
        if param is None:
            self._parameters[name] = None
            object.__setattr__(self, name, None)
        else:
            setattr(self, name, param)

    def register_buffer(self, name: str, array, persistent: bool = True) -> None:
        """An array that belongs to the module but is not trained (e.g. a causal mask).

        Persistent buffers appear in ``state_dict()``; non-persistent ones are rebuilt by
        ``__init__`` and not saved. ``self.name`` reads (and re-assigns) the array.
        """
        if "_buffers" not in self.__dict__:
            raise MiniLMError(f"{type(self).__name__}: call super().__init__() before register_buffer")
        if name in self._parameters or name in self._modules:
            raise ConfigError(f"register_buffer({name!r}): that name is already a parameter or module")
        self._buffers[name] = None if array is None else np.asarray(array)
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)
        object.__setattr__(self, name, self._buffers[name])

    # ---- walking the tree --------------------------------------------------------------------
    def named_children(self) -> list:
        return list(self._modules.items())

    def children(self) -> list:
        return list(self._modules.values())

    def named_modules(self, prefix: str = "") -> list:
        """``(dotted name, module)`` for this module ("" for itself) and every descendant,
        depth-first in registration order; a module reachable twice is listed once."""
        out, seen = [], set()
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            out.append((name, module))
            children = [(f"{name}.{k}" if name else k, m) for k, m in module._modules.items()]
            stack.extend(reversed(children))  # reversed: pop in registration order
        return out

    def modules(self) -> list:
        return [m for _, m in self.named_modules()]

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> list:
        """``(dotted name, Parameter)`` pairs, e.g. ``("blocks.0.attn.weight", p)``. A parameter
        shared by two modules (tied embeddings) is listed once, under its first name."""
        out, seen = [], set()
        modules = self.named_modules(prefix) if recurse else [(prefix, self)]
        for mod_name, module in modules:
            for name, p in module._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                out.append((f"{mod_name}.{name}" if mod_name else name, p))
        return out

    def parameters(self, recurse: bool = True) -> list:
        return [p for _, p in self.named_parameters(recurse=recurse)]

    def named_buffers(self, prefix: str = "") -> list:
        return [(f"{mod_name}.{name}" if mod_name else name, b)
                for mod_name, module in self.named_modules(prefix)
                for name, b in module._buffers.items() if b is not None]

    def buffers(self) -> list:
        return [b for _, b in self.named_buffers()]

    def num_parameters(self, trainable_only: bool = False) -> int:
        """How many numbers the model learns (shared parameters counted once)."""
        return int(sum(p.size for p in self.parameters() if p.requires_grad or not trainable_only))

    # ---- modes and gradients -----------------------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        """Set ``.training`` on this module and every descendant (Dropout reads it)."""
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def zero_grad(self) -> None:
        """Forget every parameter's gradient (``grad = None``) before the next backward."""
        for p in self.parameters():
            p.grad = None

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        """Freeze (False) or unfreeze every parameter, e.g. a distillation teacher."""
        for p in self.parameters():
            p.requires_grad = bool(requires_grad)
        return self

    def apply(self, fn) -> "Module":
        """Call ``fn(module)`` on every descendant and on ``self`` (children first), e.g. custom init."""
        for m in reversed(self.modules()):
            fn(m)
        return self

    def to(self, dtype) -> "Module":
        """Cast every floating parameter and buffer to ``dtype`` in place (``np.float64`` for a
        gradient check). Parameters keep their identity, so an optimiser built before still works."""
        for p in self.parameters():
            if np.issubdtype(p.dtype, np.floating):
                p.data = p.data.astype(dtype)
                p.grad = None
        for m in self.modules():
            for name, b in m._buffers.items():
                if b is not None and np.issubdtype(b.dtype, np.floating):
                    setattr(m, name, b.astype(dtype))
        return self

    # ---- checkpoints -------------------------------------------------------------------------
    def _state_entries(self) -> dict:
        """name -> (module, attribute, kind) for every parameter and persistent buffer, in
        PyTorch's order: a module's own parameters, then its buffers, then its children's."""
        entries = {}
        for mod_name, module in self.named_modules():
            dot = f"{mod_name}." if mod_name else ""
            for name, p in module._parameters.items():
                if p is not None:
                    entries[dot + name] = (module, name, "parameter")
            for name, b in module._buffers.items():
                if b is not None and name not in module._non_persistent:
                    entries[dot + name] = (module, name, "buffer")
        return entries

    def state_dict(self) -> dict:
        """``{dotted name: np.ndarray copy}`` of every parameter and persistent buffer. A tied
        parameter appears under each of its names, as in PyTorch."""
        out = {}
        for key, (module, name, kind) in self._state_entries().items():
            value = module._parameters[name].data if kind == "parameter" else module._buffers[name]
            out[key] = np.array(value, copy=True)
        return out

    def load_state_dict(self, state_dict, strict: bool = True) -> LoadResult:
        """Copy arrays from ``state_dict`` into the parameters and buffers, cast to their dtypes.

        Everything is checked first, and one ``CheckpointError`` lists every problem at once:
        missing keys and unexpected keys (only when ``strict``) and keys whose shape differs
        (always). On error nothing has been changed. Returns ``(missing_keys, unexpected_keys)``.
        """
        entries = self._state_entries()
        missing = [k for k in entries if k not in state_dict]
        unexpected = [k for k in state_dict if k not in entries]
        problems = []
        arrays = {}
        for key, (module, name, kind) in entries.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            value = np.asarray(value.data if isinstance(value, Tensor) else value)
            target = module._parameters[name].data if kind == "parameter" else module._buffers[name]
            if value.shape != target.shape:
                problems.append(f"{key}: expected shape {target.shape}, got {value.shape}")
            elif not (np.issubdtype(value.dtype, np.number) or value.dtype == np.bool_):
                problems.append(f"{key}: expected numbers, got dtype {value.dtype}")
            else:
                arrays[key] = value
        if strict:
            problems = ([f"missing keys {missing}"] if missing else []) \
                + ([f"unexpected keys {unexpected}"] if unexpected else []) + problems
        if problems:
            raise CheckpointError(f"load_state_dict into {type(self).__name__}: " + "; ".join(problems))
        for key, value in arrays.items():  # all checked: now copy
            module, name, kind = entries[key]
            if kind == "parameter":  # in place: the Parameter object (held by optimisers) stays
                target = module._parameters[name].data
                target[...] = value.astype(target.dtype, copy=False)
            else:
                setattr(module, name, value.astype(module._buffers[name].dtype, copy=True))
        return LoadResult(missing, unexpected)

    # ---- calling -----------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward() method")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def extra_repr(self) -> str:
        """The text inside ``Name(...)`` in the printed model, e.g. ``in_features=2, ...``."""
        return ""

    def __repr__(self):
        lines = [self.extra_repr()] if self.extra_repr() else []
        lines += [f"({name}): " + repr(m).replace("\n", "\n  ") for name, m in self._modules.items()]
        if not self._modules:
            return f"{type(self).__name__}({''.join(lines)})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"
