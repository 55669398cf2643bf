// ops_random.cpp — CUDA kernels of the random op family: uniform_, normal_, log_normal_, exponential_, cauchy_,
// geometric_, bernoulli_ (.float and .Tensor), bernoulli, random_ (plain, .from, .to), randperm, multinomial,
// poisson, _rrelu_with_noise.
//
// Where it sits: the CUDA twin of kernels/random.cpp and kernels/random_bernoulli.cpp; the arithmetic is
// tensorplay_p10/cuda_kernels/random.cu. The factories (rand, randn, randint, rand_like, ...) are empty +
// one of these in-place samplers, and dropout / native_dropout are Composites over bernoulli_.float, so they
// reach the GPU through these kernels. Each op:
//   1. checks its arguments with the CPU's own rules: the CPU fill functions (random/distributions.h) are
//      called with n = 0, which runs every check (dtype, bounds, p in range) and draws nothing;
//   2. reserves the Philox blocks it uses from its generator (cuda/philox.h: `generator=`, a CUDA generator of
//      the op's device, or the device's default one), which moves that generator's offset;
//   3. launches: element i of the output, in logical row-major order, takes its numbers from Philox block
//      offset + i / E (Note [Philox streams] in philox.cuh), so the values never depend on the launch shape.
// The streams are TensorPlay's own: they do not equal PyTorch's CUDA streams (nor the CPU ones).
// Not checked on the device (it would need a synchronisation): bernoulli probabilities in [0, 1],
// multinomial rows with a positive sum and poisson rates >= 0; bad values give in-range results rather than
// errors, where PyTorch's CUDA kernels give device asserts.
#include <algorithm>
#include <cmath>
#include <limits>

#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"
#include "cuda/philox.h"
#include "random/distributions.h"

namespace tp::p10::cuda {

void check_cuda_generator(const Value &v, const char *op) { generator_arg(v, DeviceType::CUDA, op); }

namespace {
// The CPU fill functions check their arguments before drawing; with n = 0 they draw nothing from this one.
CPUGenerator &rules() {
  static CPUGenerator *g = new CPUGenerator();
  return *g;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t next_pow2(int64_t n) {
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}
void *dptr(const Tensor &t) { return t.data_ptr(); }

// Launch random.cu's `entry` over self (contiguous, or through the geometry of its strides), with the Philox
// blocks for n elements at `per_block` elements a block, from `gen` (the op's generator argument: None for the
// device's default); `extra` are the kernel's trailing parameters.
template <typename... Extra>
void launch_fill(const char *op, const Tensor &self, const Value &gen, const std::string &entry, int per_block,
                 const Extra &...extra) {
  const int dev = common_device(op, {self}, false);
  DeviceGuard guard(dev);
  check_real(op, self.dtype());
  self.bump_version();
  const int64_t n = self.numel();
  if (n == 0) return;
  const int64_t blocks = ceil_div(n, per_block);
  const PhiloxArgs ph = cuda_generator(gen, dev, op).reserve(uint64_t(blocks));
  KernelGeometry g{};
  const int contig = self.is_contiguous() ? 1 : 0;
  if (!contig) g = make_geometry(self.sizes(), {&self}, op);
  launch(kernel(dev, "random.cu", entry), elementwise_config(dev, blocks), stream_for(dev), n, g, contig,
         dptr(self), ph, extra...);
}

// Philox blocks give four floats (float, half, bfloat16) or two doubles (float64): random.cu's Draw<A>.
int per_block_float(ScalarType t) { return t == ScalarType::Float64 ? 2 : 4; }

void done(Stack &s, const Tensor &r) {
  s.clear();
  s.push_back(Value(r));
}

// ---- random_: the CPU's bounds, including its float adjustment (Note [random_ bounds for floats]) ------------
template <typename T> int64_t through(int64_t v) {  // int64 -> T -> int64 as the CPU kernel does it
  double d;
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) d = double(opmath_t<T>(T(float(v))));
  else d = double(T(v));
  return (d >= 9223372036854775808.0 || d < -9223372036854775808.0 || std::isnan(d)) ? INT64_MIN : int64_t(d);
}
int floor_log2(uint64_t v) {
  int k = 0;
  while (v >>= 1) ++k;
  return k;
}
template <typename T> void adjust_float_bounds(int64_t &from, int64_t &to, int digits) {
  const int64_t from_p1 = through<T>(from + 1);
  if (from_p1 < from) from = from_p1 + (int64_t(1) << (floor_log2(uint64_t(std::abs(from + 1))) - digits + 1));
  const int64_t to_m1 = through<T>(to - 1);
  if (to_m1 >= to) to = to_m1 - (int64_t(1) << (floor_log2(uint64_t(std::abs(to - 1))) - digits + 1));
}
void adjust_bounds(ScalarType t, int64_t &from, int64_t &to) {
  switch (t) {
    case ScalarType::Float32: return adjust_float_bounds<float>(from, to, 24);
    case ScalarType::Float64: return adjust_float_bounds<double>(from, to, 53);
    case ScalarType::Float16: return adjust_float_bounds<Half>(from, to, 11);
    case ScalarType::BFloat16: return adjust_float_bounds<BFloat16>(from, to, 8);
    default: return;
  }
}

// from + bits mod range (range 0: all 64 bits); 64 random bits once the range reaches 2^28, as the CPU.
void launch_random(const char *op, const Tensor &self, const Value &gen, int64_t from, uint64_t range) {
  const bool wide = range == 0 || range >= (uint64_t(1) << 28);
  launch_fill(op, self, gen, kname(wide ? "random_u64" : "random_u32", self.dtype()), wide ? 2 : 4, from,
              (unsigned long long)range);
}

// random_() without bounds: [0, max] for integers, [0, 2^digits] for floats, {0, 1} for bool (the CPU's).
uint64_t plain_range(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return 2;
    case ScalarType::UInt8: return 256;
    case ScalarType::Int8: return 128;
    case ScalarType::Int16: return uint64_t(1) << 15;
    case ScalarType::Int32: return uint64_t(1) << 31;
    case ScalarType::Int64: return uint64_t(1) << 63;
    case ScalarType::Float16: return (uint64_t(1) << 11) + 1;
    case ScalarType::BFloat16: return (uint64_t(1) << 8) + 1;
    case ScalarType::Float32: return (uint64_t(1) << 24) + 1;
    default: return (uint64_t(1) << 53) + 1;  // float64
  }
}
}  // namespace

