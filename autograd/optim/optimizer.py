"""``Optimizer``: what every update rule shares — parameter groups, ``zero_grad``, ``step`` and a
checkpointable state (PyTorch's ``torch.optim.Optimizer`` design).

Parameter groups. ``params`` is either a list of parameters or a list of dicts, each with its own
``"params"`` and any hyperparameter to override, e.g. no weight decay on biases and LayerNorms::

    AdamW([{"params": decay, "weight_decay": 0.01},
           {"params": no_decay, "weight_decay": 0.0}], lr=3e-4)

State. ``state_dict()`` is a *flat* dict of plain numbers and arrays, so that
``np.savez(path, **optimizer.state_dict())`` saves it with no pickle::

    "step"                      number of step() calls so far
    "param_groups.0.lr"         every numeric hyperparameter of every group (betas as an array)
    "state.3.exp_avg"           per-parameter state; 3 is the parameter's position, counting
                                through the groups in order (the model's parameter order)

``load_state_dict`` checks every key and shape before it changes anything, so resuming from a
checkpoint continues with exactly the steps the uninterrupted run would have taken.
"""
from __future__ import annotations

import numpy as np

from ..errors import CheckpointError, ConfigError, ShapeError
from ..tensor import Tensor, no_grad


class Optimizer:
    state_keys: tuple = ()  # names of the per-parameter state a subclass keeps (e.g. "exp_avg")

    def __init__(self, params, defaults: dict):
        if isinstance(params, Tensor):
            raise ConfigError(f"{type(self).__name__}: params must be a list of tensors (or of groups), "
                              "got a single tensor: wrap it in a list")
        groups = list(params)
        if not groups:
            raise ConfigError(f"{type(self).__name__}: got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        self.defaults = dict(defaults)
        self.param_groups: list[dict] = []
        seen = set()
        for k, group in enumerate(groups):
            unknown = set(group) - set(defaults) - {"params"}
            if unknown:
                raise ConfigError(f"{type(self).__name__}: param group {k} has unknown options "
                                  f"{sorted(unknown)}; known: {sorted(defaults)}")
            ps = group.get("params", [])
            ps = [ps] if isinstance(ps, Tensor) else list(ps)
            for p in ps:
                if not isinstance(p, Tensor) or not np.issubdtype(p.dtype, np.floating):
                    raise ConfigError(f"{type(self).__name__}: param group {k} holds {type(p).__name__} "
                                      f"{getattr(p, 'dtype', '')}; expected floating-point tensors")
                if id(p) in seen:
                    raise ConfigError(f"{type(self).__name__}: a parameter of shape {p.shape} appears "
                                      "twice (in one group or in two)")
                seen.add(id(p))
            merged = {**defaults, **{key: v for key, v in group.items() if key != "params"}, "params": ps}
            self._check_hyperparameters(merged)
            self.param_groups.append(merged)
        self.state: dict = {}  # Parameter -> {state key: value}, filled on the first step
        self.step_count = 0

    def _check_hyperparameters(self, group: dict) -> None:
        """Subclasses raise ConfigError for out-of-range values."""

    def _params(self) -> list:
        return [p for group in self.param_groups for p in group["params"]]

    def zero_grad(self) -> None:
        """Forget every gradient (``grad = None``) before the next backward."""
        for p in self._params():
            p.grad = None

    def step(self) -> None:
        """Update every parameter that has a gradient, in place (``p.data`` keeps its dtype)."""
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue  # unused this step: PyTorch skips it too (its state does not advance)
                    if p.grad.shape != p.shape:
                        raise ShapeError(f"{type(self).__name__}.step: gradient {p.grad.shape} for a "
                                         f"parameter of shape {p.shape}")
                    grad = np.asarray(p.grad, dtype=p.dtype)  # may alias p.grad: never modify in place
                    self.update(p, grad, group, self.state.setdefault(p, {}))
        self.step_count += 1

    def update(self, p: Tensor, grad: np.ndarray, group: dict, state: dict) -> None:
        """One parameter's update rule: change ``p.data`` in place. Subclasses write it."""
        raise NotImplementedError

    # ---- checkpoints -------------------------------------------------------------------------
    def state_dict(self) -> dict:
        out = {"step": self.step_count}
        for k, group in enumerate(self.param_groups):
            for name, value in group.items():
                if name != "params":
                    out[f"param_groups.{k}.{name}"] = np.array(value, dtype=float) \
                        if isinstance(value, tuple) else value
        for i, p in enumerate(self._params()):
            for name, value in self.state.get(p, {}).items():
                out[f"state.{i}.{name}"] = value.copy() if isinstance(value, np.ndarray) else value
        return out

    def load_state_dict(self, state_dict: dict) -> None:
        params = self._params()
        expected = {"step"} | {f"param_groups.{k}.{name}" for k, g in enumerate(self.param_groups)
                               for name in g if name != "params"}
        missing = sorted(expected - set(state_dict))
        unexpected, problems, per_param = [], [], {}
        for key, value in state_dict.items():
            if key in expected:
                continue
            parts = key.split(".")
            if len(parts) == 3 and parts[0] == "state" and parts[1].isdigit() \
                    and int(parts[1]) < len(params) and parts[2] in self.state_keys:
                per_param.setdefault(int(parts[1]), {})[parts[2]] = np.asarray(value)
            else:
                unexpected.append(key)
        for i, state in per_param.items():
            p = params[i]
            if set(state) != set(self.state_keys):
                problems.append(f"state.{i} has {sorted(state)}, expected {sorted(self.state_keys)}")
            for name, value in state.items():
                shape = () if name == "step" else p.shape  # "step" is a count, the rest are like p
                if value.shape != shape:
                    problems.append(f"state.{i}.{name}: expected shape {shape}, got {value.shape}")
        problems = ([f"missing keys {missing}"] if missing else []) + \
                   ([f"unexpected keys {unexpected}"] if unexpected else []) + problems
        if problems:
            raise CheckpointError(f"{type(self).__name__}.load_state_dict: " + "; ".join(problems))
        # all checked: now copy
        self.step_count = int(np.asarray(state_dict["step"]))
        for k, group in enumerate(self.param_groups):
            for name, old in list(group.items()):
                if name == "params":
                    continue
                value = np.asarray(state_dict[f"param_groups.{k}.{name}"])
                group[name] = tuple(float(v) for v in value) if isinstance(old, tuple) else type(old)(value)
        self.state = {}
        for i, state in per_param.items():
            p = params[i]
            self.state[p] = {name: int(value) if name == "step" else value.astype(p.dtype, copy=True)
                             for name, value in state.items()}
