// random.cu — random fills on the device: uniform_, normal_, log_normal_, exponential_, cauchy_, geometric_,
// bernoulli_ (a number or a tensor of probabilities), random_, poisson, rrelu's slopes (_rrelu_with_noise), and
// the pieces of randperm and multinomial.
//
// Where it sits: launched by csrc/cuda/ops_random.cpp, which checks the arguments (the CPU's rules), takes
// (seed, offset) from the device's generator (csrc/cuda/philox.h) and advances it. Every value comes from
// Philox4x32-10 keyed by the seed, with the element's logical index picking the counter (Note [Philox streams]
// in philox.cuh), so results do not depend on the launch configuration.
//
// Entry points of the fills, per dtype T:
//   <dist>_<T>(n, g, contig, out, philox, p0, p1)   element i at out[i] (contig) or at Geometry g's offset
//   random_u32_<T> / random_u64_<T>(n, g, contig, out, philox, from, range)
//   bernoulli_tensor_<T>_<P>(n, g, contig, out, philox, probs)   probs: n values of P, in logical order
// Arithmetic runs in float for every dtype but float64 (double): 16-bit outputs are float draws rounded.
#include "common.cuh"
#include "philox.cuh"

// ---- one name for the float and double versions of each math function --------------------------------------
#define TP_MATH(name, f32, f64)                                                                             \
  __device__ __forceinline__ float name(float x) { return f32(x); }                                         \
  __device__ __forceinline__ double name(double x) { return f64(x); }
TP_MATH(m_log, logf, log)
TP_MATH(m_exp, expf, exp)
TP_MATH(m_sqrt, sqrtf, sqrt)
TP_MATH(m_sin, sinf, sin)
TP_MATH(m_cos, cosf, cos)
TP_MATH(m_tan, tanf, tan)
TP_MATH(m_ceil, ceilf, ceil)

__device__ __forceinline__ unsigned word(const Philox4 &r, int j) {
  return j == 0 ? r.x : (j == 1 ? r.y : (j == 2 ? r.z : r.w));
}

// ---- uniforms per Philox block: four floats from 24 bits each, or two doubles from 53 bits each -----------
template <typename A> struct Draw;
template <> struct Draw<float> {
  static const int E = 4;
  __device__ static void closed0(const Philox4 &r, float *u) {  // [0, 1)
    u[0] = u24(r.x), u[1] = u24(r.y), u[2] = u24(r.z), u[3] = u24(r.w);
  }
  __device__ static void open0(const Philox4 &r, float *u) {  // (0, 1]
    u[0] = u24_open0(r.x), u[1] = u24_open0(r.y), u[2] = u24_open0(r.z), u[3] = u24_open0(r.w);
  }
};
template <> struct Draw<double> {
  static const int E = 2;
  __device__ static void closed0(const Philox4 &r, double *u) { u[0] = u53(r.x, r.y), u[1] = u53(r.z, r.w); }
  __device__ static void open0(const Philox4 &r, double *u) {
    u[0] = u53_open0(r.x, r.y), u[1] = u53_open0(r.z, r.w);
  }
};

// ---- the distributions: E values of type A from one block; p0, p1 are the op's numbers --------------------
// from + u (to - from) rounded to T; a value that rounds up to `to` becomes `from` (the CPU's rule: [from, to)).
template <typename T> struct Uniform {  // p0 = from, p1 = to
  typedef typename OpMath<T>::type A;
  static const int E = Draw<A>::E;
  A from, range, from_t, to_t;
  __device__ Uniform(double p0, double p1)
      : from(A(p0)), range(A(p1) - A(p0)), from_t(load(store<T>(A(p0)))), to_t(load(store<T>(A(p1)))) {}
  __device__ void operator()(const Philox4 &r, A *v) const {
    A u[E];
    Draw<A>::closed0(r, u);
    for (int j = 0; j < E; ++j) {
      const A w = load(store<T>(u[j] * range + from));
      v[j] = w == to_t ? from_t : w;
    }
  }
};

