// random.cpp — the random op family: in-place samplers (uniform_, normal_, random_, bernoulli_, …) and the
// factories built on them (rand, randn, randint, randperm, normal, bernoulli, multinomial).
//
// Where it sits: the arithmetic of each distribution lives in random/distributions.cpp (bit-exact with
// PyTorch's CPU streams); this file turns tensors into the contiguous buffers those functions fill, and picks
// the generator (`generator=` or the default one). The factories are Composite: empty + an in-place sampler.
#include <algorithm>
#include <numeric>

#include "dispatch/kernel_box.h"
#include "random/distributions.h"

namespace tp::p10 {

// The op's CPU generator (RuntimeError for a CUDA one, naming the op: Note [Generator devices]).
static CPUGenerator &gen_of(const Value &v, const Operator &op) { return cpu_generator(v, op.schema.name.c_str()); }

// Note [Random fill order]
//   PyTorch draws for a non-contiguous output in the order its TensorIterator walks it: dims sorted by stride,
//   largest outermost. So a transposed tensor is filled in memory order and a strided slice in logical order.
//   We view `self` with its dims in that order; if the view is contiguous the buffer is its memory, otherwise a
//   contiguous temporary of the view's shape is filled and copied in. Either way draw i lands where PyTorch's
//   draw i lands.
static Tensor in_fill_order(const Tensor &self) {
  std::vector<int64_t> perm(self.dim());
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(),
                   [&](int64_t a, int64_t b) { return self.strides()[a] > self.strides()[b]; });
  return call_op(TP_OP("permute"), self, perm);
}

template <typename Fill> static Tensor fill_via_buffer(const Tensor &self, const Fill &fill) {
  self.bump_version();
  if (self.device().is_meta() || self.numel() == 0) return self;
  TP_CHECK(self.device().is_cpu(), NotImplemented, "random sampling on ", device_str(self.device()),
           " needs that device's backend");
  if (self.is_contiguous()) { fill(self.data_ptr(), self.numel()); return self; }
  Tensor ordered = in_fill_order(self);
  if (ordered.is_contiguous()) { fill(ordered.data_ptr(), ordered.numel()); return self; }
  Tensor tmp = empty_tensor(ordered.sizes(), self.dtype(), self.device());
  fill(tmp.data_ptr(), tmp.numel());
  call_op(TP_OP("copy_"), ordered, tmp);
  return self;
}

