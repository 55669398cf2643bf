#!/usr/bin/env python3
"""record_rng_reference.py — record PyTorch's CPU random streams as exact reference values for TensorPlay.

Where it sits: TensorPlay's CPU generator (packages/p10/csrc/random/) promises to reproduce PyTorch's CPU
random numbers bit for bit. This script runs the same calls in PyTorch and writes every output, as raw
bytes, plus a hash of the generator state after each call, to packages/p10/tests/data/rng_reference.json.
The tests compare TensorPlay against that file, so they need no PyTorch. PyTorch is a tool here, never a
dependency: run this by hand with an interpreter that has torch, e.g.

    .venv/bin/python tools/record_rng_reference.py            # writes the JSON
    .venv/bin/python tools/record_rng_reference.py --check    # exits 1 if the file would change

JSON schema (version 1):
  {
    "schema": 1,
    "torch_version": "2.13.0+cpu", "cpu_capability": "AVX2",   # see "notes"
    "default_seed": 67280421310721,
    "default_state_sha256": sha256 of torch.Generator().get_state() bytes,
    "notes": [...],
    "inputs": {name: TENSOR, ...},                             # probabilities for bernoulli / multinomial
    "cases": [
      {"name": "randn/float32/n=17/seed=0",
       "seed": 0,                                              # manual_seed(seed) on a fresh generator first
       "calls": [CALL, ...]}                                   # run in order on that ONE generator
    ],
    "states": [{"seed": s, "after": [CALL, ...], "state_hex": 5056 bytes as hex}]   # full get_rng_state bytes
  }
  CALL   = {"op": str, "args": [...], "size": [...] | null, "dtype": str | null, "input": str | null,
            "out": TENSOR, "state_sha256": sha256 of get_rng_state() bytes after the call}
  TENSOR = {"dtype": str, "shape": [...], "hex": little-endian raw bytes}  (or "sha256" instead of "hex"
           for large outputs: the sha256 of those raw bytes)
  dtype names are TensorPlay's (float32, int64, bool, ...). `op` and `args` spell the PyTorch call:
    rand/randn(*size, dtype)                 randint(args[0], args[1], size, dtype)   randperm(args[0])
    normal(args[0], args[1], size)           bernoulli(inputs[input])
    multinomial(inputs[input], *args)
    <method>_(*args) on torch.empty(size, dtype) for uniform_, normal_, random_, exponential_, cauchy_,
    log_normal_, geometric_, bernoulli_ (args[0] may be the name of an input when "input" is set).
"""

import argparse
import hashlib
import json
import os
import sys