// ---- the in-place samplers (boxed: the generator comes straight off the stack) --------------------------------
static void uniform_(const Operator &, Stack &s, void *) {
  Tensor self = s[0].tensor;
  const double from = s[1].to_double(), to = s[2].to_double();
  check_cuda_generator(s[3], "uniform_");
  uniform_fill(rules(), self.dtype(), nullptr, 0, from, to);
  launch_fill("uniform_", self, s[3], kname("uniform", self.dtype()), per_block_float(self.dtype()), from, to);
  done(s, self);
}

static void normal_(const Operator &, Stack &s, void *) {
  Tensor self = s[0].tensor;
  const double mean = s[1].to_double(), std = s[2].to_double();
  check_cuda_generator(s[3], "normal_");
  normal_fill(rules(), self.dtype(), nullptr, 0, mean, std);
  launch_fill("normal_", self, s[3], kname("normal", self.dtype()), per_block_float(self.dtype()), mean, std);
  done(s, self);
}

static void log_normal_(const Operator &, Stack &s, void *) {
  Tensor self = s[0].tensor;
  const double mean = s[1].to_double(), std = s[2].to_double();
  check_cuda_generator(s[3], "log_normal_");
  log_normal_fill(rules(), self.dtype(), nullptr, 0, mean, std);
  launch_fill("log_normal_", self, s[3], kname("log_normal", self.dtype()), per_block_float(self.dtype()), mean, std);
  done(s, self);
}

static void cauchy_(const Operator &, Stack &s, void *) {
  Tensor self = s[0].tensor;
  const double median = s[1].to_double(), sigma = s[2].to_double();
  check_cuda_generator(s[3], "cauchy_");
  cauchy_fill(rules(), self.dtype(), nullptr, 0, median, sigma);
  launch_fill("cauchy_", self, s[3], kname("cauchy", self.dtype()), per_block_float(self.dtype()), median, sigma);
  done(s, self);
}

static void exponential_(const Operator &, Stack &s, void *) {
  Tensor self = s[0].tensor;
  const double lambd = s[1].to_double();
  check_cuda_generator(s[2], "exponential_");
  exponential_fill(rules(), self.dtype(), nullptr, 0, lambd);
  launch_fill("exponential_", self, s[2], kname("exponential", self.dtype()), per_block_float(self.dtype()), 1.0 / lambd,
              0.0);
  done(s, self);
}

static void geometric_(const Operator &, Stack &s, void *) {
  Tensor self = s[0].tensor;
  const double p = s[1].to_double();
  check_cuda_generator(s[2], "geometric_");
  geometric_fill(rules(), self.dtype(), nullptr, 0, p);
  launch_fill("geometric_", self, s[2], kname("geometric", self.dtype()), 2, std::log1p(-p), 0.0);
  done(s, self);
}

