// ops_sample.cpp — the CUDA kernel of tp.sample (kernels/sample.cpp): the next token of each row of logits, by
// temperature, top-k and top-p, drawn from `generator=` or the device's Philox generator (cuda/philox.h).
//
// Where it sits: nn.generation calls sample once per generated token. The CPU op is one pass per row in float64;
// on the GPU the same rule is a short chain of CUDA ops, each a kernel tested on its own (argmax, topk, softmax,
// a stable sort, cumsum, scatter, multinomial), so this file holds the rule and no arithmetic of its own.
//
// Note [Sampling on CUDA]
//   Note [Sampling rule] (kernels/sample.cpp), step for step, on a [rows, V] float64 copy of the logits:
//     greedy (temperature <= 1e-5): argmax of each row (NaN counts as the largest, the first of equal maxima);
//     otherwise z = logits / temperature, then
//     0. the CPU op's errors, per row in order: "contains NaN or +inf", "every logit ... is -inf" (two bool
//        rows read back in one synchronising copy, as the index ops read their error flags);
//     1. top_k (0 < k < V): z below the row's k-th largest value (topk's last) becomes -inf, so ties at the
//        boundary stay, as on the CPU;
//     2. p = softmax(z);
//     3. top_p (< 1): p sorted descending, stable (ties by index, the CPU's order); a token stays when the sum of
//        the probabilities sorted before it is below top_p (the CPU's loop adds tokens until the running sum
//        reaches top_p, so the most likely token always stays); the kept values are scattered back, the others
//        become 0;
//     4. one draw per row from the unnormalised p: multinomial(p, 1, replacement=True) (random.cu's float64
//        cdf and one Philox uniform per row; a zero-probability token is never drawn).
//   The draws are TensorPlay's Philox streams, not the CPU's mt19937 ones: the same seed gives the same tokens
//   on the GPU run after run (tp.cuda.manual_seed), and the same distribution as the CPU, not the same values.
#include <cmath>

#include "cuda/ops_common.h"
#include "cuda/ops_meta.h"
#include "cuda/sort.h"
#include "kernels/binary_common.h"

