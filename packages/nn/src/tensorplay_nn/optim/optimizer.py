"""`Optimizer`: the base class every algorithm in `tensorplay.optim` derives from.

Where it sits: an optimizer holds references to parameters (leaf tensors), grouped in `param_groups` that each
carry their own hyper-parameters, plus per-parameter `state` (momentum buffers, step counts, ...). A subclass
implements `step()`; everything else — groups, state_dict/load_state_dict in PyTorch's exact format,
zero_grad, step hooks, repr — lives here, written like `torch.optim.Optimizer` so checkpoints move between
the two.

    >>> import tensorplay as tp
    >>> w = tp.ones(3, requires_grad=True)
    >>> opt = tp.optim.SGD([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> [round(v, 4) for v in w.tolist()]
    [0.8, 0.8, 0.8]
"""

from __future__ import annotations

import copy
import functools
import itertools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import tensorplay_p10 as tp
from tensorplay_p10 import Tensor
from tensorplay_tpx.autograd.engine import RemovableHandle
from tensorplay_tpx.autograd.grad_mode import enable_grad

__all__ = ["Optimizer", "ParamsT", "required"]

ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]]


class _RequiredParameter:
    """Singleton marking a hyper-parameter that every param group must give (SGD's `lr` in old PyTorch)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj: Any) -> str:
    """PyTorch's `torch.typename`: the qualified type name used in error messages."""
    if isinstance(obj, Tensor):
        return "tensorplay.Tensor"
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


def _check_leaf(param: Tensor) -> None:
    if not (param.is_leaf or param.retains_grad):
        raise ValueError("can't optimize a non-leaf Tensor")