// Box-Muller on pairs of uniforms: (u1, u2) -> sqrt(-2 log u1) (cos 2 pi u2, sin 2 pi u2). Log: exp of it.
template <typename A_, bool Log> struct Normal {  // p0 = mean, p1 = std
  typedef A_ A;
  static const int E = Draw<A>::E;
  A mean, std;
  __device__ Normal(double p0, double p1) : mean(A(p0)), std(A(p1)) {}
  __device__ void operator()(const Philox4 &r, A *v) const {
    A u[E];
    Draw<A>::open0(r, u);
    for (int j = 0; j < E; j += 2) {
      const A rad = m_sqrt(A(-2) * m_log(u[j])), theta = A(6.283185307179586) * u[j + 1];
      v[j] = mean + std * rad * m_cos(theta);
      v[j + 1] = mean + std * rad * m_sin(theta);
      if (Log) v[j] = m_exp(v[j]), v[j + 1] = m_exp(v[j + 1]);
    }
  }
};

template <typename A_> struct Exponential {  // p0 = 1 / lambda; -log of a (0, 1] uniform
  typedef A_ A;
  static const int E = Draw<A>::E;
  A inv;
  __device__ Exponential(double p0, double) : inv(A(p0)) {}
  __device__ void operator()(const Philox4 &r, A *v) const {
    A u[E];
    Draw<A>::open0(r, u);
    for (int j = 0; j < E; ++j) v[j] = -m_log(u[j]) * inv;
  }
};

template <typename A_> struct Cauchy {  // p0 = median, p1 = sigma
  typedef A_ A;
  static const int E = Draw<A>::E;
  A median, sigma;
  __device__ Cauchy(double p0, double p1) : median(A(p0)), sigma(A(p1)) {}
  __device__ void operator()(const Philox4 &r, A *v) const {
    A u[E];
    Draw<A>::closed0(r, u);
    for (int j = 0; j < E; ++j) v[j] = median + sigma * m_tan(A(3.14159265358979323846) * (u[j] - A(0.5)));
  }
};

// ceil(log u / log(1 - p)) with u in (0, 1): trials to the first success, >= 1. Double for every dtype.
struct Geometric {  // p0 = log1p(-p)
  typedef double A;
  static const int E = 2;
  double denom;
  __device__ Geometric(double p0, double) : denom(p0) {}
  __device__ void operator()(const Philox4 &r, double *v) const {
    const double u0 = (double(((unsigned long long)r.x << 32 | r.y) >> 11) + 0.5) * 1.1102230246251565e-16;
    const double u1 = (double(((unsigned long long)r.z << 32 | r.w) >> 11) + 0.5) * 1.1102230246251565e-16;
    // u rounds to 1 for the top 53-bit value (log 0): at least one trial all the same.
    v[0] = fmax(m_ceil(m_log(u0) / denom), 1.0);
    v[1] = fmax(m_ceil(m_log(u1) / denom), 1.0);
  }
};

// 1 where a [0, 1) uniform is below p: p = 0 never, p = 1 always.
struct Bernoulli {  // p0 = p
  typedef float A;
  static const int E = 4;
  double p;
  __device__ Bernoulli(double p0, double) : p(p0) {}
  __device__ void operator()(const Philox4 &r, float *v) const {
    for (int j = 0; j < 4; ++j) v[j] = double(u24(word(r, j))) < p ? 1.f : 0.f;
  }
};

// ---- the fill loop: thread-independent by construction (Note [Philox streams]) ------------------------------
__device__ __forceinline__ int64 out_offset(const Geometry &g, int contig, int64 i) {
  return contig ? i : offsets(g, i).o[0];
}

template <typename T, typename D>
__device__ void fill(int64 n, const Geometry &g, int contig, T *out, const PhiloxArgs &ph, const D &d) {
  unsigned long long seed, base;
  philox_unpack(ph, seed, base);
  const int64 blocks = (n + D::E - 1) / D::E;
  TP_GRID_STRIDE(b, blocks) {
    typename D::A v[D::E];
    d(philox_block(seed, base + (unsigned long long)b), v);
    for (int j = 0; j < D::E; ++j) {
      const int64 i = b * D::E + j;
      if (i < n) out[out_offset(g, contig, i)] = store<T>(v[j]);
    }
  }
}

