"""The dispatcher: Python-defined ops, kernels per key, fallthrough, Composite, errors, explain, tp.ops."""

import os
import subprocess
import sys

import pytest

import tensorplay_p10 as tp

lib = tp.library.Library("disp_test")
lib.define("scale(Tensor x, float factor=2.0) -> Tensor")
lib.impl("scale", lambda x, factor: x * factor, "CPU")
lib.define("only_cpu(Tensor x) -> Tensor")
lib.impl("only_cpu", lambda x: x + 1, "CPU")
lib.define("decomposed(Tensor x) -> Tensor")
lib.impl("decomposed", lambda x: x * 3, "Composite")
lib.define("two(Tensor x) -> (Tensor, Tensor)")
lib.impl("two", lambda x: (x + 1, x - 1), "CPU")


def test_python_defined_op_runs():
    assert tp.ops.disp_test.scale(tp.ones(2)).tolist() == [2.0, 2.0]
    assert tp.ops.call("disp_test::scale", tp.ones(2), factor=0.5).tolist() == [0.5, 0.5]
    a, b = tp.ops.disp_test.two(tp.zeros(1))
    assert (a.item(), b.item()) == (1.0, -1.0)


def test_missing_kernel_names_op_key_and_available_keys():
    with pytest.raises(NotImplementedError) as e:
        tp.ops.disp_test.only_cpu(tp.zeros(2, device="meta"))
    msg = str(e.value)
    assert "disp_test::only_cpu" in msg and "'Meta'" in msg and "[CPU]" in msg


def test_composite_serves_every_backend():
    assert tp.ops.disp_test.decomposed(tp.ones(1)).item() == 3.0
    assert tp.ops.disp_test.decomposed(tp.ones(2, device="meta")).shape == (2,)


def test_bad_arguments_raise_type_error_with_schema():
    with pytest.raises(TypeError, match="scale\\(Tensor x, float factor=2.0\\)"):
        tp.ops.disp_test.scale("nope")
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        tp.ops.disp_test.scale(tp.ones(1), bogus=1)


def test_bad_schema_and_duplicate_definition():
    with pytest.raises(ValueError, match="invalid op schema"):
        lib.define("broken(Tensor x -> Tensor")
    with pytest.raises(ValueError, match="unknown type"):
        lib.define("broken2(Tensoor x) -> Tensor")
    with pytest.raises(ValueError, match="already defined"):
        lib.define("scale(Tensor x, float factor=2.0) -> Tensor")
    with pytest.raises(ValueError, match="unknown dispatch key"):
        lib.impl("scale", lambda x, f: x, "GPU")


def test_wrapper_key_falls_through_and_redispatches():
    calls = []
    wlib = tp.library.Library("disp_wrap")
    wlib.define("ident(Tensor x) -> Tensor")
    wlib.impl("ident", lambda x: x + 0, "CPU")

    def tracer(x):
        calls.append("Tracer")
        return tp.library.redispatch("disp_wrap::ident", "Tracer", x)

    wlib.impl("ident", tracer, "Tracer")
    x = tp.ones(2)
    tp.ops.disp_wrap.ident(x)
    assert calls == []  # Tracer is not in the key set unless included
    with tp.library.include_keys("Tracer"):
        y = tp.ops.disp_wrap.ident(x)
        tp.neg(x)  # no Tracer kernel for neg: falls through to CPU
    assert calls == ["Tracer"] and y.tolist() == [1.0, 1.0]
    with tp.library.include_keys("Tracer"), tp.library.exclude_keys("Tracer"):
        tp.ops.disp_wrap.ident(x)
    assert calls == ["Tracer"]


def test_explain_reports_keys_and_kernel_source():
    x = tp.ones(2)
    report = tp.explain(lambda: (x + 1).reshape(2, 1), quiet=True)
    ops = [r.op for r in report]
    assert ops[0] == "add" and "reshape" in ops and "view" in ops
    add = report[0]
    assert (
        add.keys == "{CPU}"
        and add.ran == "CPU"
        and add.source.startswith("packages/p10/csrc/kernels/binary.cpp:")
    )
    reshape = next(r for r in report if r.op == "reshape")
    view = next(r for r in report if r.op == "view")
    assert reshape.ran == "CPU -> Composite" and view.depth == reshape.depth + 1
    # Python calls are boxed; reshape's own C++ call of view takes the typed shortcut (Note [Unboxed calls])
    assert not add.unboxed and not reshape.unboxed and view.unboxed
    path, line = add.source.rsplit(":", 1)
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    src = open(os.path.join(repo, path)).read().splitlines()
    assert '"add"' in src[int(line) - 1]
    assert str(report).splitlines()[0].startswith("add")


