// random_bernoulli.cpp — bernoulli_(p: Tensor): the in-place Bernoulli sampler with one probability per element.
//
// Where it sits: beside kernels/random.cpp, which has bernoulli_(p: float) and the factory bernoulli(probs);
// this is the Tensor overload of the method, `x.bernoulli_(probs)`. The arithmetic is distributions.h's
// bernoulli_tensor_fill, the same draws PyTorch's CPU kernel makes (a 53-bit double uniform against a float64
// probability, a 24-bit float one against any other).
#include <algorithm>
#include <numeric>

#include "dispatch/kernel_box.h"
#include "random/distributions.h"

namespace tp::p10 {

// Note [Bernoulli tensor order]
//   PyTorch expands p to self's shape and walks both with a TensorIterator whose output is self: dims sorted by
//   self's strides, largest outermost (random.cpp's Note [Random fill order]). We permute self and the
//   expanded p the same way, make p's view contiguous, and fill self's view directly when it is contiguous, or
//   a contiguous temporary copied into it otherwise. Draw i then meets the probability PyTorch's draw i meets.
static void bernoulli_tensor_(const Operator &, Stack &s, void *) {
  Tensor self = s[0].tensor, p = s[1].tensor;
  CPUGenerator &g = cpu_generator(s[2], "bernoulli_");
  TP_CHECK(is_floating(p.dtype()), Runtime, "bernoulli_: expected a floating point tensor of probabilities, got ",
           scalar_type_name(p.dtype()));
  TP_CHECK(is_expandable_to(p.sizes(), self.sizes()), Runtime, "bernoulli_: the probabilities of shape ",
           shape_str(p.sizes()), " must broadcast to self's shape ", shape_str(self.sizes()));
  self.bump_version();
  if (self.device().is_meta() || self.numel() == 0) {
    s.clear();
    s.push_back(Value(self));
    return;
  }
  std::vector<int64_t> perm(size_t(self.dim()));
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(),
                   [&](int64_t a, int64_t b) { return self.strides()[size_t(a)] > self.strides()[size_t(b)]; });
  Tensor ordered = call_op<Tensor>(TP_OP("permute"), self, perm);
  Tensor pe = call_op<Tensor>(TP_OP("expand"), p, self.sizes());
  Tensor po = call_op<Tensor>(TP_OP("contiguous"), call_op<Tensor>(TP_OP("permute"), pe, perm));
  if (ordered.is_contiguous()) {
    bernoulli_tensor_fill(g, self.dtype(), ordered.data_ptr(), ordered.numel(), po.dtype(), po.data_ptr());
  } else {
    Tensor tmp = empty_tensor(ordered.sizes(), self.dtype(), self.device());
    bernoulli_tensor_fill(g, self.dtype(), tmp.data_ptr(), tmp.numel(), po.dtype(), po.data_ptr());
    call_op<Tensor>(TP_OP("copy_"), ordered, tmp);
  }
  s.clear();
  s.push_back(Value(self));
}

TP_LIBRARY(random_bernoulli) {
  lib.def("bernoulli_.Tensor(Tensor(a!) self, Tensor p, *, Generator? generator=None) -> Tensor(a!)");
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta})
    lib.impl("bernoulli_.Tensor", key, &bernoulli_tensor_, __LINE__);
}

}  // namespace tp::p10