OUT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "packages", "p10", "tests", "data", "rng_reference.json"
)
HEX_LIMIT = 2048  # outputs larger than this many bytes are stored as a sha256 to keep the file small


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 if the recorded file differs")
    ap.add_argument("--out", default=OUT)
    opts = ap.parse_args()
    try:
        import torch
    except ImportError:
        print(
            "record_rng_reference.py needs PyTorch (it records PyTorch's streams); it is not installed here."
        )
        return 2
    import warnings

    with warnings.catch_warnings():  # torch warns about float randint ranges beyond 2^mantissa; we mean it
        warnings.simplefilter("ignore")
        doc = Recorder(torch).run()
    text = json.dumps(doc, indent=1) + "\n"
    path = os.path.normpath(opts.out)
    if opts.check:
        same = os.path.exists(path) and open(path).read() == text
        print("up to date" if same else f"{path} differs from what torch {torch.__version__} produces")
        return 0 if same else 1
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path}: {len(doc['cases'])} cases, {len(text) // 1024} KiB")
    return 0


class Recorder:
    def __init__(self, torch):
        self.torch = torch
        t = torch
        self.dtypes = {
            "bool": t.bool,
            "uint8": t.uint8,
            "int8": t.int8,
            "int16": t.int16,
            "int32": t.int32,
            "int64": t.int64,
            "float16": t.float16,
            "bfloat16": t.bfloat16,
            "float32": t.float32,
            "float64": t.float64,
        }
        self.names = {v: k for k, v in self.dtypes.items()}
        self.inputs = {}
        self.cases = []

    # ---- encoding ----
    def raw(self, x):
        return x.contiguous().view(self.torch.uint8).numpy().tobytes() if x.numel() else b""

    def tensor(self, x):
        b = self.raw(x)
        enc = {"dtype": self.names[x.dtype], "shape": list(x.shape)}
        if len(b) > HEX_LIMIT:
            enc["sha256"] = hashlib.sha256(b).hexdigest()
        else:
            enc["hex"] = b.hex()
        return enc

    def state_sha(self, g):
        return hashlib.sha256(g.get_state().numpy().tobytes()).hexdigest()

    def add_input(self, name, x):
        self.inputs[name] = {"dtype": self.names[x.dtype], "shape": list(x.shape), "hex": self.raw(x).hex()}
        return x

    # ---- running one call spec ----
    def run_call(self, g, spec):
        t = self.torch
        op, args = spec["op"], list(spec.get("args", []))
        size = spec.get("size")
        dt = self.dtypes[spec["dtype"]] if spec.get("dtype") else None
        inp = self.input_tensor(spec["input"]) if spec.get("input") else None
        if op in ("rand", "randn"):
            out = getattr(t, op)(*size, dtype=dt, generator=g)
        elif op == "randint":
            out = t.randint(args[0], args[1], tuple(size), dtype=dt, generator=g)
        elif op == "randperm":
            out = t.randperm(args[0], generator=g)
        elif op == "normal":
            out = t.normal(args[0], args[1], size=tuple(size), generator=g)
        elif op == "bernoulli":
            out = t.bernoulli(inp, generator=g)
        elif op == "multinomial":
            out = t.multinomial(inp, args[0], args[1], generator=g)
        elif op.endswith("_"):
            out = t.empty(*size, dtype=dt)
            call_args = [inp] if (inp is not None and op == "bernoulli_") else args
            getattr(out, op)(*call_args, generator=g)
        else:
            raise ValueError(op)
        rec = {"op": op, "args": args, "size": size, "dtype": spec.get("dtype"), "input": spec.get("input")}
        rec["out"] = self.tensor(out)
        rec["state_sha256"] = self.state_sha(g)
        return rec

    def input_tensor(self, name):
        e = self.inputs[name]
        b = bytearray(bytes.fromhex(e["hex"]))
        return self.torch.frombuffer(b, dtype=self.dtypes[e["dtype"]]).reshape(e["shape"]).clone()

    def case(self, name, seed, specs):
        g = self.torch.Generator()
        g.manual_seed(seed)
        self.cases.append({"name": name, "seed": seed, "calls": [self.run_call(g, s) for s in specs]})

    # ---- the case list ----
    def run(self):
        t = self.torch
        src = t.Generator().manual_seed(20240601)  # inputs come from their own generator
        self.add_input("probs_f32_100", t.rand(100, generator=src))
        self.add_input("probs_f64_100", t.rand(100, generator=src, dtype=t.float64))
        self.add_input("probs_f16_64", t.rand(64, generator=src).half())
        p = t.rand(4, 12, generator=src)
        p[1, :5] = 0  # zero-probability categories: exercises topk's order among equal keys
        self.add_input("weights_f32_4x12", p)
        self.add_input("weights_f64_30", t.rand(30, generator=src, dtype=t.float64) ** 3)

        SIZES = [1, 7, 15, 16, 17, 33, 100, 1000]
        for fn in ("rand", "randn"):
            for dt in ("float32", "float64"):
                for n in SIZES:
                    for seed in (0, 42) if n in (16, 17, 1000) else (0,):
                        self.case(
                            f"{fn}/{dt}/n={n}/seed={seed}", seed, [{"op": fn, "size": [n], "dtype": dt}]
                        )
            for dt in ("float16", "bfloat16"):
                for n in (7, 16, 17, 40):
                    self.case(f"{fn}/{dt}/n={n}/seed=3", 3, [{"op": fn, "size": [n], "dtype": dt}])
        self.case("randn/float32/n=100003/seed=7", 7, [{"op": "randn", "size": [100003], "dtype": "float32"}])
        for dt in ("float32", "float64", "float16", "bfloat16"):
            for n in (5, 100):
                self.case(
                    f"uniform_/{dt}/n={n}",
                    11,
                    [{"op": "uniform_", "args": [-3.7, 11.3], "size": [n], "dtype": dt}],
                )
            self.case(
                f"uniform_/{dt}/rounds-to-to",
                11,
                [{"op": "uniform_", "args": [1024.0, 1025.0], "size": [64], "dtype": dt}],
            )
            for n in (9, 16, 50):
                self.case(
                    f"normal_/{dt}/n={n}",
                    5,
                    [{"op": "normal_", "args": [1.5, 0.3], "size": [n], "dtype": dt}],
                )
        self.case(
            "normal/mean,std,size",
            8,
            [
                {"op": "normal", "args": [2.0, 3.0], "size": [20]},
                {"op": "normal", "args": [-1.0, 0.5], "size": [3]},
            ],
        )

        RANGES = [(0, 10), (-5, 5), (0, 2), (3, 100)]
        for dt in ("int64", "int32", "int16", "int8", "uint8", "float32", "float64", "float16", "bfloat16"):
            ranges = [r for r in RANGES if r[0] >= 0] + [(0, 256)] if dt == "uint8" else RANGES
            self.case(
                f"randint/{dt}",
                1,
                [{"op": "randint", "args": list(r), "size": [40], "dtype": dt} for r in ranges],
            )
            self.case(f"random_/{dt}", 2, [{"op": "random_", "size": [40], "dtype": dt}])
        self.case("randint/bool", 1, [{"op": "randint", "args": [0, 2], "size": [40], "dtype": "bool"}])
        self.case("random_/bool", 2, [{"op": "random_", "size": [40], "dtype": "bool"}])
        BIG = [
            (0, 2**28 - 1),
            (0, 2**28),
            (0, 2**31),
            (0, 2**32 - 1),
            (0, 2**32),
            (-(2**40), 2**40),
            (0, 2**62),
            (-(2**63), 2**63 - 1),
        ]
        self.case(
            "randint/int64/wide ranges",
            4,
            [{"op": "randint", "args": list(r), "size": [16], "dtype": "int64"} for r in BIG],
        )
        self.case(
            "randint/int32/wide ranges",
            4,
            [{"op": "randint", "args": list(r), "size": [16], "dtype": "int32"} for r in BIG[:3]],
        )
        for dt in ("float32", "float64"):
            self.case(
                f"randint/{dt}/wide ranges",
                4,
                [{"op": "randint", "args": list(r), "size": [16], "dtype": dt} for r in BIG[:6]],
            )
        self.case(
            "random_/int64/full 64-bit range",
            6,
            [{"op": "random_", "args": [-(2**63), None], "size": [16], "dtype": "int64"}],
        )

        for n in (0, 1, 2, 5, 16, 100, 1000, 50000):
            self.case(f"randperm/n={n}", 9, [{"op": "randperm", "args": [n]}])

        for dt in ("float32", "float64", "bool", "int64", "uint8", "float16"):
            self.case(
                f"bernoulli_/p=0.3/{dt}",
                12,
                [{"op": "bernoulli_", "args": [0.3], "size": [100], "dtype": dt}],
            )
        self.case(
            "bernoulli_/p=0,1",
            12,
            [
                {"op": "bernoulli_", "args": [0.0], "size": [10], "dtype": "float32"},
                {"op": "bernoulli_", "args": [1.0], "size": [10], "dtype": "float32"},
            ],
        )
        for name in ("probs_f32_100", "probs_f64_100", "probs_f16_64"):
            self.case(f"bernoulli/{name}", 13, [{"op": "bernoulli", "input": name}])
            self.case(
                f"bernoulli_/{name}/into int32",
                13,
                [{"op": "bernoulli_", "input": name, "size": self.inputs[name]["shape"], "dtype": "int32"}],
            )

        for dt in ("float32", "float64", "float16", "bfloat16"):
            self.case(
                f"exponential_/{dt}", 14, [{"op": "exponential_", "args": [2.5], "size": [100], "dtype": dt}]
            )
            self.case(
                f"cauchy_/{dt}", 15, [{"op": "cauchy_", "args": [0.5, 2.0], "size": [100], "dtype": dt}]
            )
            self.case(
                f"log_normal_/{dt}",
                16,
                [{"op": "log_normal_", "args": [0.5, 0.75], "size": [25], "dtype": dt}],
            )
        for dt in ("float32", "float64", "int64", "int32"):
            self.case(
                f"geometric_/{dt}",
                17,
                [
                    {"op": "geometric_", "args": [0.3], "size": [100], "dtype": dt},
                    {"op": "geometric_", "args": [0.001], "size": [20], "dtype": dt},
                ],
            )

        for name in ("weights_f32_4x12", "weights_f64_30"):
            for ns, repl in ((1, False), (1, True), (4, False), (12, False), (3, True), (40, True)):
                self.case(
                    f"multinomial/{name}/n={ns}/replacement={repl}",
                    18,
                    [{"op": "multinomial", "input": name, "args": [ns, repl]}],
                )

        mixed = [
            {"op": "randn", "size": [3], "dtype": "float32"},  # leaves a cached double normal
            {"op": "rand", "size": [5], "dtype": "float32"},
            {"op": "randn", "size": [1], "dtype": "float64"},  # consumes the cached sample
            {"op": "randn", "size": [20], "dtype": "float32"},  # chunked path: ignores the cache
            {"op": "randint", "args": [0, 100], "size": [7], "dtype": "int64"},
            {"op": "log_normal_", "args": [0.0, 1.0], "size": [3], "dtype": "float64"},
            {"op": "randperm", "args": [10]},
            {"op": "bernoulli_", "args": [0.5], "size": [9], "dtype": "float32"},
            {"op": "multinomial", "input": "weights_f64_30", "args": [5, True]},
            {"op": "exponential_", "args": [1.0], "size": [4], "dtype": "float32"},
            {"op": "normal_", "args": [0.0, 2.0], "size": [17], "dtype": "float64"},
            {"op": "randn", "size": [1], "dtype": "float32"},
        ]
        self.case("mixed sequence on one generator", 2024, mixed)
        self.case(
            "mixed sequence, 624-word block boundary",
            1,
            [{"op": "rand", "size": [620], "dtype": "float32"}] + mixed,
        )

        states = []
        for seed, after in (
            (5, [{"op": "randn", "size": [1], "dtype": "float64"}]),
            (67280421310721, [{"op": "rand", "size": [700], "dtype": "float32"}]),
        ):
            g = t.Generator().manual_seed(seed)
            calls = [self.run_call(g, s) for s in after]
            states.append({"seed": seed, "after": calls, "state_hex": g.get_state().numpy().tobytes().hex()})

        return {
            "schema": 1,
            "torch_version": t.__version__,
            "cpu_capability": t.backends.cpu.get_cpu_capability(),
            "default_seed": t.Generator().initial_seed(),
            "default_state_sha256": self.state_sha(t.Generator()),
            "notes": [
                "float32 normal_/randn with n >= 16 (and float16/bfloat16, which run that kernel) depend on "
                "the CPU capability torch used: AVX2 vectorised log/sincos vs libm. Values here are for "
                '"cpu_capability"; TensorPlay picks the same block as torch on the machine it runs on.',
                "The scalar float functions call the C library (log, log1p, sin, cos, tan, exp); values were "
                "recorded with this machine's glibc and may differ in the last bit on another libm.",
                "Generator states are compared by sha256 of the 5056-byte torch.get_rng_state() layout.",
            ],
            "inputs": self.inputs,
            "cases": self.cases,
            "states": states,
        }


if __name__ == "__main__":
    sys.exit(main())
