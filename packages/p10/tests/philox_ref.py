"""A pure-Python Philox4x32-10 and the CUDA random fills' element -> counter mapping, for the tests.

Where it sits: the reference that test_cuda_random_kernels.py checks against Random123's known answers (no
GPU) and that test_cuda_random.py compares the device's values with, bit for bit (Note [Philox streams] in
tensorplay_p10/cuda_kernels/philox.cuh: element i of a draw takes block offset + i // E).
"""

from __future__ import annotations

MASK = 0xFFFFFFFF


def philox4x32_10(counter: list[int], key: list[int]) -> list[int]:
    """Random123's philox4x32_10: four 32-bit counter words and two key words -> four words."""
    c = list(counter)
    k0, k1 = key
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & MASK, (k1 + 0xBB67AE85) & MASK
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & MASK, (p0 >> 32) ^ c[3] ^ k1, p0 & MASK]
    return c


def block(seed: int, index: int) -> list[int]:
    """The four words of Philox block ``index`` under ``seed`` (counter = the 64-bit block number)."""
    return philox4x32_10([index & MASK, index >> 32, 0, 0], [seed & MASK, seed >> 32])


def uniform_float32(seed: int, offset: int, n: int) -> list[float]:
    """``tp.rand(n, device="cuda")`` after the generator reached (seed, offset): 24-bit floats in [0, 1)."""
    out = []
    for b in range((n + 3) // 4):
        out += [(w >> 8) * 2.0**-24 for w in block(seed, offset + b)]
    return out[:n]