// random_: from + (bits mod range) from one word (u32) or two (u64); range 0 means all 64 bits as they are.
template <typename T, bool Wide>
__device__ void random_fill(int64 n, const Geometry &g, int contig, T *out, const PhiloxArgs &ph, int64 from,
                            unsigned long long range) {
  unsigned long long seed, base;
  philox_unpack(ph, seed, base);
  const int E = Wide ? 2 : 4;
  const int64 blocks = (n + E - 1) / E;
  TP_GRID_STRIDE(b, blocks) {
    const Philox4 r = philox_block(seed, base + (unsigned long long)b);
    for (int j = 0; j < E; ++j) {
      const int64 i = b * E + j;
      if (i >= n) break;
      const unsigned long long bits =
          Wide ? ((unsigned long long)word(r, 2 * j) << 32 | word(r, 2 * j + 1)) : (unsigned long long)word(r, j);
      const unsigned long long v = range == 0 ? bits : (unsigned long long)from + bits % range;
      out[out_offset(g, contig, i)] = store<T>((int64)v);
    }
  }
}

template <typename T, typename P>
__device__ void bernoulli_tensor(int64 n, const Geometry &g, int contig, T *out, const PhiloxArgs &ph,
                                 const P *probs) {
  unsigned long long seed, base;
  philox_unpack(ph, seed, base);
  const int64 blocks = (n + 3) / 4;
  TP_GRID_STRIDE(b, blocks) {
    const Philox4 r = philox_block(seed, base + (unsigned long long)b);
    for (int j = 0; j < 4; ++j) {
      const int64 i = b * 4 + j;
      if (i < n) out[out_offset(g, contig, i)] = store<T>(P(u24(word(r, j))) < probs[i] ? 1.f : 0.f);
    }
  }
}

// ---- entry points ------------------------------------------------------------------------------------------
#define TP_FILL(name, D, T)                                                                                 \
  extern "C" __global__ void name##_##T(int64 n, Geometry g, int contig, T *out, PhiloxArgs ph, double p0, \
                                        double p1) {                                                       \
    fill<T>(n, g, contig, out, ph, D(p0, p1));                                                              \
  }
#define TP_FILL_FLOATS(name, Tmpl)                                                                          \
  TP_FILL(name, Tmpl<float>, float32) TP_FILL(name, Tmpl<float>, float16) TP_FILL(name, Tmpl<float>, bfloat16) \
  TP_FILL(name, Tmpl<double>, float64)
template <typename A> using NormalPlain = Normal<A, false>;
template <typename A> using NormalLog = Normal<A, true>;
TP_FILL(uniform, Uniform<float>, float32)
TP_FILL(uniform, Uniform<float16>, float16)
TP_FILL(uniform, Uniform<bfloat16>, bfloat16)
TP_FILL(uniform, Uniform<double>, float64)
TP_FILL_FLOATS(normal, NormalPlain)
TP_FILL_FLOATS(log_normal, NormalLog)
TP_FILL_FLOATS(exponential, Exponential)
TP_FILL_FLOATS(cauchy, Cauchy)

#define TP_FILL_REAL(name, D)                                                                               \
  TP_FILL(name, D, uint8) TP_FILL(name, D, int8) TP_FILL(name, D, int16) TP_FILL(name, D, int32)            \
  TP_FILL(name, D, int64) TP_FILL(name, D, float16) TP_FILL(name, D, bfloat16) TP_FILL(name, D, float32)    \
  TP_FILL(name, D, float64)
TP_FILL_REAL(geometric, Geometric)
TP_FILL_REAL(bernoulli, Bernoulli)
TP_FILL(bernoulli, Bernoulli, bool)

#define TP_RANDOM(T)                                                                                        \
  extern "C" __global__ void random_u32_##T(int64 n, Geometry g, int contig, T *out, PhiloxArgs ph,        \
                                            int64 from, unsigned long long range) {                        \
    random_fill<T, false>(n, g, contig, out, ph, from, range);                                              \
  }                                                                                                         \
  extern "C" __global__ void random_u64_##T(int64 n, Geometry g, int contig, T *out, PhiloxArgs ph,        \
                                            int64 from, unsigned long long range) {                        \
    random_fill<T, true>(n, g, contig, out, ph, from, range);                                               \
  }                                                                                                         \
  TP_BERNOULLI_TENSOR(T, float32)                                                                           \
  TP_BERNOULLI_TENSOR(T, float64)
