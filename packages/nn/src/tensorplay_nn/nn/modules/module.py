"""``nn.Module``: the base class of every layer and model, with PyTorch's semantics.

Where it sits: the root of ``tensorplay.nn``. A module finds its state by walking its own attributes:
assigning a :class:`~tensorplay.nn.Parameter`, a buffer or another module to an attribute files it in
``_parameters``, ``_buffers`` or ``_modules`` (Note [Attribute registration]); everything else —
``parameters()``, ``state_dict()``, ``to()``, ``train()``, ``repr`` — is a walk over those three dicts.
Calling a module runs its forward hooks around ``forward`` (Note [Calling a module]).

Note [Attribute registration]
    ``__setattr__`` is the only entry point: ``self.w = Parameter(...)`` registers, ``self.w = None`` keeps
    the slot (as ``register_parameter(name, None)``), and a name lives in exactly one of ``_parameters``,
    ``_buffers``, ``_modules`` or ``__dict__`` — assigning a parameter removes a module of the same name. The
    three dicts are read back by ``__getattr__``, which Python calls only after ``__dict__`` missed. This is
    PyTorch's design, kept so that code written for ``torch.nn`` behaves the same here.

Note [Calling a module]
    ``module(*args, **kwargs)`` runs the forward pre-hooks (each may replace the arguments), ``forward``, then
    the forward hooks (each may replace the result). With no hooks registered it is a plain ``forward`` call.
"""

from __future__ import annotations

import copy
import itertools
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import tensorplay_p10 as tp
from tensorplay_tpx.autograd import no_grad
from tensorplay_tpx.autograd.engine import RemovableHandle

from ..parameter import Buffer, Parameter
from . import state_dict as _sd
from .hooks import call_with_hooks

__all__ = ["Module"]

_hook_ids = itertools.count()  # one counter for every module's hooks: an id names one registration


def _typename(obj: Any) -> str:
    """PyTorch's ``torch.typename``: ``tensorplay.FloatTensor`` for tensors, the qualified class name else."""
    if isinstance(obj, tp.Tensor):
        return obj.type()
    cls = type(obj)
    module = cls.__module__
    return cls.__qualname__ if module in ("builtins", None) else f"{module}.{cls.__qualname__}"


def _addindent(s: str, num_spaces: int) -> str:
    """Indent every line but the first (nested module reprs sit under their ``(name): `` label)."""
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * num_spaces + line for line in lines[1:])


def _check_name(kind: str, name: Any) -> None:
    """The name rules shared by parameters, buffers and submodules (PyTorch's messages)."""
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain ".", got: {name}')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')


