"""The unpicklers behind ``tp.load`` of a ``.pt`` file: a restricted one (``weights_only=True``), a full one.

Where it sits: ``_pt_zip.py`` hands ``data.pkl`` to :class:`WeightsUnpickler` or :class:`FullUnpickler`
with a ``persistent_load`` that reads storages; the globals a file may name come from ``_pt_pickle.py``
(:func:`~._pt_pickle.torch_names`) plus what the user allowed with :func:`add_safe_globals`.

Note [A pickle that cannot run code]
    Python's unpickler runs code through a few doors only: a global looked up by name (GLOBAL, STACK_GLOBAL,
    INST, EXT*), then called (REDUCE, NEWOBJ, OBJ, INST) or handed state (BUILD, which may call
    ``__setstate__`` or ``setattr``). :class:`WeightsUnpickler` is a small opcode interpreter, like PyTorch's
    ``torch/_weights_only_unpickler.py``, that keeps every door shut but these: a global resolves only
    through the allow-list (never by importing); REDUCE and NEWOBJ call only allow-listed callables, whose
    arguments those callables check (``bytes(2**40)`` or ``set(tensor)`` are refused there); BUILD only adds
    instance attributes to an ``OrderedDict`` (how ``state_dict()._metadata`` travels) or hands state to an
    allow-listed user class; APPEND/SETITEM(S)/ADDITEMS only fill plain lists, dicts and sets; INST, OBJ,
    EXT*, text protocol-0 opcodes and out-of-band buffers are refused. Whatever is refused raises
    ``pickle.UnpicklingError`` naming it before anything of it runs. The interpreter never recurses, so a
    deeply nested file cannot overflow the stack, and every read is bounded by the bytes present.
"""

from __future__ import annotations

import contextlib
import pickle
import struct
import types
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from ._pt_pickle import NEWABLE, torch_names

UnpicklingError = pickle.UnpicklingError

# Python 2 module names that protocol-2 pickles use (pickle's fix_imports writes them).
_PY2_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg"}
# Never allowed, even when a user allow-lists something from them (as PyTorch's blocklist).
_BLOCKED_MODULES = ("os", "nt", "posix", "sys", "subprocess", "shutil", "importlib", "runpy")
_BLOCKED_BUILTINS = {
    "eval",
    "exec",
    "compile",
    "__import__",
    "getattr",
    "setattr",
    "delattr",
    "open",
    "globals",
    "locals",
    "vars",
    "breakpoint",
    "input",
    "exit",
    "quit",
    "help",
}

# ---- the user's allow-list (torch.serialization's add_safe_globals family) --------------------------------
_safe_globals: list[Any] = []


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Allow the given classes or functions (or ``(obj, "module.name")`` pairs) in a weights-only load."""
    for g in safe_globals:
        if isinstance(g, tuple):
            if len(g) != 2 or not isinstance(g[1], str):
                raise TypeError(f"add_safe_globals: a tuple entry must be (global, 'module.name'), got {g!r}")
        elif not hasattr(g, "__module__") or not hasattr(g, "__qualname__"):
            raise TypeError(f"add_safe_globals: {g!r} has no __module__/__qualname__ to be found by")
        if g not in _safe_globals:
            _safe_globals.append(g)


def get_safe_globals() -> list[Any]:
    """The user's allow-list, as :func:`add_safe_globals` built it."""
    return list(_safe_globals)


def clear_safe_globals() -> None:
    """Forget everything :func:`add_safe_globals` allowed."""
    _safe_globals.clear()


@contextlib.contextmanager
def safe_globals(globals_: list[Any]) -> Iterator[None]:
    """Allow ``globals_`` inside a ``with`` block only."""
    added = [g for g in globals_ if g not in _safe_globals]
    add_safe_globals(added)
    try:
        yield
    finally:
        for g in added:
            if g in _safe_globals:
                _safe_globals.remove(g)


def _user_globals() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for g in _safe_globals:
        obj, name = g if isinstance(g, tuple) else (g, f"{g.__module__}.{g.__qualname__}")
        out[name] = obj
    return out


def _blocked(module: str, name: str) -> bool:
    top = module.split(".")[0]
    return top in _BLOCKED_MODULES or (module == "builtins" and name in _BLOCKED_BUILTINS)