#define TP_BERNOULLI_TENSOR(T, P)                                                                           \
  extern "C" __global__ void bernoulli_tensor_##T##_##P(int64 n, Geometry g, int contig, T *out,           \
                                                         PhiloxArgs ph, const P *probs) {                  \
    bernoulli_tensor<T, P>(n, g, contig, out, ph, probs);                                                   \
  }
TP_RANDOM(bool)
TP_RANDOM(uint8)
TP_RANDOM(int8)
TP_RANDOM(int16)
TP_RANDOM(int32)
TP_RANDOM(int64)
TP_RANDOM(float16)
TP_RANDOM(bfloat16)
TP_RANDOM(float32)
TP_RANDOM(float64)

// ---- _rrelu_with_noise: rrelu's training draws (Note [rrelu] in csrc/kernels/activation.cpp) ------------------
// x contiguous; element i takes uniform j = i % E of Philox block offset + i / E (Note [Philox streams]) whether
// it needs a slope or not, so the draws do not depend on the values. x <= 0: slope r = lower + u (upper - lower)
// with u in [0, 1), out = x r, noise = r; otherwise (NaN too) out = x and noise = 1, as on the CPU.
template <typename T>
__device__ void rrelu_with_noise(int64 n, const T *x, T *out, T *noise, const PhiloxArgs &ph, double lower,
                                 double upper) {
  typedef typename OpMath<T>::type A;
  const int E = Draw<A>::E;
  const A lo = A(lower), width = A(upper) - A(lower);  // the bounds rounded to the math type first (the CPU's)
  unsigned long long seed, base;
  philox_unpack(ph, seed, base);
  const int64 blocks = (n + E - 1) / E;
  TP_GRID_STRIDE(b, blocks) {
    A u[E];
    Draw<A>::closed0(philox_block(seed, base + (unsigned long long)b), u);
    for (int j = 0; j < E; ++j) {
      const int64 i = b * E + j;
      if (i >= n) break;
      const A v = load(x[i]);
      if (v <= A(0)) {
        const A r = u[j] * width + lo;
        out[i] = store<T>(v * r);
        noise[i] = store<T>(r);
      } else {
        out[i] = x[i];
        noise[i] = store<T>(A(1));
      }
    }
  }
}

#define TP_RRELU(T)                                                                                         \
  extern "C" __global__ void rrelu_with_noise_##T(int64 n, const T *x, T *out, T *noise, PhiloxArgs ph,    \
                                                  double lower, double upper) {                            \
    rrelu_with_noise<T>(n, x, out, noise, ph, lower, upper);                                                \
  }
TP_RRELU(float16)
TP_RRELU(bfloat16)
TP_RRELU(float32)
TP_RRELU(float64)

// ---- sorting by random keys: randperm and multinomial without replacement ----------------------------------
// Note [Bitonic sort of random keys]
//   Rows of `len` (a power of two) (key, value) pairs are sorted by key, ascending, with the classic bitonic
//   network: for k = 2, 4, ..., len and j = k/2, ..., 1, one launch of bitonic_step compares i with i ^ j.
//   The direction bit uses i's index inside its row, so every row ends ascending and rows never mix (i ^ j
//   stays in the row because j < len and rows start at multiples of len). Padding keys are ~0, above every
//   real key (real keys have their top bit clear, or are non-negative doubles), so padding sorts last and
//   the first n values of a row are a permutation of its real values, whatever the keys' ties.
extern "C" __global__ void bitonic_step(int64 total, int64 len, unsigned long long *keys, int64 *vals, int64 j,
                                        int64 k) {
  TP_GRID_STRIDE(i, total) {
    const int64 l = i ^ j;
    if (l <= i) continue;
    const bool up = ((i & (len - 1)) & k) == 0;
    const unsigned long long a = keys[i], b = keys[l];
    if ((a > b) == up && a != b) {
      keys[i] = b, keys[l] = a;
      const int64 t = vals[i];
      vals[i] = vals[l], vals[l] = t;
    }
  }
}