// Boxed kernels read the generator straight off the stack (it is not a Tensor/Scalar the boxer knows).
static void uniform_(const Operator &op, Stack &s, void *) {
  Tensor self = s[0].tensor;
  double from = s[1].to_double(), to = s[2].to_double();
  CPUGenerator &g = gen_of(s[3], op);
  TP_CHECK(from <= to, Runtime, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  Tensor r = fill_via_buffer(self, [&](void *p, int64_t n) { uniform_fill(g, self.dtype(), p, n, from, to); });
  s.clear();
  s.push_back(Value(r));
}

static void normal_(const Operator &op, Stack &s, void *) {
  Tensor self = s[0].tensor;
  double mean = s[1].to_double(), std = s[2].to_double();
  CPUGenerator &g = gen_of(s[3], op);
  TP_CHECK(std >= 0.0, Runtime, "normal expects std >= 0.0, but found std ", std);
  bool contiguous = self.is_contiguous();
  Tensor r = fill_via_buffer(self, [&](void *p, int64_t n) {
    // PyTorch uses its per-element path for strided outputs: keep the same stream (distributions.h).
    if (contiguous) normal_fill(g, self.dtype(), p, n, mean, std);
    else normal_fill_strided(g, self.dtype(), p, n, mean, std);
  });
  s.clear();
  s.push_back(Value(r));
}

static void random_(const Operator &op, Stack &s, void *) {
  Tensor self = s[0].tensor;
  // A RuntimeError in PyTorch, not the NotImplementedError of the dtype dispatch below.
  TP_CHECK(!is_complex(self.dtype()), Runtime, "random_: check_random_bounds handles only integral, floating-point "
           "and boolean types, got ", scalar_type_name(self.dtype()));
  Tensor r;
  if (op.schema.overload == "from") {
    int64_t from = s[1].to_int();
    CPUGenerator &g = gen_of(s[3], op);
    if (s[2].is_none()) {
      TP_CHECK(from == std::numeric_limits<int64_t>::min(), NotImplemented,
               "random_(from, to=None) is only supported with from = int64 min (the full range)");
      r = fill_via_buffer(self, [&](void *p, int64_t n) { random_full_range_fill(g, self.dtype(), p, n); });
    } else {
      int64_t to = s[2].to_int();
      TP_CHECK(from < to, Runtime, "random_ expects 'from' to be less than 'to', but got from=", from, " >= to=", to);
      r = fill_via_buffer(self, [&](void *p, int64_t n) { random_from_to_fill(g, self.dtype(), p, n, from, to); });
    }
  } else if (op.schema.overload == "to") {
    int64_t to = s[1].to_int();
    CPUGenerator &g = gen_of(s[2], op);
    TP_CHECK(0 < to, Runtime, "random_ expects 'from' to be less than 'to', but got from=0 >= to=", to);
    r = fill_via_buffer(self, [&](void *p, int64_t n) { random_from_to_fill(g, self.dtype(), p, n, 0, to); });
  } else {
    CPUGenerator &g = gen_of(s[1], op);
    r = fill_via_buffer(self, [&](void *p, int64_t n) { random_fill(g, self.dtype(), p, n); });
  }
  s.clear();
  s.push_back(Value(r));
}

// One-parameter-pair samplers share a shape: (self, a, b, generator).
#define TP_SAMPLER2(name, fillfn, check)                                                          \
  static void name(const Operator &op, Stack &s, void *) {                                        \
    Tensor self = s[0].tensor;                                                                    \
    double a = s[1].to_double(), b = s[2].to_double();                                            \
    CPUGenerator &g = gen_of(s[3], op);                                                               \
    check;                                                                                        \
    Tensor r = fill_via_buffer(self, [&](void *p, int64_t n) { fillfn(g, self.dtype(), p, n, a, b); }); \
    s.clear();                                                                                    \
    s.push_back(Value(r));                                                                        \
  }
TP_SAMPLER2(cauchy_, cauchy_fill, (void)0)
TP_SAMPLER2(log_normal_, log_normal_fill,
            TP_CHECK(b > 0.0, Runtime, "log_normal_ expects std > 0.0, but found std=", b))

#define TP_SAMPLER1(name, fillfn)                                                                 \
  static void name(const Operator &op, Stack &s, void *) {                                        \
    Tensor self = s[0].tensor;                                                                    \
    double a = s[1].to_double();                                                                  \
    CPUGenerator &g = gen_of(s[2], op);                                                               \
    Tensor r = fill_via_buffer(self, [&](void *p, int64_t n) { fillfn(g, self.dtype(), p, n, a); }); \
    s.clear();                                                                                    \
    s.push_back(Value(r));                                                                        \
  }
TP_SAMPLER1(exponential_, exponential_fill)
TP_SAMPLER1(geometric_, geometric_fill)
TP_SAMPLER1(bernoulli_float_, bernoulli_scalar_fill)

// bernoulli(probs): a new tensor with element i ~ Bernoulli(probs[i]).
static void bernoulli(const Operator &op, Stack &s, void *) {
  Tensor probs = s[0].tensor;
  CPUGenerator &g = gen_of(s[1], op);
  Tensor out = empty_tensor(probs.sizes(), probs.dtype(), probs.device());
  if (!probs.device().is_meta() && probs.numel() > 0) {
    Tensor p = call_op(TP_OP("contiguous"), probs);
    bernoulli_tensor_fill(g, out.dtype(), out.data_ptr(), out.numel(), p.dtype(), p.data_ptr());
  }
  s.clear();
  s.push_back(Value(out));
}

static void randperm_(const Operator &op, Stack &s, void *) {
  int64_t n = s[0].to_int();
  CPUGenerator &g = gen_of(s[1], op);
  ScalarType dt = s[2].is_none() ? ScalarType::Int64 : s[2].dtype;
  Device dev = s[3].is_none() ? Device{} : s[3].device;
  TP_CHECK(n >= 0, Runtime, "randperm: n must be non-negative, got ", n);
  Tensor out = empty_tensor({n}, ScalarType::Int64, dev);
  if (!dev.is_meta()) {
    std::vector<int64_t> perm = randperm(g, n);
    std::copy(perm.begin(), perm.end(), out.data<int64_t>());
  }
  s.clear();
  s.push_back(Value(dt == ScalarType::Int64 ? out : call_op(TP_OP("to"), out, std::optional<ScalarType>(dt))));
}

static void multinomial_(const Operator &op, Stack &s, void *) {
  Tensor probs = s[0].tensor;
  int64_t k = s[1].to_int();
  bool replacement = s[2].to_bool();
  CPUGenerator &g = gen_of(s[3], op);
  TP_CHECK(probs.dim() == 1 || probs.dim() == 2, Runtime, "multinomial: prob_dist must be 1 or 2 dim, got ",
           probs.dim());
  TP_CHECK(is_floating(probs.dtype()), Runtime, "multinomial only supports floating-point dtypes for input, got ",
           scalar_type_name(probs.dtype()));
  TP_CHECK(k > 0, Runtime, "multinomial: cannot sample n_sample <= 0 samples");
  int64_t rows = probs.dim() == 1 ? 1 : probs.sizes()[0], cats = probs.sizes().back();
  TP_CHECK(replacement || k <= cats, Runtime, "multinomial: cannot sample n_sample > prob_dist.size(-1) samples "
           "without replacement");
  Shape shape = probs.dim() == 1 ? Shape{k} : Shape{rows, k};
  Tensor out = empty_tensor(shape, ScalarType::Int64, probs.device());
  if (!probs.device().is_meta()) {
    Tensor p = probs;
    if (p.dtype() != ScalarType::Float32 && p.dtype() != ScalarType::Float64)
      p = call_op(TP_OP("to"), p, std::optional<ScalarType>(ScalarType::Float32));
    p = call_op(TP_OP("contiguous"), p);
    multinomial(g, p.dtype(), p.data_ptr(), rows, cats, k, replacement, out.data<int64_t>());
  }
  s.clear();
  s.push_back(Value(out));
}

TP_LIBRARY(random) {
  lib.def("uniform_(Tensor(a!) self, float from=0, float to=1, *, Generator? generator=None) -> Tensor(a!)");
  lib.def("normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? generator=None) -> Tensor(a!)");
  lib.def("random_.from(Tensor(a!) self, int from, int? to, *, Generator? generator=None) -> Tensor(a!)");
  lib.def("random_.to(Tensor(a!) self, int to, *, Generator? generator=None) -> Tensor(a!)");
  lib.def("random_(Tensor(a!) self, *, Generator? generator=None) -> Tensor(a!)");
  lib.def("cauchy_(Tensor(a!) self, float median=0, float sigma=1, *, Generator? generator=None) -> Tensor(a!)");
  lib.def("log_normal_(Tensor(a!) self, float mean=1, float std=2, *, Generator? generator=None) -> Tensor(a!)");
  lib.def("exponential_(Tensor(a!) self, float lambd=1, *, Generator? generator=None) -> Tensor(a!)");
  lib.def("geometric_(Tensor(a!) self, float p, *, Generator? generator=None) -> Tensor(a!)");
  lib.def("bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)");
  lib.def("bernoulli(Tensor self, *, Generator? generator=None) -> Tensor");
  lib.def("randperm(int n, *, Generator? generator=None, ScalarType? dtype=None, Device? device=None) -> Tensor");
  lib.def("multinomial(Tensor self, int num_samples, bool replacement=False, *, Generator? generator=None) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) {
    lib.impl("uniform_", key, &uniform_, __LINE__);
    lib.impl("normal_", key, &normal_, __LINE__);
    lib.impl("random_.from", key, &random_, __LINE__);
    lib.impl("random_.to", key, &random_, __LINE__);
    lib.impl("random_", key, &random_, __LINE__);
    lib.impl("cauchy_", key, &cauchy_, __LINE__);
    lib.impl("log_normal_", key, &log_normal_, __LINE__);
    lib.impl("exponential_", key, &exponential_, __LINE__);
    lib.impl("geometric_", key, &geometric_, __LINE__);
    lib.impl("bernoulli_.float", key, &bernoulli_float_, __LINE__);
    lib.impl("bernoulli", key, &bernoulli, __LINE__);
    lib.impl("randperm", key, &randperm_, __LINE__);
    lib.impl("multinomial", key, &multinomial_, __LINE__);
  }
}

}  // namespace tp::p10