static void bernoulli_float_(const Operator &, Stack &s, void *) {
  Tensor self = s[0].tensor;
  const double p = s[1].to_double();
  check_cuda_generator(s[2], "bernoulli_");
  bernoulli_scalar_fill(rules(), self.dtype(), nullptr, 0, p);
  launch_fill("bernoulli_", self, s[2], kname("bernoulli", self.dtype()), 4, p, 0.0);
  done(s, self);
}

static void random_(const Operator &op, Stack &s, void *) {
  Tensor self = s[0].tensor;
  const ScalarType t = self.dtype();
  if (op.schema.overload == "from") {
    int64_t from = s[1].to_int();
    check_cuda_generator(s[3], "random_");
    if (s[2].is_none()) {
      TP_CHECK(from == std::numeric_limits<int64_t>::min(), NotImplemented,
               "random_(from, to=None) is only supported with from = int64 min (the full range)");
      random_full_range_fill(rules(), t, nullptr, 0);
      launch_random("random_", self, s[3], 0, 0);
    } else {
      int64_t to = s[2].to_int();
      random_from_to_fill(rules(), t, nullptr, 0, from, to);  // from < to and the dtype's bounds
      adjust_bounds(t, from, to);
      launch_random("random_", self, s[3], from, uint64_t(to) - uint64_t(from));
    }
  } else if (op.schema.overload == "to") {
    int64_t from = 0, to = s[1].to_int();
    check_cuda_generator(s[2], "random_");
    TP_CHECK(0 < to, Runtime, "random_ expects 'from' to be less than 'to', but got from=0 >= to=", to);
    random_from_to_fill(rules(), t, nullptr, 0, from, to);
    adjust_bounds(t, from, to);
    launch_random("random_", self, s[2], from, uint64_t(to) - uint64_t(from));
  } else {
    check_cuda_generator(s[1], "random_");
    random_fill(rules(), t, nullptr, 0);
    launch_random("random_", self, s[1], 0, plain_range(t));
  }
  done(s, self);
}

// ---- Bernoulli with a probability per element -----------------------------------------------------------------
// `probs` (any float dtype) broadcast to out's shape, made contiguous in logical order as float32 or float64.
static void bernoulli_from(const char *op, const Tensor &out, const Tensor &probs, const Value &gen) {
  const int dev = common_device(op, {out, probs}, false);
  DeviceGuard guard(dev);
  const ScalarType pt = probs.dtype() == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
  const Tensor pe = call_op<Tensor>(TP_OP("expand"), probs, out.sizes());
  const Tensor pc = contiguous_as(pe, pt);
  launch_fill(op, out, gen, kname("bernoulli_tensor", out.dtype()) + "_" + scalar_type_name(pt), 4, dptr(pc));
}

static void bernoulli_tensor_(const Operator &, Stack &s, void *) {
  Tensor self = s[0].tensor, p = s[1].tensor;
  check_cuda_generator(s[2], "bernoulli_");
  TP_CHECK(is_floating(p.dtype()), Runtime, "bernoulli_: expected a floating point tensor of probabilities, got ",
           scalar_type_name(p.dtype()));
  TP_CHECK(is_expandable_to(p.sizes(), self.sizes()), Runtime, "bernoulli_: the probabilities of shape ",
           shape_str(p.sizes()), " must broadcast to self's shape ", shape_str(self.sizes()));
  bernoulli_tensor_fill(rules(), self.dtype(), nullptr, 0, p.dtype(), nullptr);
  if (p.device().is_cpu() && self.device().type == DeviceType::CUDA)  // PyTorch moves CPU probabilities over
    p = call_op<Tensor>(TP_OP("to"), p, std::optional<ScalarType>(), std::optional<Device>(self.device()), false);
  bernoulli_from("bernoulli_", self, p, s[2]);
  done(s, self);
}

static void bernoulli(const Operator &, Stack &s, void *) {
  Tensor probs = s[0].tensor;
  check_cuda_generator(s[1], "bernoulli");
  bernoulli_tensor_fill(rules(), probs.dtype(), nullptr, 0, probs.dtype(), nullptr);
  Tensor out = empty_tensor(probs.sizes(), probs.dtype(), probs.device());
  bernoulli_from("bernoulli", out, probs, s[1]);
  done(s, out);
}