class Module:
    r"""Base class for all neural-network modules; models subclass it and define ``forward``.

    Submodules, parameters and buffers assigned as attributes in ``__init__`` are registered, so that
    ``parameters()``, ``state_dict()``, ``to()`` and ``print(model)`` see them.

    Example:
        >>> import tensorplay as tp
        >>> from tensorplay import nn
        >>> class Net(nn.Module):
        ...     def __init__(self) -> None:
        ...         super().__init__()
        ...         self.fc = nn.Linear(4, 2)
        ...     def forward(self, x):
        ...         return self.fc(x) * 2
        >>> net = Net()
        >>> [name for name, _ in net.named_parameters()]
        ['fc.weight', 'fc.bias']
        >>> net(tp.ones(3, 4)).shape
        tensorplay.Size([3, 2])
    """

    training: bool
    _version: int = 1
    call_super_init: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            bad = next(iter(kwargs)) if kwargs else None
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument '{bad}'"
                if bad is not None
                else f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} "
                "were given"
            )
        # object.__setattr__: our own __setattr__ reads these dicts, so they must exist before it runs
        set_ = super().__setattr__
        set_("training", True)
        set_("_parameters", {})
        set_("_buffers", {})
        set_("_non_persistent_buffers_set", set())
        set_("_modules", {})
        set_("_forward_pre_hooks", OrderedDict())
        set_("_forward_pre_hooks_with_kwargs", {})
        set_("_forward_hooks", OrderedDict())
        set_("_forward_hooks_with_kwargs", {})
        set_("_forward_hooks_always_called", {})
        set_("_backward_hooks", OrderedDict())
        set_("_backward_pre_hooks", OrderedDict())

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation of this module; every subclass overrides it. Call the module, not ``forward``."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # ---- registration ---------------------------------------------------------------------------------
    def register_buffer(self, name: str, tensor: tp.Tensor | None, persistent: bool = True) -> None:
        """Add a buffer: state that is not trained (running means...); ``persistent=False`` keeps it out of
        ``state_dict``."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name("buffer", name)
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, tp.Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        if isinstance(tensor, Buffer):
            tensor = tensor._buffer_data
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or a ``None`` slot for an optional one, such as a missing bias)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name("parameter", name)
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                f"explicitly. To express '{name}' as a function of another Tensor, compute the value in the "
                "forward() method."
            )
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module, reachable as the attribute ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        _check_name("module", name)
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias of :meth:`add_module`."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The submodule at the dotted path ``target`` (``""`` is this module)."""
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target`` (``"encoder.fc.weight"``)."""
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> tp.Tensor:
        """The buffer at the dotted path ``target``."""
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return getattr(mod, buffer_name)

    # ---- attribute protocol (Note [Attribute registration]) ---------------------------------------------
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        def remove_from(*stores: Any) -> None:
            for store in stores:
                if name in store:
                    if isinstance(store, dict):
                        del store[name]
                    else:
                        store.discard(name)

        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        else:
            modules = d.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(
                        f"cannot assign '{_typename(value)}' as child module '{name}' "
                        "(torch.nn.Module or None expected)"
                    )
                modules[name] = value
            else:
                buffers = d.get("_buffers")
                if isinstance(value, Buffer) or (buffers is not None and name in buffers):
                    if value is not None and not isinstance(value, tp.Tensor):
                        raise TypeError(
                            f"cannot assign '{_typename(value)}' as buffer '{name}' "
                            "(torch.nn.Buffer, torch.Tensor or None expected)"
                        )
                    if isinstance(value, Buffer):
                        persistent = value.persistent
                        remove_from(d, self._parameters, self._modules)
                    else:
                        persistent = name not in self._non_persistent_buffers_set
                    self.register_buffer(name, value, persistent)
                else:
                    super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self) -> list[str]:
        keys = [*dir(type(self)), *self.__dict__, *self._parameters, *self._modules, *self._buffers]
        return sorted({k for k in keys if not k[0].isdigit()})

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __deepcopy__(self, memo: dict[int, Any]) -> Module:
        """A copy with its own parameters and buffers (``copy.deepcopy(model)``).

        Parameters copy themselves; P10's plain tensors have no ``__deepcopy__``, so the buffers and tensor
        attributes are cloned into ``memo`` first (shared tensors stay shared in the copy).
        """
        if id(self) in memo:
            return memo[id(self)]
        for t in itertools.chain(self._buffers.values(), self.__dict__.values()):
            if isinstance(t, tp.Tensor) and not isinstance(t, Parameter) and id(t) not in memo:
                memo[id(t)] = t.detach().clone().requires_grad_(t.requires_grad)
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return new

    # ---- walking the tree -----------------------------------------------------------------------------
    def _named_members(
        self,
        get_members: Callable[[Module], Any],
        prefix: str = "",
        recurse: bool = True,
        remove_duplicate: bool = True,
    ) -> Iterator[tuple[str, Any]]:
        """Members (parameters or buffers) of this module and, with ``recurse``, of its descendants."""
        memo: set[int] = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters of this module (and, with ``recurse``, of all submodules), each once."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """``(dotted name, parameter)`` pairs; a shared one appears once unless ``remove_duplicate=False``."""
        yield from self._named_members(
            lambda m: m._parameters.items(), prefix=prefix, recurse=recurse, remove_duplicate=remove_duplicate
        )

    def buffers(self, recurse: bool = True) -> Iterator[tp.Tensor]:
        """The buffers of this module (and, with ``recurse``, of all submodules)."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, tp.Tensor]]:
        """``(dotted name, buffer)`` pairs."""
        yield from self._named_members(
            lambda m: m._buffers.items(), prefix=prefix, recurse=recurse, remove_duplicate=remove_duplicate
        )

    def children(self) -> Iterator[Module]:
        """The direct submodules, each once."""
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, direct submodule)`` pairs, each module once."""
        memo: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self) -> Iterator[Module]:
        """This module and all its descendants, depth first, each once."""
        for _, module in self.named_modules():
            yield module

    def named_modules(
        self, memo: set[Module] | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """``(dotted name, module)`` for this module (name ``prefix``) and all descendants, depth first."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    # Modules hash and compare by identity (the memo sets above rely on it), whatever a subclass adds.
    __hash__ = object.__hash__

    # ---- state dict -----------------------------------------------------------------------------------
    def get_extra_state(self) -> Any:
        """Extra, non-tensor state to put in ``state_dict`` under ``_extra_state``; override with
        :meth:`set_extra_state`."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue"
        )

    def set_extra_state(self, state: Any) -> None:
        """Restore what :meth:`get_extra_state` returned."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue"
        )

    def _has_extra_state(self) -> bool:
        return type(self).get_extra_state is not Module.get_extra_state

    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str, keep_vars: bool) -> None:
        """Put this module's own parameters and persistent buffers (not its children's) in ``destination``."""
        _sd.save_own_state(self, destination, prefix, keep_vars)

    def state_dict(
        self, *, destination: dict[str, Any] | None = None, prefix: str = "", keep_vars: bool = False
    ) -> dict[str, Any]:
        """Every parameter and persistent buffer by dotted name, detached unless ``keep_vars=True``.

        The tensors share memory with the module: clone them to keep a snapshot.
        """
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def _load_from_state_dict(
        self,
        state_dict: Mapping[str, Any],
        prefix: str,
        local_metadata: dict[str, Any],
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        """Copy this module's own entries from ``state_dict``, recording problems instead of raising.

        Layers whose saved format changed override this (see ``BatchNorm``) and then call it.
        """
        _sd.load_own_state(
            self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> _sd._IncompatibleKeys:
        """Copy ``state_dict``'s tensors into this module's parameters and buffers, in place, without grad.

        With ``strict=True`` (the default) missing or unexpected keys raise ``RuntimeError`` listing them all;
        shape mismatches always do. Returns the named tuple ``(missing_keys, unexpected_keys)``.
        ``assign=True`` makes the module take the given tensors instead of copying into its own.
        """
        return _sd.load_state_dict(self, state_dict, strict, assign)

    # ---- modes and gradients --------------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (dropout active, batch norm uses batch statistics) here and in all submodules."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode: ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter (``False`` freezes the module)."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's gradient: to ``None`` (the default) or to zeros."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    # ---- conversion -----------------------------------------------------------------------------------
    def _apply(
        self, fn: Callable[[tp.Tensor], tp.Tensor], recurse: bool = True, _memo: dict | None = None
    ) -> Module:
        """Replace every parameter, gradient and buffer ``t`` by ``fn(t)`` (what ``to``/``float`` run).

        A parameter stays the same object when ``fn`` returns it unchanged; otherwise the module gets a new
        :class:`Parameter` holding ``fn``'s result, with the same ``requires_grad`` (and the converted grad).
        A parameter shared by several modules (tied embeddings) becomes one new parameter, shared the same
        way: ``_memo`` maps each old parameter to its replacement across the whole tree.
        """
        memo: dict[int, Parameter] = {} if _memo is None else _memo
        if recurse:
            for module in self.children():
                module._apply(fn, _memo=memo)
        for key, param in self._parameters.items():
            if param is None:
                continue
            if id(param) in memo:
                self._parameters[key] = memo[id(param)]
                continue
            with no_grad():
                applied = fn(param)
            if applied is param:
                continue
            new_param = Parameter(applied, param.requires_grad)
            grad = param.grad
            if grad is not None:
                with no_grad():
                    new_param.grad = fn(grad)
            new_param.__dict__.update(param.__dict__)
            memo[id(param)] = new_param
            self._parameters[key] = new_param
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every submodule (children first), then on this module; used for initialisation."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)`` or ``to(tensor)``: move and/or cast in place.

        Only floating-point and complex parameters and buffers change dtype; integer buffers (counters,
        indices) keep theirs, as in PyTorch.
        """
        device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
        non_blocking = kwargs.pop("non_blocking", False)
        kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
        for a in args:
            if isinstance(a, tp.dtype):
                dtype = a
            elif isinstance(a, tp.Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, (str, tp.device, int)) and not isinstance(a, bool):
                device = a
            elif isinstance(a, bool):
                non_blocking = a
            else:
                raise TypeError(f"to() received an invalid combination of arguments: got {type(a).__name__}")
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(
                f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}"
            )

        def convert(t: tp.Tensor) -> tp.Tensor:
            cast = dtype if dtype is not None and (t.is_floating_point() or t.is_complex()) else None
            if cast is None and (device is None or t.device == tp.device(device)):
                return t
            return t.to(device=device, dtype=cast, non_blocking=non_blocking)

        return self._apply(convert)

    def float(self) -> Module:
        """Cast floating-point parameters and buffers to ``float32``."""
        return self._apply(lambda t: t.float() if t.is_floating_point() and t.dtype != tp.float32 else t)

    def double(self) -> Module:
        """Cast floating-point parameters and buffers to ``float64``."""
        return self._apply(lambda t: t.double() if t.is_floating_point() and t.dtype != tp.float64 else t)

    def half(self) -> Module:
        """Cast floating-point parameters and buffers to ``float16``."""
        return self._apply(lambda t: t.half() if t.is_floating_point() and t.dtype != tp.float16 else t)

    def bfloat16(self) -> Module:
        """Cast floating-point parameters and buffers to ``bfloat16``."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() and t.dtype != tp.bfloat16 else t)

    def type(self, dst_type: Any) -> Module:
        """Cast every parameter and buffer (integer ones too) to ``dst_type``."""
        return self._apply(lambda t: t if t.dtype == dst_type else t.type(dst_type))

    def cpu(self) -> Module:
        """Move every parameter and buffer to the CPU."""
        return self.to("cpu")

    def cuda(self, device: Any = None) -> Module:
        """Move every parameter and buffer to a CUDA device (``cuda:device``, or the current one)."""
        return self.to(
            "cuda" if device is None else tp.device("cuda", device) if isinstance(device, int) else device
        )

    # ---- hooks and calling (Note [Calling a module]) ----------------------------------------------------
    def _add_hook(
        self, hooks: OrderedDict, hook: Callable, prepend: bool, extra: list[dict]
    ) -> RemovableHandle:
        """File ``hook`` under a fresh id in ``hooks`` (first when ``prepend``) and mark it in ``extra``."""
        hook_id = next(_hook_ids)
        hooks[hook_id] = hook
        if prepend:
            hooks.move_to_end(hook_id, last=False)
        for d in extra:
            d[hook_id] = True

        def remove() -> None:
            for d in (hooks, *extra):
                d.pop(hook_id, None)

        return RemovableHandle(remove)

    def register_forward_pre_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, args)`` before ``forward`` (``hook(module, args, kwargs)`` with
        ``with_kwargs``).

        A non-``None`` result replaces the positional arguments (a single value is wrapped in a tuple), or
        with ``with_kwargs`` must be the pair ``(args, kwargs)``. Returns a handle whose ``remove()`` undoes
        it.
        """
        extra = [self._forward_pre_hooks_with_kwargs] if with_kwargs else []
        return self._add_hook(self._forward_pre_hooks, hook, prepend, extra)

    def register_forward_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False, always_call: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after ``forward`` (``hook(module, args, kwargs, output)`` with
        ``with_kwargs``); a non-``None`` result replaces the output. ``always_call`` runs it even when
        ``forward`` raised."""
        extra = [self._forward_hooks_with_kwargs] if with_kwargs else []
        if always_call:
            extra.append(self._forward_hooks_always_called)
        return self._add_hook(self._forward_hooks, hook, prepend, extra)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` when the gradients w.r.t. the module's inputs are
        computed; a non-``None`` result replaces ``grad_input`` (Note [Backward hooks as identity nodes])."""
        return self._add_hook(self._backward_hooks, hook, prepend, [])

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients w.r.t. the module's outputs arrive; a
        non-``None`` result replaces ``grad_output``."""
        return self._add_hook(self._backward_pre_hooks, hook, prepend, [])

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        if not (
            self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks
        ):
            return self.forward(*args, **kwargs)
        return call_with_hooks(self, args, kwargs)

    __call__ = _call_impl

    # ---- printing -------------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The one-line summary of this module's own settings shown inside its ``repr`` (override it)."""
        return ""

    def __repr__(self) -> str:
        extra_repr = self.extra_repr()
        extra_lines = extra_repr.split("\n") if extra_repr else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"