// randperm: key i = 63 random bits (two words: element i uses half of block i / 2), value i = i.
extern "C" __global__ void randperm_keys(int64 n, int64 len, unsigned long long *keys, int64 *vals,
                                         PhiloxArgs ph) {
  unsigned long long seed, base;
  philox_unpack(ph, seed, base);
  TP_GRID_STRIDE(i, len) {
    unsigned long long key = ~0ull;
    if (i < n) {
      const Philox4 r = philox_block(seed, base + (unsigned long long)(i / 2));
      const unsigned hi = (i & 1) ? r.z : r.x, lo = (i & 1) ? r.w : r.y;
      key = ((unsigned long long)hi << 32 | lo) >> 1;
    }
    keys[i] = key;
    vals[i] = i;
  }
}

// out[r, q] = vals[r, q] for q < k: the first k values of each sorted row of `len`.
extern "C" __global__ void take_sorted(int64 rows, int64 k, int64 len, const int64 *vals, int64 *out) {
  TP_GRID_STRIDE(i, rows * k) out[i] = vals[(i / k) * len + i % k];
}

// Without replacement (Efraimidis-Spirakis): key = E / p with E ~ Exp(1); the k smallest keys of a row are a
// sample without replacement weighted by p. p <= 0 or NaN: +inf (drawn last). Keys are non-negative doubles,
// whose bit patterns sort as the numbers do.
template <typename P>
__device__ void multinomial_keys(int64 rows, int64 cats, int64 len, const P *probs, unsigned long long *keys,
                                 int64 *vals, const PhiloxArgs &ph) {
  unsigned long long seed, base;
  philox_unpack(ph, seed, base);
  TP_GRID_STRIDE(i, rows * len) {
    const int64 r = i / len, j = i % len;
    unsigned long long key = ~0ull;
    if (j < cats) {
      const int64 idx = r * cats + j;
      const Philox4 w = philox_block(seed, base + (unsigned long long)(idx / 2));
      const double u = (idx & 1) ? u53_open0(w.z, w.w) : u53_open0(w.x, w.y);
      const double p = double(probs[idx]);
      const double e = -log(u) / p;
      key = p > 0 ? (unsigned long long)__double_as_longlong(e + 0.0) : 0x7ff0000000000000ull;
    }
    keys[i] = key;
    vals[i] = j;
  }
}

// With replacement, step 1: cdf[r, j] = sum of max(p, 0) over row r's first j + 1 categories, in double. One
// block per row: each thread sums a contiguous chunk, thread 0 scans the chunk sums, each thread writes its part.
template <typename P>
__device__ void multinomial_cdf(int64 rows, int64 cats, const P *probs, double *cdf) {
  __shared__ double part[1024];
  const int64 chunk = (cats + blockDim.x - 1) / blockDim.x;
  for (int64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const P *p = probs + r * cats;
    const int64 lo = threadIdx.x * chunk, hi = lo + chunk < cats ? lo + chunk : cats;
    double s = 0;
    for (int64 j = lo; j < hi; ++j) s += double(p[j]) > 0 ? double(p[j]) : 0.0;
    part[threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
      double acc = 0;
      for (unsigned q = 0; q < blockDim.x; ++q) {
        const double x = part[q];
        part[q] = acc;
        acc += x;
      }
    }
    __syncthreads();
    double acc = part[threadIdx.x];
    for (int64 j = lo; j < hi; ++j) {
      acc += double(p[j]) > 0 ? double(p[j]) : 0.0;
      cdf[r * cats + j] = acc;
    }
    __syncthreads();  // part is reused by the next row
  }
}

// Step 2: sample s of row r = the first category whose cdf exceeds u * total (a zero-probability category
// never does before its predecessor). Past the end (rounding, or a row with no positive probability): the
// last category whose cdf rises, else 0.
extern "C" __global__ void multinomial_draw(int64 rows, int64 cats, int64 k, const double *cdf, int64 *out,
                                            PhiloxArgs ph) {
  unsigned long long seed, base;
  philox_unpack(ph, seed, base);
  TP_GRID_STRIDE(s, rows * k) {
    const double *c = cdf + (s / k) * cats;
    const Philox4 w = philox_block(seed, base + (unsigned long long)(s / 2));
    const double u = (s & 1) ? u53(w.z, w.w) : u53(w.x, w.y);
    const double target = u * c[cats - 1];
    int64 lo = 0, hi = cats;
    while (lo < hi) {
      const int64 mid = (lo + hi) / 2;
      if (c[mid] > target) hi = mid;
      else lo = mid + 1;
    }
    if (lo >= cats) {
      lo = cats - 1;
      while (lo > 0 && !(c[lo] > c[lo - 1])) --lo;
    }
    out[s] = lo;
  }
}