// ---- _rrelu_with_noise: rrelu's training slopes (Note [rrelu] in kernels/activation.cpp) ----------------------
// A new contiguous (out, noise) pair like the CPU op's; one uniform per element (random.cu rrelu_with_noise).
static void rrelu_with_noise(const Operator &, Stack &s, void *) {
  const char *op = "_rrelu_with_noise";
  const Tensor self = s[0].tensor;
  check_cuda_generator(s[3], op);
  Stack meta{Value(meta_like(self)), s[1], s[2], Value()};
  call(TP_OP("_rrelu_with_noise"), meta);  // the CPU op's checks: a float dtype, lower <= upper
  const double lower = s[1].to_double(), upper = s[2].to_double();
  const int dev = common_device(op, {self}, false);
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  Tensor out = empty_tensor(self.sizes(), self.dtype(), device), noise = empty_tensor(self.sizes(), self.dtype(), device);
  const int64_t n = self.numel();
  if (n > 0) {
    const Tensor x = self.is_contiguous() ? self : contiguous_as(self, self.dtype());
    const int64_t blocks = ceil_div(n, per_block_float(self.dtype()));
    const PhiloxArgs ph = cuda_generator(s[3], dev, op).reserve(uint64_t(blocks));
    launch(kernel(dev, "random.cu", kname("rrelu_with_noise", self.dtype())), elementwise_config(dev, blocks),
           stream_for(dev), n, dptr(x), dptr(out), dptr(noise), ph, lower, upper);
  }
  s.clear();
  s.push_back(Value(out));
  s.push_back(Value(noise));
}

// ---- sorting random keys: randperm, multinomial without replacement (Note [Bitonic sort of random keys]) -----
// Sort rows of `len` (key, value) pairs by key, ascending, in place.
static void bitonic_sort(int dev, int64_t total, int64_t len, const Tensor &keys, const Tensor &vals) {
  const CUfunction f = kernel(dev, "random.cu", "bitonic_step");
  const LaunchConfig c = elementwise_config(dev, total);
  const Stream stream = stream_for(dev);
  for (int64_t k = 2; k <= len; k <<= 1)
    for (int64_t j = k >> 1; j > 0; j >>= 1) launch(f, c, stream, total, len, dptr(keys), dptr(vals), j, k);
}

static void randperm(const Operator &, Stack &s, void *) {
  const int64_t n = s[0].to_int();
  check_cuda_generator(s[1], "randperm");
  const ScalarType dt = s[2].is_none() ? ScalarType::Int64 : s[2].dtype;
  TP_CHECK(n >= 0, Runtime, "randperm: n must be non-negative, got ", n);
  const int dev = resolve_index(s[3].is_none() ? -1 : s[3].device.index, "randperm");
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  Tensor out = empty_tensor({n}, ScalarType::Int64, device);
  if (n > 0) {
    const int64_t len = next_pow2(n);
    Tensor keys = empty_tensor({len}, ScalarType::Int64, device), vals = empty_tensor({len}, ScalarType::Int64, device);
    const PhiloxArgs ph = cuda_generator(s[1], dev, "randperm").reserve(uint64_t(ceil_div(n, 2)));
    const Stream stream = stream_for(dev);
    launch(kernel(dev, "random.cu", "randperm_keys"), elementwise_config(dev, len), stream, n, len, dptr(keys),
           dptr(vals), ph);
    bitonic_sort(dev, len, len, keys, vals);
    launch(kernel(dev, "random.cu", "take_sorted"), elementwise_config(dev, n), stream, int64_t(1), n, len,
           dptr(vals), dptr(out));
  }
  done(s, dt == ScalarType::Int64 ? out : contiguous_as(out, dt));
}

