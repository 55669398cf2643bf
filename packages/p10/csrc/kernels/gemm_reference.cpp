// gemm_reference.cpp — the readable blocked GEMM: C = alpha * A @ B + beta * C on strided matrices.
//
// Where it sits: called by gemm_batched (blas.cpp) for dtypes BLAS has no routine for (integers, float16,
// bfloat16) and when BLAS is switched off; tests check it against float64 NumPy and the BLAS path against it.
//
// Note [Blocked GEMM]
//   The textbook triple loop reads B column by column, missing the cache on every step. Here C is computed in
//   tiles of kMc x kNc. For each tile, the k-loop runs in panels of kKc: the panel of A (kMc x kKc) and of B
//   (kKc x kNc) are first copied ("packed") into small dense buffers in the accumulator type, whatever the
//   strides of A and B were, so the inner loop
//       acc[i][j] += a[i][p] * b[p][j]        (j innermost, unit stride: the compiler vectorises it)
//   only touches data that stays in L1/L2. After the last panel the tile is written back as alpha*acc+beta*C.
//   Row tiles are independent and run in parallel. Edge tiles (sizes not multiples of the block) simply use
//   the smaller extents; the tests use sizes 1, 7, 33, 65, 129 to cross every edge.
#include <algorithm>
#include <vector>

#include "kernels/blas.h"
#include "kernels/cast.h"
#include "loop/parallel.h"

namespace tp::p10 {

namespace {
constexpr int64_t kMc = 64, kNc = 256, kKc = 128;

// Integers accumulate in int64_t: wrap-around is then well defined and equals PyTorch's result mod 2^bits.
template <typename T> struct GemmAcc { using type = opmath_t<T>; };
template <typename T> requires std::is_integral_v<T> struct GemmAcc<T> { using type = int64_t; };
}  // namespace

template <typename T>
void gemm_reference(int64_t m, int64_t n, int64_t k, const Scalar &alpha, MatRef<const T> a, MatRef<const T> b,
                    const Scalar &beta, MatRef<T> c) {
  using Acc = typename GemmAcc<T>::type;
  const Acc al = alpha.to<Acc>(), be = beta.to<Acc>();
  const bool read_c = beta.to_complex() != std::complex<double>(0);
  const int64_t row_tiles = (m + kMc - 1) / kMc;
  // One task per row tile; a tile is worth threading when it holds enough multiply-adds.
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, kMc * n * std::max<int64_t>(k, 1)));
  parallel_for(0, row_tiles, grain, [&](int64_t t0, int64_t t1) {
    std::vector<Acc> pa(kMc * kKc), pb(kKc * kNc), acc(kMc * kNc);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t i0 = t * kMc, mc = std::min(kMc, m - i0);
      for (int64_t j0 = 0; j0 < n; j0 += kNc) {
        const int64_t nc = std::min(kNc, n - j0);
        std::fill(acc.begin(), acc.begin() + mc * nc, Acc(0));
        for (int64_t p0 = 0; p0 < k; p0 += kKc) {
          const int64_t kc = std::min(kKc, k - p0);
          for (int64_t i = 0; i < mc; ++i)  // pack A's panel, row-major mc x kc
            for (int64_t p = 0; p < kc; ++p) pa[i * kc + p] = Acc(a.data[(i0 + i) * a.rs + (p0 + p) * a.cs]);
          for (int64_t p = 0; p < kc; ++p)  // pack B's panel, row-major kc x nc
            for (int64_t j = 0; j < nc; ++j) pb[p * nc + j] = Acc(b.data[(p0 + p) * b.rs + (j0 + j) * b.cs]);
          for (int64_t i = 0; i < mc; ++i) {
            Acc *acc_row = &acc[i * nc];
            for (int64_t p = 0; p < kc; ++p) {
              const Acc aip = pa[i * kc + p];
              const Acc *b_row = &pb[p * nc];
              for (int64_t j = 0; j < nc; ++j) acc_row[j] += aip * b_row[j];
            }
          }
        }
        for (int64_t i = 0; i < mc; ++i) {  // write back: C = alpha * acc + beta * C
          for (int64_t j = 0; j < nc; ++j) {
            T &out = c.data[(i0 + i) * c.rs + (j0 + j) * c.cs];
            Acc v = al * acc[i * nc + j];
            if (read_c) v += be * Acc(out);
            out = cast_value<T>(v);
          }
        }
      }
    }
  });
}

#define TP_GEMM_REFERENCE(T)                                                                                  \
  template void gemm_reference<T>(int64_t, int64_t, int64_t, const Scalar &, MatRef<const T>, MatRef<const T>, \
                                  const Scalar &, MatRef<T>);
TP_GEMM_REFERENCE(uint8_t)
TP_GEMM_REFERENCE(int8_t)
TP_GEMM_REFERENCE(int16_t)
TP_GEMM_REFERENCE(int32_t)
TP_GEMM_REFERENCE(int64_t)
TP_GEMM_REFERENCE(Half)
TP_GEMM_REFERENCE(BFloat16)
TP_GEMM_REFERENCE(float)
TP_GEMM_REFERENCE(double)
TP_GEMM_REFERENCE(complex64)
TP_GEMM_REFERENCE(complex128)
#undef TP_GEMM_REFERENCE

}  // namespace tp::p10