namespace tp::p10::cuda {

namespace {
const char *kOp = "sample";

Tensor number(double v) { return wrapped_scalar(Scalar(v)); }

// Step 0 of Note [Sampling on CUDA]: the CPU op's errors for the first row that has one.
void check_rows(const Tensor &z, int64_t rows) {
  const Tensor bad = call_op<Tensor>(TP_OP("logical_or"), call_op<Tensor>(TP_OP("isnan"), z),
                                     call_op<Tensor>(TP_OP("eq"), z, number(INFINITY)));
  const Tensor dead = call_op<Tensor>(TP_OP("eq"), z, number(-INFINITY));
  const std::vector<int64_t> last{1};
  const std::vector<Tensor> flags{
      call_op<Tensor>(TP_OP("any"), bad, std::optional<std::vector<int64_t>>(last), false),
      call_op<Tensor>(TP_OP("all"), dead, std::optional<std::vector<int64_t>>(last), false)};
  const Tensor h = to_host(call_op<Tensor>(TP_OP("stack"), flags, int64_t(0)));  // [2, rows] bool
  const bool *f = h.data<bool>();
  for (int64_t r = 0; r < rows; ++r) {
    TP_CHECK(!f[r], Runtime, kOp, "(): logits row ", r, " contains NaN or +inf");
    TP_CHECK(!f[rows + r], Runtime, kOp, "(): every logit of row ", r, " is -inf");
  }
}

// Step 3: the top-p filter of the probability rows p [rows, V].
Tensor top_p_filter(const Tensor &p, double top_p) {
  const auto sorted = call_op<std::tuple<Tensor, Tensor>>(TP_OP("sort"), p, int64_t(1), true,
                                                         std::optional<bool>(true));
  const Tensor &sp = std::get<0>(sorted), &order = std::get<1>(sorted);
  const Tensor cum = call_op<Tensor>(TP_OP("cumsum"), sp, int64_t(1), std::optional<ScalarType>());
  const Tensor before = call_op<Tensor>(TP_OP("sub"), cum, sp);  // the sum of the probabilities sorted before
  const Tensor kept = call_op<Tensor>(TP_OP("where"), call_op<Tensor>(TP_OP("lt"), before, number(top_p)), sp,
                                      number(0.0));
  return call_op<Tensor>(TP_OP("scatter.src"), p, int64_t(1), order, kept, std::optional<std::string>());
}
// Note [Sampling on CUDA] on x, [rows, V] float64 logits: the picks, int64 [rows] or [rows, 1]. Only dispatched
// ops and a host read of two flag rows, so it runs on any device; `gen` (the op's generator argument) goes on
// to multinomial.
Tensor sample_rows(const Tensor &x, double temperature, int64_t top_k, double top_p, const Value &gen) {
  if (temperature <= 1e-5) return call_op<Tensor>(TP_OP("argmax"), x, std::optional<int64_t>(1), false);
  const int64_t rows = x.size(0), v = x.size(1);
  Tensor z = call_op<Tensor>(TP_OP("div"), x, number(temperature), std::optional<std::string>());
  check_rows(z, rows);
  if (top_k > 0 && top_k < v) {
    const Tensor vals = std::get<0>(call_op<std::tuple<Tensor, Tensor>>(TP_OP("topk"), z, top_k, int64_t(1), true,
                                                                       true));
    const Tensor cut = call_op<Tensor>(TP_OP("narrow"), vals, int64_t(1), top_k - 1, int64_t(1));  // [rows, 1]
    z = call_op<Tensor>(TP_OP("where"), call_op<Tensor>(TP_OP("ge"), z, cut), z, number(-INFINITY));
  }
  Tensor p = call_op<Tensor>(TP_OP("softmax.int"), z, int64_t(1), std::optional<ScalarType>());
  if (top_p < 1.0) p = top_p_filter(p, top_p);
  Stack draw{Value(p), Value::from_int(1), Value::from_bool(true), gen};
  call(TP_OP("multinomial"), draw);
  return draw[0].tensor;
}
}  // namespace

static void sample(const Operator &, Stack &s, void *) {
  const Tensor logits = s[0].tensor;
  const Value gen = s[4];
  check_cuda_generator(gen, kOp);
  {  // the CPU op on a meta copy: logits' dims and dtype, top_p in (0, 1], temperature >= 0, an empty vocabulary
    Stack meta{Value(meta_like(logits)), s[1], s[2], s[3], Value()};
    call(TP_OP("sample"), meta);
  }
  const double temperature = s[1].to_double(), top_p = s[3].to_double();
  const int64_t top_k = s[2].to_int();
  const int dev = common_device(kOp, {logits}, false);
  DeviceGuard guard(dev);
  const Device device{DeviceType::CUDA, int8_t(dev)};
  const int64_t v = logits.sizes().back(), rows = logits.dim() == 1 ? 1 : logits.size(0);
  const Shape out_shape = logits.dim() == 1 ? Shape{} : Shape{rows};
  s.clear();
  if (rows == 0) {
    s.push_back(Value(empty_tensor(out_shape, ScalarType::Int64, device)));
    return;
  }
  const Tensor x = call_op<Tensor>(TP_OP("view"), contiguous_as(logits, ScalarType::Float64),
                                   std::vector<int64_t>{rows, v});
  s.push_back(Value(call_op<Tensor>(TP_OP("reshape"), sample_rows(x, temperature, top_k, top_p, gen),
                                    std::vector<int64_t>(out_shape.begin(), out_shape.end()))));
}

TP_LIBRARY(cuda_sample) { TP_IMPL_BOXED(lib, "sample", CUDA, &sample); }

}  // namespace tp::p10::cuda