class Optimizer:
    """Base class for optimizers.

    Args:
        params: an iterable of tensors, or of dicts defining parameter groups (each with a `params` entry and
            optional per-group hyper-parameters that override `defaults`).
        defaults: the hyper-parameters used by groups that do not set them.

    State is kept per parameter in `self.state[param]` (a dict); `state_dict()` renames parameters to integer
    ids in group order, exactly as PyTorch does, so `load_state_dict` restores an optimizer from either.
    """

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
                + _typename(params)
            )
        self.state: defaultdict[Tensor, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    # ---- groups ----

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group; hyper-parameters it does not give come from `defaults`.

        Raises `ValueError` when a parameter already belongs to another group, or when a required
        hyper-parameter is missing.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {_typename(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering of "
                "tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is " + _typename(param)
                )
            _check_leaf(param)
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization parameter {name}"
                )
            param_group.setdefault(name, default)
        # Tensors hash by identity, so id() sets say the same thing and never touch tensor __eq__.
        ids = [id(p) for p in param_group["params"]]
        if len(ids) != len(set(ids)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                "an "
                "error; see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ---- state_dict ----

    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state as `{"state": {id: {...}}, "param_groups": [{..., "params": [ids]}]}`.

        Parameters become integer ids, numbered in group order; state tensors are returned by reference (copy
        them, or save the dict, before stepping again if you need a snapshot).
        """
        param_mappings: dict[int, int] = {}
        start_index = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update(
                {id(p): i for i, p in enumerate(group["params"], start_index) if id(p) not in param_mappings}
            )
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {
            (param_mappings[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()
        }
        return {"state": packed_state, "param_groups": param_groups}

    @staticmethod
    def _cast_state(param: Tensor, value: Any, key: Any = None) -> Any:
        """Move a loaded state value to its parameter's dtype (floating state only; `step` stays as saved)."""
        if isinstance(value, Tensor):
            if key != "step" and param.is_floating_point() and value.is_floating_point():
                return value.to(dtype=param.dtype)
            return value
        if isinstance(value, dict):
            return {k: Optimizer._cast_state(param, v, key=k) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(Optimizer._cast_state(param, v) for v in value)
        return value

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore from `state_dict()`'s output (ours or PyTorch's, converted to TensorPlay tensors).

        Groups must match in number and size; saved hyper-parameters replace the current ones.
        """
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = [len(g["params"]) for g in groups]
        saved_lens = [len(g["params"]) for g in saved_groups]
        if any(p_len != s_len for p_len, s_len in zip(param_lens, saved_lens, strict=True)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of optimizer's "
                "group"
            )
        id_map = dict(
            zip(
                itertools.chain.from_iterable(g["params"] for g in saved_groups),
                itertools.chain.from_iterable(g["params"] for g in groups),
                strict=True,
            )
        )
        state: defaultdict[Any, Any] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = self._cast_state(param, v)
            else:
                state[k] = v
        param_groups = []
        for group, new_group in zip(groups, saved_groups, strict=True):
            new_group["params"] = group["params"]
            param_groups.append(new_group)
        self.__setstate__({"state": state, "param_groups": param_groups})

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", OrderedDict())
        # Groups saved by an older version may lack newer options: fill them from the defaults.
        for group in self.param_groups:
            for name, default in self.defaults.items():
                if default is not required:
                    group.setdefault(name, default)

    # ---- gradients, steps, hooks ----

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors: drop them (`set_to_none=True`) or zero them."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one update. `closure` re-evaluates the model and returns the loss (needed by some
        algorithms; optional for all of ours)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    @staticmethod
    def _eval_closure(closure: Callable[[], Any] | None) -> Any:
        """Run `closure` with grad enabled (steps run under no_grad) and return its loss."""
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(optimizer, args, kwargs)` runs before each `step`; it may return new `(args, kwargs)`."""
        key = id(hook) ^ len(self._optimizer_step_pre_hooks) << 48
        self._optimizer_step_pre_hooks[key] = hook
        return RemovableHandle(lambda: self._optimizer_step_pre_hooks.pop(key, None))

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(optimizer, args, kwargs)` runs after each `step`."""
        key = id(hook) ^ len(self._optimizer_step_post_hooks) << 48
        self._optimizer_step_post_hooks[key] = hook
        return RemovableHandle(lambda: self._optimizer_step_post_hooks.pop(key, None))

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Wrap each subclass's own `step` so the step hooks run around it."""
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _with_step_hooks(cls.__dict__["step"])

    def __repr__(self) -> str:
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {key}: {group[key]}" for key in sorted(group) if key != "params")
        return "\n".join(lines) + "\n)"


def _with_step_hooks(step: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(step)
    def wrapper(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        for hook in list(self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"{hook} must return None or a tuple of (new_args, new_kwargs), but got {result}."
                    )
                args, kwargs = result
        out = step(self, *args, **kwargs)
        for hook in list(self._optimizer_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out

    wrapper._wrapped_by_step_hooks = True  # type: ignore[attr-defined]
    return wrapper


def _check_lr(lr: float | Tensor) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= float(lr):
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_hparams(**values: Any) -> None:
    """PyTorch's constructor checks, in the order given: each value >= 0, each of ``betas`` in [0, 1).

    The messages are PyTorch's (``Invalid epsilon value: -1``, ``Invalid beta parameter at index 0: 1.0``).
    """
    for name, value in values.items():
        if name == "betas":
            for i, beta in enumerate(value):
                if not 0.0 <= beta < 1.0:
                    raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        elif not 0.0 <= value:
            raise ValueError(f"Invalid {'epsilon' if name == 'eps' else name} value: {value}")


def _scalar(value: float | Tensor) -> float:
    """A hyper-parameter as a Python float (a 1-element tensor lr is read once per step)."""
    return float(value.item()) if isinstance(value, Tensor) else float(value)


def _new_step() -> Tensor:
    """The per-parameter step counter: a float32 scalar tensor, as PyTorch stores it."""
    return tp.tensor(0.0, dtype=tp.float32)


def _params_with_grad(group: dict[str, Any]) -> list[Tensor]:
    """The parameters of a group that have a gradient this step; sparse gradients are refused."""
    return [p for p in group["params"] if p.grad is not None]