static void multinomial(const Operator &, Stack &s, void *) {
  Tensor probs = s[0].tensor;
  const int64_t k = s[1].to_int();
  const bool replacement = s[2].to_bool();
  check_cuda_generator(s[3], "multinomial");
  // The CPU op on a meta copy: dims, dtype, num_samples > 0, num_samples <= categories without replacement.
  call_op<Tensor>(TP_OP("multinomial"), meta_like(probs), k, replacement);
  const int64_t rows = probs.dim() == 1 ? 1 : probs.sizes()[0], cats = probs.sizes().back();
  TP_CHECK(cats <= (int64_t(1) << 24), Runtime, "multinomial: number of categories cannot exceed 2^24, got ", cats);
  TP_CHECK(cats > 0, Runtime, "multinomial: invalid multinomial distribution (sum of probabilities <= 0): no "
           "categories");
  const int dev = common_device("multinomial", {probs}, false);
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  Tensor out = empty_tensor(probs.dim() == 1 ? Shape{k} : Shape{rows, k}, ScalarType::Int64, device);
  if (rows == 0) return done(s, out);
  const ScalarType pt = probs.dtype() == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
  const Tensor p = contiguous_as(probs, pt);
  const Stream stream = stream_for(dev);
  CudaGenerator &gen = cuda_generator(s[3], dev, "multinomial");
  if (replacement) {
    Tensor cdf = empty_tensor({rows, cats}, ScalarType::Float64, device);
    const unsigned grid = unsigned(std::min<int64_t>(rows, int64_t(properties(dev).multi_processor_count) * 4));
    launch(kernel(dev, "random.cu", kname("multinomial_cdf", pt)), LaunchConfig{grid, 256, 0}, stream, rows, cats,
           dptr(p), dptr(cdf));
    const PhiloxArgs ph = gen.reserve(uint64_t(ceil_div(rows * k, 2)));
    launch(kernel(dev, "random.cu", "multinomial_draw"), elementwise_config(dev, rows * k), stream, rows, cats, k,
           dptr(cdf), dptr(out), ph);
  } else {
    const int64_t len = next_pow2(cats), total = rows * len;
    Tensor keys = empty_tensor({total}, ScalarType::Int64, device), vals = empty_tensor({total}, ScalarType::Int64, device);
    const PhiloxArgs ph = gen.reserve(uint64_t(ceil_div(rows * cats, 2)));
    launch(kernel(dev, "random.cu", kname("multinomial_keys", pt)), elementwise_config(dev, total), stream, rows,
           cats, len, dptr(p), dptr(keys), dptr(vals), ph);
    bitonic_sort(dev, total, len, keys, vals);
    launch(kernel(dev, "random.cu", "take_sorted"), elementwise_config(dev, rows * k), stream, rows, k, len,
           dptr(vals), dptr(out));
  }
  done(s, out);
}

// poisson(rates): one Philox block per element, its draws numbered inside it (random.cu, ElementStream).
static void poisson(const Operator &, Stack &s, void *) {
  Tensor rates = s[0].tensor;
  check_cuda_generator(s[1], "poisson");
  TP_CHECK(is_floating(rates.dtype()), Runtime, "poisson: expected a floating point tensor of rates, got ",
           scalar_type_name(rates.dtype()));
  const int dev = common_device("poisson", {rates}, false);
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  check_real("poisson", rates.dtype());
  Tensor out = empty_tensor(rates.sizes(), rates.dtype(), device);
  const int64_t n = out.numel();
  if (n > 0) {
    const Tensor r = contiguous_as(rates, rates.dtype());
    const PhiloxArgs ph = cuda_generator(s[1], dev, "poisson").reserve(uint64_t(n));
    launch(kernel(dev, "random.cu", kname("poisson", rates.dtype())), elementwise_config(dev, n), stream_for(dev),
           n, dptr(out), dptr(r), ph);
  }
  done(s, out);
}

TP_LIBRARY(cuda_random) {
  TP_IMPL_BOXED(lib, "uniform_", CUDA, &uniform_);
  TP_IMPL_BOXED(lib, "normal_", CUDA, &normal_);
  TP_IMPL_BOXED(lib, "log_normal_", CUDA, &log_normal_);
  TP_IMPL_BOXED(lib, "cauchy_", CUDA, &cauchy_);
  TP_IMPL_BOXED(lib, "exponential_", CUDA, &exponential_);
  TP_IMPL_BOXED(lib, "geometric_", CUDA, &geometric_);
  TP_IMPL_BOXED(lib, "bernoulli_.float", CUDA, &bernoulli_float_);
  TP_IMPL_BOXED(lib, "bernoulli_.Tensor", CUDA, &bernoulli_tensor_);
  TP_IMPL_BOXED(lib, "bernoulli", CUDA, &bernoulli);
  TP_IMPL_BOXED(lib, "random_.from", CUDA, &random_);
  TP_IMPL_BOXED(lib, "random_.to", CUDA, &random_);
  TP_IMPL_BOXED(lib, "random_", CUDA, &random_);
  TP_IMPL_BOXED(lib, "randperm", CUDA, &randperm);
  TP_IMPL_BOXED(lib, "multinomial", CUDA, &multinomial);
  TP_IMPL_BOXED(lib, "poisson", CUDA, &poisson);
  TP_IMPL_BOXED(lib, "_rrelu_with_noise", CUDA, &rrelu_with_noise);
}

}  // namespace tp::p10::cuda
