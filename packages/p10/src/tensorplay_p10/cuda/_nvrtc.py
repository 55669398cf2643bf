"""NVRTC, the CUDA run-time compiler, through ctypes: CUDA C++ source in, PTX or CUBIN out.

Where it sits: ``_compiler.py`` compiles the package's ``.cu`` kernels with it on first use. NVRTC needs no
GPU and no CUDA toolkit: its library comes from the ``nvidia-cuda-nvrtc`` wheel (``pip install
tensorplay[cuda]``) or a system CUDA install, found by ``_loader.find_nvrtc()``. Only the handful of entry
points below are used (build-recipes §8 lists them).

Example (needs the NVRTC wheel; no GPU):
    >>> from tensorplay_p10.cuda import _nvrtc
    >>> lib = _nvrtc.Nvrtc()  # doctest: +SKIP
    >>> ptx = lib.compile('extern "C" __global__ void k(float *x) { x[0] = 1; }', "k.cu",
    ...                   ["--gpu-architecture=compute_80"], cubin=False)  # doctest: +SKIP
"""

from __future__ import annotations

import ctypes

from . import _loader


class NvrtcError(RuntimeError):
    """A kernel failed to compile; the message holds NVRTC's log (file, line, error)."""


class Nvrtc:
    """One loaded NVRTC library. ``path`` overrides where it is loaded from (tests give a missing file)."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path if path is not None else _loader.find_nvrtc()
        try:
            self._lib = ctypes.CDLL(self.path)
        except OSError as e:
            raise RuntimeError(
                f"NVRTC could not be loaded from '{self.path}' ({e}). Install it with "
                "`pip install tensorplay-p10[cuda]` (the nvidia-cuda-nvrtc wheel), or set TP_NVRTC_LIBRARY."
            ) from None
        lib = self._lib
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        lib.nvrtcGetErrorString.argtypes = [ctypes.c_int]
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._check(lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
        self.version = (major.value, minor.value)

    def _check(self, status: int, what: str) -> None:
        if status != 0:
            msg = self._lib.nvrtcGetErrorString(status).decode()
            raise RuntimeError(f"NVRTC error in {what}: {msg} (code {status})")

    def supported_archs(self) -> list[int]:
        """The ``sm_XY`` numbers (as XY) this NVRTC can compile for, oldest first."""
        n = ctypes.c_int()
        self._check(self._lib.nvrtcGetNumSupportedArchs(ctypes.byref(n)), "nvrtcGetNumSupportedArchs")
        archs = (ctypes.c_int * n.value)()
        self._check(self._lib.nvrtcGetSupportedArchs(archs), "nvrtcGetSupportedArchs")
        return list(archs)

    def compile(self, source: str, name: str, options: list[str], cubin: bool) -> bytes:
        """Compile ``source``; return CUBIN (``cubin=True``, options name an ``sm_XY``) or NUL-ended PTX."""
        return self.compile_templates(source, name, options, cubin, ())[0]

    def compile_templates(
        self,
        source: str,
        name: str,
        options: list[str],
        cubin: bool,
        expressions: tuple[str, ...] | list[str],
    ) -> tuple[bytes, list[str]]:
        """Compile ``source`` instantiating each name expression (``unary_contig<Exp, float32>``); return the
        image (as ``compile``) and the lowered (mangled) name NVRTC gave each expression, in order."""
        lib = self._lib
        prog = ctypes.c_void_p()
        self._check(
            lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None, None),
            "nvrtcCreateProgram",
        )
        try:
            for e in expressions:
                self._check(lib.nvrtcAddNameExpression(prog, e.encode()), f"nvrtcAddNameExpression({e})")
            opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
            status = lib.nvrtcCompileProgram(prog, len(options), opts)
            if status != 0:
                raise NvrtcError(f"compiling {name} failed ({' '.join(options)}):\n{self._log(prog)}")
            size = ctypes.c_size_t()
            get_size, get = (
                (lib.nvrtcGetCUBINSize, lib.nvrtcGetCUBIN)
                if cubin
                else (lib.nvrtcGetPTXSize, lib.nvrtcGetPTX)
            )
            self._check(get_size(prog, ctypes.byref(size)), "nvrtcGet*Size")
            buf = ctypes.create_string_buffer(size.value)
            self._check(get(prog, buf), "nvrtcGet*")
            lowered = []
            for e in expressions:
                out = ctypes.c_char_p()
                self._check(
                    lib.nvrtcGetLoweredName(prog, e.encode(), ctypes.byref(out)), f"nvrtcGetLoweredName({e})"
                )
                lowered.append(out.value.decode())  # owned by the program: copied before it is destroyed
            return buf.raw, lowered
        finally:
            lib.nvrtcDestroyProgram(ctypes.byref(prog))

    def _log(self, prog: ctypes.c_void_p) -> str:
        size = ctypes.c_size_t()
        self._lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        self._lib.nvrtcGetProgramLog(prog, buf)
        return buf.value.decode(errors="replace")
