// embedding.cpp — the nn lookup and masking ops: embedding, one_hot, dropout, native_dropout.
//
// Where it sits: Composites of existing ops (STYLE.md rule 2), so they run on every device and autograd
// differentiates them through their parts: embedding is index_select on rows, one_hot a scatter_ into zeros,
// dropout a bernoulli_ mask (kernels/random.cpp) times the input.
//
// Note [Dropout stream]
//   PyTorch's CPU dropout draws noise = empty_like(input).bernoulli_(1 - p), divides it by (1 - p) and
//   multiplies: one bernoulli_ draw per element in the layout of empty_like. We make the same calls in the
//   same order, so the op consumes the generator exactly as PyTorch's does; the draws themselves are as equal
//   to PyTorch's as our bernoulli_ is.
#include "dispatch/kernel_box.h"
#include "kernels/binary_common.h"

namespace tp::p10 {

// ---- embedding ----------------------------------------------------------------------------------------------
// weight[indices]: rows of a 2-D weight picked by an index tensor of any shape; the result has shape
// indices.shape + [embedding_dim]. padding_idx, scale_grad_by_freq and sparse only change the gradient.
static Tensor embedding(const Tensor &weight, const Tensor &indices, int64_t padding_idx, bool scale_grad_by_freq,
                        bool sparse) {
  (void)padding_idx, (void)scale_grad_by_freq, (void)sparse;
  TP_CHECK(weight.dim() == 2, Runtime, "embedding: 'weight' must be 2-D, got a ", weight.dim(), "-D tensor");
  TP_CHECK(indices.dtype() == ScalarType::Int64 || indices.dtype() == ScalarType::Int32, Runtime,
           "embedding: Expected tensor for argument #1 'indices' to have one of the following scalar types: "
           "Long, Int; but got ", scalar_type_name(indices.dtype()));
  Tensor flat = call_op<Tensor>(TP_OP("reshape"), indices, Shape{-1});
  Tensor rows = call_op<Tensor>(TP_OP("index_select"), weight, int64_t(0), flat);
  Shape shape = indices.sizes();
  shape.push_back(weight.size(1));
  return call_op<Tensor>(TP_OP("view"), rows, shape);
}

// ---- one_hot ------------------------------------------------------------------------------------------------
// An int64 tensor of shape self.shape + [num_classes] with a 1 at each value; num_classes = -1 means max + 1.
static Tensor one_hot(const Tensor &self, int64_t num_classes) {
  TP_CHECK(self.dtype() == ScalarType::Int64, Runtime,
           "one_hot is only applicable to index tensor of type LongTensor.");
  TP_CHECK(num_classes >= -1, Runtime, "num_classes should be positive or -1, got ", num_classes);
  if (self.device().is_meta()) {
    TP_CHECK(num_classes != -1, Runtime, "one_hot: num_classes must be given for a meta tensor (its values are "
             "unknown)");
  } else if (self.numel() == 0) {
    TP_CHECK(num_classes > 0, Runtime, "Can not infer total number of classes from empty tensor.");
  } else {
    auto on_host = [](const Tensor &t) {  // a GPU's min/max is read on the host
      return call_op<Tensor>(TP_OP("to"), t, std::optional<ScalarType>(), std::optional<Device>(Device{}), false);
    };
    const int64_t lo = on_host(call_op<Tensor>(TP_OP("min"), self)).data<int64_t>()[0];
    const int64_t hi = on_host(call_op<Tensor>(TP_OP("max"), self)).data<int64_t>()[0];
    TP_CHECK(lo >= 0, Runtime, "Class values must be non-negative.");
    if (num_classes == -1) num_classes = hi + 1;
    TP_CHECK(hi < num_classes, Runtime, "Class values must be smaller than num_classes.");
  }
  Shape shape = self.sizes();
  shape.push_back(num_classes);
  Tensor out = call_op<Tensor>(TP_OP("full"), shape, Scalar(int64_t(0)), std::optional<ScalarType>(ScalarType::Int64),
                               std::optional<Device>(self.device()));
  Tensor where = call_op<Tensor>(TP_OP("unsqueeze"), self, int64_t(-1));
  return call_op<Tensor>(TP_OP("scatter_.value"), out, int64_t(-1), where, Scalar(int64_t(1)));
}

// ---- dropout ------------------------------------------------------------------------------------------------
static void check_dropout_p(double p) {
  TP_CHECK(p >= 0 && p <= 1, Value, "dropout probability has to be between 0 and 1, but got ", p);
}

// Zero each element with probability p and scale the rest by 1 / (1 - p) (Note [Dropout stream]). Not
// training, p = 0 or an empty input: the input itself, as in PyTorch.
static Tensor dropout(const Tensor &input, double p, bool train) {
  check_dropout_p(p);
  if (!train || p == 0 || input.numel() == 0) return input;
  if (p == 1) return call_op<Tensor>(TP_OP("mul"), input, wrapped_scalar(Scalar(0.0)));
  Tensor noise = empty_like_layout(input, input.dtype(), input.device());
  call_op<Tensor>(TP_OP("bernoulli_.float"), noise, 1.0 - p);
  call_op<Tensor>(TP_OP("div_"), noise, wrapped_scalar(Scalar(1.0 - p)));
  return call_op<Tensor>(TP_OP("mul"), input, noise);
}

// (output, mask): PyTorch's native_dropout, which also returns the bool mask of kept elements.
static std::tuple<Tensor, Tensor> native_dropout(const Tensor &input, double p, std::optional<bool> train) {
  check_dropout_p(p);
  if (train.value_or(true)) {
    const double keep = 1.0 - p, scale = keep == 0 ? 0.0 : 1.0 / keep;
    Tensor mask = empty_like_layout(input, input.dtype(), input.device());
    if (input.numel() > 0) call_op<Tensor>(TP_OP("bernoulli_.float"), mask, keep);
    Tensor out = call_op<Tensor>(TP_OP("mul"), input, mask);
    call_op<Tensor>(TP_OP("mul_"), out, wrapped_scalar(Scalar(scale)));
    // through the dispatcher (cast_to is the CPU copy loop, which refuses CUDA tensors)
    return {out, call_op<Tensor>(TP_OP("to"), mask, std::optional<ScalarType>(ScalarType::Bool))};
  }
  Tensor mask = call_op<Tensor>(TP_OP("full"), input.sizes(), Scalar(int64_t(1)), std::optional<ScalarType>(ScalarType::Bool),
                                std::optional<Device>(input.device()));
  return {call_op<Tensor>(TP_OP("clone"), input), mask};
}

TP_LIBRARY(embedding) {
  lib.def("embedding(Tensor weight, Tensor indices, int padding_idx=-1, bool scale_grad_by_freq=False, "
          "bool sparse=False) -> Tensor");
  lib.def("one_hot(Tensor self, int num_classes=-1) -> Tensor");
  lib.def("dropout(Tensor input, float p, bool train) -> Tensor");
  lib.def("native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)");
  TP_IMPL(lib, "embedding", Composite, embedding);
  TP_IMPL(lib, "one_hot", Composite, one_hot);
  TP_IMPL(lib, "dropout", Composite, dropout);
  TP_IMPL(lib, "native_dropout", Composite, native_dropout);
}

}  // namespace tp::p10
