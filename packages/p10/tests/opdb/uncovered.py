"""Registered ops that the op database does not cover, each with its reason.

test_opdb.py keeps this list honest: a registered op missing from both the database and this list fails
``test_every_registered_op_is_in_the_database``, and so does an entry here that gained an OpInfo or is no
longer registered. Add an OpInfo rather than a line here whenever the op has deterministic values.
"""

_RANDOM = "random values: test_random.py checks the distributions and generator streams, not a reference"

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
}


# Ops added in the same change as this database: each has its own NumPy-referenced test file; an OpInfo
# entry is owed (the ops' samples there are the model for it).
_OWN_FILE = "checked against NumPy in its own test file ({}); OpInfo entry pending"

KNOWN_UNCOVERED.update(
    {
        "cholesky": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "cholesky_inverse": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "cholesky_solve": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "det": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "inverse": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_cholesky": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_cholesky_ex": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_det": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_eigh": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_eigvalsh": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_inv": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_inv_ex": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_lstsq": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_matrix_norm": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_matrix_power": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_matrix_rank": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_norm": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_pinv": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_qr": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_slogdet": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_solve": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_solve_ex": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_svd": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_svdvals": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "linalg_vector_norm": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "logdet": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "matrix_power": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "pinverse": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "qr": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "slogdet": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "svd": _OWN_FILE.format("test_linalg.py / test_linalg_spectral.py"),
        "poisson": _RANDOM,
    }
)