#define TP_MULTINOMIAL(P)                                                                                   \
  extern "C" __global__ void multinomial_keys_##P(int64 rows, int64 cats, int64 len, const P *probs,       \
                                                   unsigned long long *keys, int64 *vals, PhiloxArgs ph) {  \
    multinomial_keys<P>(rows, cats, len, probs, keys, vals, ph);                                            \
  }                                                                                                         \
  extern "C" __global__ void multinomial_cdf_##P(int64 rows, int64 cats, const P *probs, double *cdf) {    \
    multinomial_cdf<P>(rows, cats, probs, cdf);                                                             \
  }
TP_MULTINOMIAL(float32)
TP_MULTINOMIAL(float64)

// ---- poisson: a sampler that loops, so each element owns a stream of blocks ----------------------------------
// Element i draws from counters (block offset + i, j, 0) for j = 0, 1, ...: the third counter word numbers its
// draws, so the op reserves one block per element however many tries an element takes. The algorithm, its
// constants and its comparisons are the CPU's (Note [Poisson sampler] in kernels/random_poisson.cpp). A
// negative or NaN rate gives 0 (the CPU raises; that check would need a synchronisation here).
struct ElementStream {
  unsigned k0, k1, lo, hi, j;
  int used;
  Philox4 r;
  __device__ ElementStream(unsigned long long seed, unsigned long long block)
      : k0(unsigned(seed)), k1(unsigned(seed >> 32)), lo(unsigned(block)), hi(unsigned(block >> 32)), j(0),
        used(2) {}
  __device__ double next() {  // [0, 1) from 53 bits
    if (used == 2) {
      const Philox4 c = {lo, hi, j++, 0u};
      r = philox4x32_10(c, k0, k1);
      used = 0;
    }
    return used++ == 0 ? u53(r.x, r.y) : u53(r.z, r.w);
  }
};

__device__ double sample_poisson(double lambda, ElementStream &s) {
  if (lambda >= 10) {
    const double slam = sqrt(lambda), loglam = log(lambda);
    const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
    const double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
    while (true) {
      const double U = s.next() - 0.5, V = s.next();
      const double us = 0.5 - fabs(U);
      const double kf = floor((2 * a / us + b) * U + lambda + 0.43);
      if (us >= 0.07 && V <= vr) return kf;
      if (!(kf >= 0) || (us < 0.013 && V > us)) continue;
      if (log(V) + log(invalpha) - log(a / (us * us) + b) <= -lambda + kf * loglam - lgamma(kf + 1)) return kf;
    }
  }
  if (!(lambda > 0)) return 0;
  const double enlam = exp(-lambda);
  double x = 0, prod = 1.0;
  while (true) {
    prod *= s.next();
    if (prod > enlam) x += 1;
    else return x;
  }
}

template <typename T>
__device__ void poisson(int64 n, T *out, const T *rates, const PhiloxArgs &ph) {
  unsigned long long seed, base;
  philox_unpack(ph, seed, base);
  TP_GRID_STRIDE(i, n) {
    ElementStream s(seed, base + (unsigned long long)i);
    out[i] = store<T>(sample_poisson(double(load(rates[i])), s));
  }
}

#define TP_POISSON(T)                                                                                       \
  extern "C" __global__ void poisson_##T(int64 n, T *out, const T *rates, PhiloxArgs ph) {                 \
    poisson<T>(n, out, rates, ph);                                                                          \
  }
TP_POISSON(float16)
TP_POISSON(bfloat16)
TP_POISSON(float32)
TP_POISSON(float64)

// Note [Graph-safe RNG] (philox.cuh): replay() writes the generator's (seed, offset) here before each launch.
extern "C" __global__ void rng_graph_state_set(unsigned long long *state, unsigned long long seed,
                                               unsigned long long offset) {
  if (blockIdx.x == 0 && threadIdx.x == 0) state[0] = seed, state[1] = offset;
}
