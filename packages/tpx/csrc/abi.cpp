// abi.cpp — op lookup and the two ways TPX calls a P10 op (recorded, or below Autograd). See abi.h.
#include "abi.h"

namespace tp::tpx {

const TP_Api *api = nullptr;

const TP_Op *find_op(const char *name) {
  const TP_Op *op = api->op_find(name);
  if (!op)
    fail(TP_ERR_RUNTIME, std::string("tensorplay_tpx: tensorplay-p10 has no op '") + name +
                             "'; install matching versions of tensorplay-p10 and tensorplay-tpx");
  return op;
}

static TensorRef take_single(const TP_Op *op, TP_Value &out) {
  if (out.tag != TP_VALUE_TENSOR) {
    api->value_release(&out);
    fail(TP_ERR_RUNTIME, std::string(api->op_name(op)) + ": expected a tensor result");
  }
  return TensorRef::adopt(out.v.tensor);
}

TensorRef call1(const TP_Op *op, std::initializer_list<TP_Value> args) {
  TP_Value out{};
  if (api->op_call(op, args.begin(), int64_t(args.size()), &out, 1) != 0) throw_pending();
  return take_single(op, out);
}

TensorRef call1_below_autograd(const TP_Op *op, std::initializer_list<TP_Value> args) {
  TP_Value out{};
  if (api->op_redispatch(op, TP_KEY_AUTOGRAD, args.begin(), int64_t(args.size()), &out, 1) != 0) throw_pending();
  return take_single(op, out);
}

}  // namespace tp::tpx
