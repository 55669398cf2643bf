"""Saving and loading a module's state: the work behind ``Module.state_dict`` and ``Module.load_state_dict``.

Where it sits: beside module.py, which keeps the methods (and their overridable hooks ``_save_to_state_dict``
and ``_load_from_state_dict``) and delegates here; this file holds the rules, which are PyTorch's: keys are
dotted paths, non-persistent buffers are left out, loading copies in place under ``no_grad``, and every
problem (missing, unexpected, wrong shape, wrong type) is collected before one ``RuntimeError`` lists them
all.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, NamedTuple

import tensorplay_p10 as tp
from tensorplay_tpx.autograd import no_grad

from ..parameter import Parameter

EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` returns: the keys the module wanted but did not get, and the leftovers."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"

    __str__ = __repr__


def save_own_state(module: Any, destination: dict[str, Any], prefix: str, keep_vars: bool) -> None:
    """``module``'s own parameters, persistent buffers and extra state (not its children's), by name."""
    for name, param in module._parameters.items():
        if param is not None:
            destination[prefix + name] = param if keep_vars else param.detach()
    for name, buf in module._buffers.items():
        if buf is not None and name not in module._non_persistent_buffers_set:
            destination[prefix + name] = buf if keep_vars else buf.detach()
    if module._has_extra_state():
        destination[prefix + EXTRA_STATE_KEY_SUFFIX] = module.get_extra_state()


def load_own_state(
    module: Any,
    state_dict: Mapping[str, Any],
    prefix: str,
    local_metadata: dict[str, Any],
    strict: bool,
    missing_keys: list[str],
    unexpected_keys: list[str],
    error_msgs: list[str],
) -> None:
    """Copy ``module``'s own entries of ``state_dict`` into it; record problems in the three lists."""
    persistent = {k: v for k, v in module._buffers.items() if k not in module._non_persistent_buffers_set}
    local_state = {
        k: v for k, v in itertools.chain(module._parameters.items(), persistent.items()) if v is not None
    }
    assign = local_metadata.get("assign_to_params_buffers", False)
    for name, param in local_state.items():
        key = prefix + name
        if key not in state_dict:
            if strict:
                missing_keys.append(key)
            continue
        input_param = state_dict[key]
        if not isinstance(input_param, tp.Tensor):
            error_msgs.append(
                f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like object '
                f"from checkpoint but received {type(input_param)}"
            )
            continue
        if param.dim() == 0 and input_param.dim() == 1 and input_param.shape[0] == 1:
            input_param = input_param[0]  # old checkpoints stored scalars as 1-element vectors
        if input_param.shape != param.shape:
            error_msgs.append(
                f"size mismatch for {key}: copying a param with shape {input_param.shape} "
                "from checkpoint, "
                f"the shape in current model is {param.shape}."
            )
            continue
        try:
            with no_grad():
                if assign:
                    if isinstance(param, Parameter) and not isinstance(input_param, Parameter):
                        input_param = Parameter(input_param, requires_grad=param.requires_grad)
                    setattr(module, name, input_param)
                else:
                    param.copy_(input_param)
        except Exception as ex:  # recorded, then raised together with the other problems
            error_msgs.append(
                f'While copying the parameter named "{key}", whose dimensions in the model are '
                f"{param.shape} and whose dimensions in the checkpoint are {input_param.shape}, "
                f"an exception occurred : {ex.args}."
            )
    extra_state_key = prefix + EXTRA_STATE_KEY_SUFFIX
    if module._has_extra_state():
        if extra_state_key in state_dict:
            module.set_extra_state(state_dict[extra_state_key])
        elif strict:
            missing_keys.append(extra_state_key)
    if strict:
        for key in state_dict:
            if key.startswith(prefix) and key != extra_state_key:
                first, *rest = key[len(prefix) :].split(".", 1)
                if (rest and first not in module._modules) or (not rest and first not in local_state):
                    unexpected_keys.append(key)


def load_state_dict(
    root: Any, state_dict: Mapping[str, Any], strict: bool, assign: bool
) -> _IncompatibleKeys:
    """Load ``state_dict`` into ``root`` and its descendants (each through its ``_load_from_state_dict``)."""
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    state_dict = OrderedDict(state_dict)  # layers may add defaults to it (BatchNorm): never the caller's
    missing_keys: list[str] = []
    unexpected_keys: list[str] = []
    error_msgs: list[str] = []
    metadata = {"assign_to_params_buffers": assign} if assign else {}

    def load(module: Any, local_state_dict: Mapping[str, Any], prefix: str) -> None:
        module._load_from_state_dict(
            local_state_dict, prefix, metadata, True, missing_keys, unexpected_keys, error_msgs
        )
        for name, child in module._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                load(
                    child,
                    {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)},
                    child_prefix,
                )

    load(root, state_dict, "")
    if strict:
        if unexpected_keys:
            error_msgs.insert(
                0,
                "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected_keys)),
            )
        if missing_keys:
            error_msgs.insert(
                0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing_keys))
            )
    if error_msgs:
        raise RuntimeError(
            "Error(s) in loading state_dict for {}:\n\t{}".format(
                type(root).__name__, "\n\t".join(error_msgs)
            )
        )
    return _IncompatibleKeys(missing_keys, unexpected_keys)