# ---- weights_only=True ------------------------------------------------------------------------------------
class _Mark:
    """Where a MARK opcode began a group on the stack."""


_MARK = _Mark()


class WeightsUnpickler:
    """Interprets a pickle with the allow-list only (Note [A pickle that cannot run code])."""

    def __init__(self, data: bytes, persistent_load: Callable[[tuple], Any], what: str) -> None:
        self.data, self.pos, self.what = memoryview(data), 0, what
        self.persistent_load = persistent_load
        self.stack: list[Any] = []
        self.memo: dict[int, Any] = {}
        self.names = torch_names()
        self.user = _user_globals()
        # Only our own checking functions are called; classes in the table (Tensor, Parameter) are markers.
        self.allowed_calls = {id(v) for v in self.names.values() if isinstance(v, types.FunctionType)}
        self.user_ids = {id(v) for v in self.user.values()}

    def load(self) -> Any:
        try:
            return self._run()
        except (IndexError, KeyError, struct.error, UnicodeDecodeError) as e:
            raise self._error(f"the pickle is truncated or corrupted ({type(e).__name__}: {e})") from e

    # -- helpers
    def _error(self, why: str) -> pickle.UnpicklingError:
        return UnpicklingError(f"tp.load: {self.what}: {why} (weights_only=True)")

    def _read(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise self._error(f"the pickle ends inside an opcode (wanted {n} bytes at {self.pos})")
        out = bytes(self.data[self.pos : self.pos + n])
        self.pos += n
        return out

    def _uint(self, n: int) -> int:
        return int.from_bytes(self._read(n), "little")

    def _line(self) -> str:
        end = bytes(self.data[self.pos : self.pos + 1024]).find(b"\n")
        if end < 0:
            raise self._error("a GLOBAL name is not terminated")
        return self._read(end + 1)[:-1].decode("utf-8")

    def _pop_mark(self) -> list[Any]:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i] is _MARK:
                items = self.stack[i + 1 :]
                del self.stack[i:]
                return items
        raise self._error("an opcode needs a MARK that is not there")

    def _global(self, module: str, name: str) -> Any:
        module = _PY2_MODULES.get(module, module)
        full = f"{module}.{name}"
        if _blocked(module, name):
            raise self._error(f"GLOBAL {full} is never allowed: it could run code")
        if full in self.names:
            return self.names[full]
        if full in self.user:
            return self.user[full]
        if module.split(".")[0] == "torch":
            raise self._error(f"unsupported GLOBAL {full}: a PyTorch name TensorPlay has no counterpart for")
        raise self._error(
            f"unsupported GLOBAL {full}: it is not an allowed global. If you trust this file, allow it with "
            f"tp.serialization.add_safe_globals([{full}]) or the safe_globals([...]) context manager, "
            "or load it with weights_only=False"
        )

    def _call(self, func: Any, args: Any, how: str) -> Any:
        if not isinstance(args, tuple):
            raise self._error(f"{how} arguments must be a tuple, got {type(args).__name__}")
        if id(func) in self.allowed_calls:
            if how == "NEWOBJ" and func not in NEWABLE:
                raise self._error(f"NEWOBJ of {func.__name__} is not allowed")
            try:
                return func(*args)
            except TypeError as e:  # wrong number of arguments for an allowed callable
                raise self._error(f"{how} of {func.__name__}: {e}") from None
        if id(func) in self.user_ids and callable(func):
            if how == "NEWOBJ":
                if not isinstance(func, type):
                    raise self._error(f"NEWOBJ of {func!r}, which is not a class")
                return func.__new__(func, *args)
            return func(*args)
        raise self._error(f"{how} of {func!r} ({type(func).__name__}), which is not an allowed callable")

    def _build(self, inst: Any, state: Any) -> None:
        if type(inst) is OrderedDict:
            if not isinstance(state, dict) or not all(
                type(k) is str and not k.startswith("__") for k in state
            ):
                raise self._error("BUILD of an OrderedDict takes a dict of attribute names")
            inst.__dict__.update(state)
        elif id(type(inst)) in self.user_ids:
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
            else:
                slots = None
                if isinstance(state, tuple) and len(state) == 2:
                    state, slots = state
                if state:
                    inst.__dict__.update(state)
                for k, v in (slots or {}).items():
                    setattr(inst, k, v)
        else:
            raise self._error(
                f"BUILD of a {type(inst).__name__} is not allowed (only OrderedDicts, allow-listed classes)"
            )

    def _fill(self, target: Any, kinds: tuple[type, ...], op: str) -> Any:
        if type(target) not in kinds and id(type(target)) not in self.user_ids:
            raise self._error(f"{op} into a {type(target).__name__}")
        return target

    # -- the interpreter
    def _run(self) -> Any:  # noqa: C901 (one branch per opcode is the clearest form)
        stack, memo = self.stack, self.memo
        while True:
            if self.pos >= len(self.data):
                raise self._error("the pickle ends without STOP")
            op = self.data[self.pos : self.pos + 1].tobytes()
            self.pos += 1
            if op == pickle.PROTO:
                if self._uint(1) > 5:
                    raise self._error("unknown pickle protocol")
            elif op == pickle.FRAME:
                self._uint(8)  # frames only group opcodes; the bytes follow inline
            elif op == pickle.STOP:
                if len(stack) != 1 or stack[0] is _MARK:
                    raise self._error(f"STOP with {len(stack)} objects on the stack")
                return stack.pop()
            elif op == pickle.MARK:
                stack.append(_MARK)
            elif op == pickle.POP:
                stack.pop()
            elif op == pickle.POP_MARK:
                self._pop_mark()
            elif op == pickle.DUP:
                stack.append(stack[-1])
            # plain values
            elif op == pickle.NONE:
                stack.append(None)
            elif op in (pickle.NEWTRUE, pickle.NEWFALSE):
                stack.append(op == pickle.NEWTRUE)
            elif op == pickle.BININT:
                stack.append(struct.unpack("<i", self._read(4))[0])
            elif op == pickle.BININT1:
                stack.append(self._uint(1))
            elif op == pickle.BININT2:
                stack.append(self._uint(2))
            elif op in (pickle.LONG1, pickle.LONG4):
                n = self._uint(1 if op == pickle.LONG1 else 4)
                stack.append(int.from_bytes(self._read(n), "little", signed=True))
            elif op == pickle.BINFLOAT:
                stack.append(struct.unpack(">d", self._read(8))[0])
            elif op in (pickle.SHORT_BINUNICODE, pickle.BINUNICODE, pickle.BINUNICODE8):
                n = self._uint({pickle.SHORT_BINUNICODE: 1, pickle.BINUNICODE: 4}.get(op, 8))
                stack.append(self._read(n).decode("utf-8", "surrogatepass"))
            elif op in (pickle.SHORT_BINBYTES, pickle.BINBYTES, pickle.BINBYTES8, pickle.BYTEARRAY8):
                n = self._uint({pickle.SHORT_BINBYTES: 1, pickle.BINBYTES: 4}.get(op, 8))
                raw = self._read(n)
                stack.append(bytearray(raw) if op == pickle.BYTEARRAY8 else raw)
            # containers
            elif op == pickle.EMPTY_TUPLE:
                stack.append(())
            elif op == pickle.TUPLE:
                stack.append(tuple(self._pop_mark()))
            elif op in (pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3):
                n = {pickle.TUPLE1: 1, pickle.TUPLE2: 2}.get(op, 3)
                if len(stack) < n or any(v is _MARK for v in stack[-n:]):
                    raise self._error("a TUPLE opcode finds too few objects")
                stack[-n:] = [tuple(stack[-n:])]
            elif op == pickle.EMPTY_LIST:
                stack.append([])
            elif op == pickle.LIST:
                stack.append(self._pop_mark())
            elif op == pickle.APPEND:
                item = stack.pop()
                self._fill(stack[-1], (list,), "APPEND").append(item)
            elif op == pickle.APPENDS:
                items = self._pop_mark()
                self._fill(stack[-1], (list,), "APPENDS").extend(items)
            elif op == pickle.EMPTY_DICT:
                stack.append({})
            elif op in (pickle.DICT, pickle.SETITEMS):
                items = self._pop_mark()
                if len(items) % 2:
                    raise self._error(f"{'DICT' if op == pickle.DICT else 'SETITEMS'} with an odd count")
                target = {} if op == pickle.DICT else self._fill(stack[-1], (dict, OrderedDict), "SETITEMS")
                self._setitems(target, items)
                if op == pickle.DICT:
                    stack.append(target)
            elif op == pickle.SETITEM:
                value, key = stack.pop(), stack.pop()
                self._setitems(self._fill(stack[-1], (dict, OrderedDict), "SETITEM"), [key, value])
            elif op == pickle.EMPTY_SET:
                stack.append(set())
            elif op == pickle.ADDITEMS:
                items = self._pop_mark()
                target = self._fill(stack[-1], (set,), "ADDITEMS")
                self._hashable(target.update, items)
            elif op == pickle.FROZENSET:
                items = self._pop_mark()
                stack.append(self._hashable(frozenset, items))
            # the memo
            elif op in (pickle.BINPUT, pickle.LONG_BINPUT):
                memo[self._uint(1 if op == pickle.BINPUT else 4)] = stack[-1]
            elif op == pickle.MEMOIZE:
                memo[len(memo)] = stack[-1]
            elif op in (pickle.BINGET, pickle.LONG_BINGET):
                index = self._uint(1 if op == pickle.BINGET else 4)
                if index not in memo:
                    raise self._error(f"memo entry {index} is read before it is written")
                stack.append(memo[index])
            # the doors (Note [A pickle that cannot run code])
            elif op == pickle.GLOBAL:
                module = self._line()
                stack.append(self._global(module, self._line()))
            elif op == pickle.STACK_GLOBAL:
                name, module = stack.pop(), stack.pop()
                if type(name) is not str or type(module) is not str:
                    raise self._error("STACK_GLOBAL needs two strings")
                stack.append(self._global(module, name))
            elif op == pickle.REDUCE:
                args = stack.pop()
                stack[-1] = self._call(stack[-1], args, "REDUCE")
            elif op == pickle.NEWOBJ:
                args = stack.pop()
                stack[-1] = self._call(stack[-1], args, "NEWOBJ")
            elif op == pickle.NEWOBJ_EX:
                kwargs, args = stack.pop(), stack.pop()
                if kwargs != {}:
                    raise self._error("NEWOBJ_EX with keyword arguments")
                stack[-1] = self._call(stack[-1], args, "NEWOBJ")
            elif op == pickle.BUILD:
                state = stack.pop()
                self._build(stack[-1], state)
            elif op == pickle.BINPERSID:
                pid = stack.pop()
                if type(pid) is not tuple or not pid or pid[0] != "storage":
                    raise self._error(
                        f"a persistent id must be a ('storage', ...) tuple, got {str(pid)[:80]}"
                    )
                stack.append(self.persistent_load(pid))
            else:
                name = next((n for n in dir(pickle) if getattr(pickle, n) == op and n.isupper()), "unknown")
                raise self._error(f"opcode {name} ({op!r}) is not allowed")

    def _hashable(self, fill: Callable[[Any], Any], items: Any) -> Any:
        try:
            return fill(items)
        except TypeError as e:  # an unhashable key or set item
            raise self._error(f"bad set item or dict key: {e}") from None

    def _setitems(self, target: Any, items: list[Any]) -> None:
        self._hashable(target.update, zip(items[::2], items[1::2], strict=True))


# ---- weights_only=False -----------------------------------------------------------------------------------
class FullUnpickler(pickle.Unpickler):
    """Python's unpickler (it runs whatever the file names), with PyTorch's names mapped to TensorPlay's."""

    def __init__(self, file: Any, persistent_load: Callable[[tuple], Any]) -> None:
        super().__init__(file)
        self._persistent_load = persistent_load
        self._names = torch_names()

    def persistent_load(self, pid: Any) -> Any:
        return self._persistent_load(pid)

    def find_class(self, module: str, name: str) -> Any:
        module = _PY2_MODULES.get(module, module)
        full = f"{module}.{name}"
        if full in self._names:
            return self._names[full]
        if module.split(".")[0] == "torch":
            raise UnpicklingError(
                f"tp.load: GLOBAL {full} is a PyTorch name TensorPlay has no counterpart for"
            )
        return super().find_class(module, name)


__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals"]