def test_trace_dispatch_env_prints(tmp_path):
    code = "import tensorplay_p10 as tp; tp.ones(2) * 3"
    r = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "TP_TRACE_DISPATCH": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert "[dispatch] mul" in r.stderr and "binary.cpp" in r.stderr


def test_ops_table():
    entries = {d["name"]: d for d in tp.ops.list()}
    assert {"add", "add_", "add.out", "view", "empty", "uniform_"} <= set(entries)
    # tpx (when imported in the same process) adds an Autograd kernel
    assert set(entries["add"]["kernels"]) - {"Autograd"} == {"CPU", "CUDA", "Meta"}
    assert entries["view"]["kernels"].keys() - {"Autograd"} == {"AnyBackend"}
    assert "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" == entries["add"]["schema"]
    assert "add" in tp.ops.table()


def test_every_cpu_op_runs_on_meta():
    """Every built-in op with a CPU kernel runs on meta too (its own Meta, AnyBackend or Composite kernel)."""
    missing = [
        d["name"]
        for d in tp.ops.list()
        if "::" not in d["name"]  # ops defined by tests and users choose their own keys
        and "CPU" in d["kernels"]
        and not {"Meta", "AnyBackend", "Composite"} & set(d["kernels"])
    ]
    assert missing == []


def test_ops_are_functions_and_methods():
    # Note [Ops as functions and methods]: an op defined from Python is reachable both ways without a wrapper
    x = tp.ones(3)
    assert tp.ops.disp_test.scale(x).tolist() == [2.0] * 3
    assert tp.fill_(tp.empty(2), 3).tolist() == [3.0, 3.0]  # built-in op without a hand-written wrapper
    assert x.unfold(0, 2, 1).shape == (2, 2)
    assert tp.alias(x)._shares_storage(x)
    assert not hasattr(x, "empty")  # first argument is not `Tensor self`: a function, not a method
    assert not hasattr(x, "no_such_op") and not hasattr(tp, "no_such_op")
    with pytest.raises(AttributeError, match="'Tensor' object has no attribute 'no_such_op'"):
        x.no_such_op()


def test_named_results_come_back_as_named_tuples():
    nlib = tp.library.Library("disp_named")
    nlib.define("split_sign(Tensor x) -> (Tensor values, Tensor indices)")
    nlib.impl("split_sign", lambda x: (x.abs(), x * 0), "CPU")
    r = tp.ops.disp_named.split_sign(tp.tensor([-1.0, 2.0]))
    values, indices = r
    assert r.values is values and r.indices is indices and r[0] is values
    assert values.tolist() == [1.0, 2.0]
    assert repr(r).startswith("tensorplay.return_types.split_sign(values=tensor([1., 2.]), indices=")
    a, b = tp.ops.disp_test.two(tp.zeros(1))  # unnamed results stay a plain tuple
    assert type(tp.ops.disp_test.two(tp.zeros(1))) is tuple


def test_which_ops_are_methods():
    x = tp.tensor([1.0, 2.0])
    assert x.pow(2).tolist() == [1.0, 4.0]  # pow has a Scalar-first overload too; the Tensor-self one binds
    # where's first argument is the condition: Tensor.where is hand-written with self as the input
    assert x.where(tp.tensor([True, False]), 0.0).tolist() == [1.0, 0.0]
    assert tp.ops._first_arg_is_tensor_self("add_(Tensor(a!) self, Tensor other) -> Tensor(a!)")
    assert not tp.ops._first_arg_is_tensor_self(
        "where(Tensor condition, Tensor self, Tensor other) -> Tensor"
    )
    assert not tp.ops._first_arg_is_tensor_self("pow.Scalar(Scalar self, Tensor exponent) -> Tensor")
