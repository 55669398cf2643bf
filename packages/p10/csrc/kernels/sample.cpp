// sample.cpp — tp.sample: pick the next token from logits, the step at the heart of text generation.
//
//   sample(Tensor logits, float temperature=1.0, int top_k=0, float top_p=1.0, *, Generator? generator=None)
//     logits [B, V] -> int64 [B];  logits [V] -> int64 0-d
//
// Where it sits: nn.generation (the LLM stack) calls it once per generated token. It is one op rather than a
// Python chain of softmax/topk/sort/cumsum/multinomial because the chain launches a dozen ops per step for one
// draw per row; here each row is a single pass in float64 on the CPU.
//
// Note [Sampling rule]
//   temperature <= 1e-5 is greedy: the index of the row's largest logit (the first one among equal maxima, as
//   argmax). Otherwise, per row:
//     1. p = softmax(logits / temperature), in float64;
//     2. top_k: if 0 < top_k < V, keep the tokens whose logit is >= the k-th largest (so ties at the boundary
//        are all kept), then renormalise;
//     3. top_p: if top_p < 1, sort the kept tokens by probability (descending, ties by index) and keep the
//        shortest prefix whose cumulative probability reaches top_p; the most likely token always survives;
//     4. draw one index from the kept probabilities with torch.multinomial's rule (random/distributions.h), from
//        `generator` or the default one, so tp.manual_seed makes it reproducible; for one row it is
//        `torch.multinomial(p_filtered, 1)` under the same seed, drawing from float64 probabilities.
//   This is the order Hugging Face's generate() applies its top-k and top-p warpers in.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "dispatch/kernel_box.h"
#include "loop/tensor_iterator.h"
#include "random/distributions.h"

namespace tp::p10 {

// The filtered, renormalised distribution of one row (steps 1-3 above); `z` holds logits / temperature.
static void filter_row(std::vector<double> &z, int64_t top_k, double top_p, std::vector<double> &p) {
  const int64_t v = int64_t(z.size());
  const double zmax = *std::max_element(z.begin(), z.end());
  p.assign(size_t(v), 0.0);
  double cut = -INFINITY;
  if (top_k > 0 && top_k < v) {
    std::vector<double> sorted = z;
    std::nth_element(sorted.begin(), sorted.begin() + (top_k - 1), sorted.end(), std::greater<double>());
    cut = sorted[size_t(top_k - 1)];
  }
  double total = 0;
  for (int64_t i = 0; i < v; ++i) {
    if (z[size_t(i)] >= cut) {
      p[size_t(i)] = std::exp(z[size_t(i)] - zmax);
      total += p[size_t(i)];
    }
  }
  for (double &x : p) x /= total;
  if (top_p >= 1.0) return;
  std::vector<int64_t> order(static_cast<size_t>(v));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return p[size_t(a)] > p[size_t(b)]; });
  double cum = 0;
  int64_t keep = 0;
  while (keep < v && p[size_t(order[size_t(keep)])] > 0) {
    cum += p[size_t(order[size_t(keep)])];
    ++keep;
    if (cum >= top_p) break;
  }
  keep = std::max<int64_t>(keep, 1);
  double kept = 0;
  for (int64_t j = 0; j < v; ++j) {
    double &x = p[size_t(order[size_t(j)])];
    if (j < keep) kept += x;
    else x = 0;
  }
  for (double &x : p) x /= kept;
}

static void sample(const Operator &, Stack &s, void *) {
  const char *op = "sample";
  Tensor logits = s[0].tensor;
  const double temperature = s[1].to_double();
  const int64_t top_k = s[2].to_int();
  const double top_p = s[3].to_double();
  TP_CHECK(logits.defined(), Type, op, "(): logits must be a tensor");
  TP_CHECK(logits.dim() == 1 || logits.dim() == 2, Runtime, op, "(): expected logits of shape [V] or [B, V], got ",
           logits.dim(), "-d logits of shape ", shape_str(logits.sizes()));
  TP_CHECK(is_floating(logits.dtype()), Runtime, op, "(): expected floating-point logits, got ",
           scalar_type_name(logits.dtype()));
  TP_CHECK(top_p > 0 && top_p <= 1, Value, op, "(): top_p must be in (0, 1], got ", top_p);
  TP_CHECK(temperature >= 0, Value, op, "(): temperature must be >= 0, got ", temperature);
  const int64_t v = logits.sizes().back();
  const int64_t rows = logits.dim() == 1 ? 1 : logits.sizes()[0];
  TP_CHECK(v > 0 || rows == 0, Runtime, op, "(): cannot sample from an empty vocabulary (logits of shape ",
           shape_str(logits.sizes()), ")");
  Tensor out = empty_tensor(logits.dim() == 1 ? Shape{} : Shape{rows}, ScalarType::Int64, logits.device());
  if (!logits.device().is_meta() && rows > 0) {
    TP_CHECK(logits.device().is_cpu(), NotImplemented, op, "() on ", device_str(logits.device()),
             " needs that device's backend");
    Tensor x = call_op<Tensor>(TP_OP("contiguous"), cast_to(logits, ScalarType::Float64));
    const double *px = x.data<double>();
    int64_t *po = out.data<int64_t>();
    const bool greedy = temperature <= 1e-5;
    CPUGenerator &g = cpu_generator(s[4], "sample");
    std::vector<double> z(static_cast<size_t>(v)), p;
    for (int64_t r = 0; r < rows; ++r) {
      const double *row = px + r * v;
      if (greedy) {
        int64_t best = 0;
        for (int64_t i = 1; i < v; ++i)  // NaN counts as the largest, as in argmax
          if (row[i] > row[best] || (std::isnan(row[i]) && !std::isnan(row[best]))) best = i;
        po[r] = best;
        continue;
      }
      for (int64_t i = 0; i < v; ++i) z[size_t(i)] = row[i] / temperature;
      TP_CHECK(std::all_of(z.begin(), z.end(), [](double t) { return !std::isnan(t) && t != INFINITY; }), Runtime,
               op, "(): logits row ", r, " contains NaN or +inf");
      TP_CHECK(std::any_of(z.begin(), z.end(), [](double t) { return t != -INFINITY; }), Runtime, op,
               "(): every logit of row ", r, " is -inf");
      filter_row(z, top_k, top_p, p);
      multinomial(g, ScalarType::Float64, p.data(), 1, v, 1, false, po + r);
    }
  }
  s.clear();
  s.push_back(Value(out));
}

TP_LIBRARY(sample) {
  lib.def("sample(Tensor logits, float temperature=1.0, int top_k=0, float top_p=1.0, *, "
          "Generator? generator=None) -> Tensor");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta}) lib.impl("sample", key, &sample, __LINE__);
}

}  // namespace tp::p10
