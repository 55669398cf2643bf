"""Registered ops that the op database does not cover, each with its reason.

test_opdb.py keeps this list honest: a registered op missing from both the database and this list fails
``test_every_registered_op_is_in_the_database``, and so does an entry here that gained an OpInfo or is no
longer registered. Add an OpInfo rather than a line here whenever the op has deterministic values.
"""

_RANDOM = "random values: test_random.py checks the distributions and generator streams, not a reference"

_NORM_BACKWARD = "gradients not asked for come back as None: test_norm_backward.py has float64 references"

KNOWN_UNCOVERED: dict[str, str] = {
    "empty": "values are uninitialised; shape/dtype/device checked in test_factories.py",
    "empty_strided": "values are uninitialised; shape/stride checked in test_factories.py",
    "_set_gemm_blas": "switches between the BLAS and reference GEMM (tests, benchmarks): not a tensor op",
    "uniform_": _RANDOM,
    "normal_": _RANDOM,
    "random_": _RANDOM,
    "cauchy_": _RANDOM,
    "log_normal_": _RANDOM,
    "exponential_": _RANDOM,
    "geometric_": _RANDOM,
    "bernoulli_": _RANDOM,
    "bernoulli": _RANDOM,
    "randperm": _RANDOM,
    "multinomial": _RANDOM,
    "native_dropout": _RANDOM + " (dropout's p=0 and eval paths are in the database)",
    "poisson": _RANDOM,
    "layer_norm_backward": _NORM_BACKWARD,
    "rms_norm_backward": _NORM_BACKWARD,
    "scaled_dot_product_attention_backward": "three gradients: test_attention_backward.py has the references",
    "delta_rule_backward": "six gradients, some None: test_delta_rule.py checks them against NumPy",
    "_rrelu_with_noise": "rrelu's random slopes: test_activation.py (rrelu's eval mode is in the database)",
}
