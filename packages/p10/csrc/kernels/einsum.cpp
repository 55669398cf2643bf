// einsum.cpp — einsum(equation, tensors): parse the equation, then contract pairwise with bmm.
//
// Where it sits: built on ops from other files (diagonal, permute, reshape, expand, bmm, mv); no loop of its own.
// Steps, as in PyTorch's einsum:
//   1. parse: one subscript string per operand, "..." for broadcast dims, an explicit output after "->" or the
//      implicit one (labels used once, in alphabetical order, after the ellipsis dims);
//   2. per operand: a repeated label takes the diagonal, so each operand has one dim per distinct label;
//   3. a label used by one operand only and absent from the output is summed out at once;
//   4. pairs are contracted in the greedy order of Note [einsum contraction order], each as permute + reshape +
//      bmm with the shared labels as the batch, the summed labels as k;
//   5. the last operand is permuted into the output order.
#include <algorithm>
#include <map>

#include "dispatch/kernel_box.h"
#include "kernels/blas.h"

namespace tp::p10 {

namespace {

constexpr int kLetters = 52;  // 'A'-'Z' are labels 0-25, 'a'-'z' 26-51; ellipsis dims get labels from 52 on

int label_of(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 : -1; }
char letter_of(int l) { return char(l < 26 ? 'A' + l : 'a' + l - 26); }

// One operand during the contraction: a tensor with one dim per entry of `labels`.
struct Term {
  Tensor t;
  std::vector<int> labels;
};

// Parsed subscripts of one operand: letters, with -1 marking where "..." stood (at most once).
std::vector<int> parse_subscripts(const std::string &s, const char *where) {
  std::vector<int> out;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == ' ') continue;
    if (c == '.') {
      TP_CHECK(s.compare(i, 3, "...") == 0, Runtime, "einsum(): found '.' for ", where,
               " that is not part of any ellipsis");
      TP_CHECK(std::find(out.begin(), out.end(), -1) == out.end(), Runtime, "einsum(): found '.' for ", where,
               " for which an ellipsis was already found");
      out.push_back(-1);
      i += 2;
      continue;
    }
    TP_CHECK(label_of(c) >= 0, Runtime, "einsum(): invalid subscript given at index ", i,
             " in the equation string, subscripts must be in [a-zA-Z]");
    out.push_back(label_of(c));
  }
  return out;
}

Tensor op_permute(const Tensor &t, const Shape &p) { return call_op<Tensor>(TP_OP("permute"), t, p); }
Tensor op_reshape(const Tensor &t, const Shape &s) { return call_op<Tensor>(TP_OP("reshape"), t, s); }

// Reorder a term's dims to `order` (a permutation of its labels).
Term arrange(const Term &x, const std::vector<int> &order) {
  Shape perm;
  for (int l : order) perm.push_back(std::find(x.labels.begin(), x.labels.end(), l) - x.labels.begin());
  return {op_permute(x.t, perm), order};
}

int64_t size_of(const Term &x, int label) {
  auto it = std::find(x.labels.begin(), x.labels.end(), label);
  return it == x.labels.end() ? 1 : x.t.size(it - x.labels.begin());
}

// Sum out the labels of `x` in `drop`: a matrix-vector product with a vector of ones.
Term sum_out(const Term &x, const std::vector<int> &drop) {
  if (drop.empty()) return x;
  std::vector<int> keep, order;
  Shape kept_sizes;
  int64_t k = 1;
  for (int l : x.labels)
    if (std::find(drop.begin(), drop.end(), l) == drop.end()) { keep.push_back(l); kept_sizes.push_back(size_of(x, l)); }
  for (int l : drop) k *= size_of(x, l);
  order = keep;
  order.insert(order.end(), drop.begin(), drop.end());
  Term a = arrange(x, order);
  Tensor mat = op_reshape(a.t, {shape_numel(kept_sizes), k});
  Tensor ones = call_op<Tensor>(TP_OP("full"), Shape{k}, Scalar(1), std::optional<ScalarType>(x.t.dtype()),
                                std::optional<Device>(x.t.device()));
  return {op_reshape(call_op<Tensor>(TP_OP("mv"), mat, ones), kept_sizes), keep};
}

// Contract two terms over the labels they share that are not `needed` later: batch = shared and needed,
// contracted = shared and not needed; free labels of each side stay. Sizes of 1 broadcast (ellipsis dims).
Term contract(const Term &a, const Term &b, const std::vector<bool> &needed) {
  std::vector<int> batch, ka, fa, fb;
  for (int l : a.labels) {
    bool in_b = std::find(b.labels.begin(), b.labels.end(), l) != b.labels.end();
    (in_b ? (needed[l] ? batch : ka) : fa).push_back(l);
  }
  for (int l : b.labels)
    if (std::find(a.labels.begin(), a.labels.end(), l) == a.labels.end()) fb.push_back(l);
  auto prod = [](const Term &x, const Term &y, const std::vector<int> &ls, Shape *sizes) {
    int64_t p = 1;
    for (int l : ls) {
      int64_t s = std::max(size_of(x, l), size_of(y, l));
      if (sizes) sizes->push_back(s);
      p *= s;
    }
    return p;
  };
  Shape bs, fas, fbs, ks;
  int64_t nb = prod(a, b, batch, &bs), m = prod(a, b, fa, &fas), n = prod(a, b, fb, &fbs), k = prod(a, b, ka, &ks);
  std::vector<int> oa = batch, ob = batch;
  oa.insert(oa.end(), fa.begin(), fa.end());
  oa.insert(oa.end(), ka.begin(), ka.end());
  ob.insert(ob.end(), ka.begin(), ka.end());
  ob.insert(ob.end(), fb.begin(), fb.end());
  Shape ea = bs, eb = bs;  // expand the size-1 (broadcast) dims of shared labels to the common size
  ea.insert(ea.end(), fas.begin(), fas.end());
  ea.insert(ea.end(), ks.begin(), ks.end());
  eb.insert(eb.end(), ks.begin(), ks.end());
  eb.insert(eb.end(), fbs.begin(), fbs.end());
  Tensor ta = call_op<Tensor>(TP_OP("expand"), arrange(a, oa).t, ea);
  Tensor tb = call_op<Tensor>(TP_OP("expand"), arrange(b, ob).t, eb);
  Tensor r = call_op<Tensor>(TP_OP("bmm"), op_reshape(ta, {nb, m, k}), op_reshape(tb, {nb, k, n}));
  Shape shape = bs;
  shape.insert(shape.end(), fas.begin(), fas.end());
  shape.insert(shape.end(), fbs.begin(), fbs.end());
  std::vector<int> labels = batch;
  labels.insert(labels.end(), fa.begin(), fa.end());
  labels.insert(labels.end(), fb.begin(), fb.end());
  return {op_reshape(r, shape), labels};
}

}  // namespace

static Tensor einsum(const std::string &equation, const std::vector<Tensor> &tensors, std::optional<std::vector<int64_t>> path) {
  // 1. parse
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<std::vector<int>> subs;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    subs.push_back(parse_subscripts(lhs.substr(start, comma - start), "operand"));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  TP_CHECK(!tensors.empty(), Value, "einsum(): must provide at least one operand");
  TP_CHECK(subs.size() <= tensors.size(), Runtime, "einsum(): fewer operands were provided than specified in the equation");
  TP_CHECK(subs.size() >= tensors.size(), Runtime, "einsum(): more operands were provided than specified in the equation");
  for (size_t i = 1; i < tensors.size(); ++i)
    TP_CHECK(tensors[i].dtype() == tensors[0].dtype(), Runtime, "expected scalar type ",
             scalar_type_name(tensors[0].dtype()), " but found ", scalar_type_name(tensors[i].dtype()));

  // 2. per operand: the ellipsis dims become labels kLetters + j, aligned from the right across operands (they
  //    broadcast like NumPy's trailing dims); a repeated label takes the diagonal.
  std::vector<int64_t> ell(subs.size());
  int64_t ell_dims = 0;
  for (size_t i = 0; i < subs.size(); ++i) {
    const Tensor &t = tensors[i];
    bool has_ell = std::find(subs[i].begin(), subs[i].end(), -1) != subs[i].end();
    int64_t letters = int64_t(subs[i].size()) - has_ell;
    TP_CHECK(has_ell ? letters <= t.dim() : letters == t.dim(), Runtime, "einsum(): the number of subscripts in the "
             "equation (", letters, ") ", has_ell ? "is more than" : "does not match", " the number of dimensions (",
             t.dim(), ") for operand ", i, has_ell ? "" : " and no ellipsis was given");
    ell[i] = t.dim() - letters;
    ell_dims = std::max(ell_dims, ell[i]);
  }
  std::vector<Term> terms;
  for (size_t i = 0; i < subs.size(); ++i) {
    Term x{tensors[i], {}};
    for (int l : subs[i]) {
      if (l >= 0) x.labels.push_back(l);
      else
        for (int64_t j = 0; j < ell[i]; ++j) x.labels.push_back(int(kLetters + ell_dims - ell[i] + j));
    }
    for (bool again = true; again;) {  // take diagonals until every label is distinct
      again = false;
      for (size_t p = 0; p < x.labels.size() && !again; ++p)
        for (size_t q = p + 1; q < x.labels.size() && !again; ++q) {
          if (x.labels[p] != x.labels[q]) continue;
          TP_CHECK(x.t.size(p) == x.t.size(q), Runtime, "einsum(): subscript ", letter_of(x.labels[p]),
                   " is repeated for operand ", i, " but the sizes don't match, ", x.t.size(p), " != ", x.t.size(q));
          // diagonal() removes dims p and q and appends their diagonal as the last dim
          x.t = call_op<Tensor>(TP_OP("diagonal"), x.t, int64_t(0), int64_t(p), int64_t(q));
          int l = x.labels[p];
          x.labels.erase(x.labels.begin() + q);
          x.labels.erase(x.labels.begin() + p);
          x.labels.push_back(l);
          again = true;
        }
    }
    terms.push_back(std::move(x));
  }
  // A label's size must agree across operands (or be 1, which broadcasts): checked here so that the message
  // names einsum and the subscript, not the expand that would fail later.
  std::map<int, int64_t> seen;
  for (size_t i = 0; i < terms.size(); ++i)
    for (size_t p = 0; p < terms[i].labels.size(); ++p) {
      int l = terms[i].labels[p];
      int64_t s = terms[i].t.size(int64_t(p));
      auto [it, fresh] = seen.emplace(l, s);
      if (fresh || s == it->second || s == 1) continue;
      TP_CHECK(it->second == 1, Runtime, "einsum(): subscript ", letter_of(l), " has size ", s, " for operand ", i,
               " which does not broadcast with previously seen size ", it->second);
      it->second = s;
    }
  std::vector<int> count(kLetters, 0);  // how often each letter occurs in the inputs (repeats included)
  for (const auto &sub : subs)
    for (int l : sub)
      if (l >= 0) ++count[l];

  // the output labels
  std::vector<int> out;
  if (arrow == std::string::npos) {
    for (int64_t j = 0; j < ell_dims; ++j) out.push_back(int(kLetters + j));
    for (int l = 0; l < kLetters; ++l)
      if (count[l] == 1) out.push_back(l);
  } else {
    for (int l : parse_subscripts(equation.substr(arrow + 2), "the output")) {
      if (l == -1) {
        for (int64_t j = 0; j < ell_dims; ++j) out.push_back(int(kLetters + j));
        continue;
      }
      TP_CHECK(count[l] > 0, Runtime, "einsum(): output subscript ", letter_of(l),
               " does not appear in the equation for any input operand");
      TP_CHECK(std::find(out.begin(), out.end(), l) == out.end(), Runtime, "einsum(): output subscript ", letter_of(l),
               " appears more than once in the output");
      out.push_back(l);
    }
  }

  // needed[l]: label l is in the output or in some operand other than the ones being combined
  const int nlabels = int(kLetters + ell_dims);
  auto uses = [&](const std::vector<Term> &ts, int skip_a, int skip_b) {
    std::vector<bool> need(nlabels, false);
    for (int l : out) need[l] = true;
    for (int i = 0; i < int(ts.size()); ++i)
      if (i != skip_a && i != skip_b)
        for (int l : ts[i].labels) need[l] = true;
    return need;
  };

  // 3. sum out labels only one operand has and the output lacks
  for (int i = 0; i < int(terms.size()); ++i) {
    std::vector<bool> need = uses(terms, i, -1);
    std::vector<int> drop;
    for (int l : terms[i].labels) if (!need[l]) drop.push_back(l);
    terms[i] = sum_out(terms[i], drop);
  }

  // 4. Note [einsum contraction order]
  //   Greedy, like opt_einsum's "greedy" in its simplest form: among all pairs of remaining operands, contract
  //   the pair whose contraction costs least, the cost being the multiply-adds of that bmm (the product of the
  //   sizes of every label either operand has); ties go to the lowest pair of indices. This keeps chains like
  //   "ij,jk,kl->il" from forming a large intermediate when a cheap order exists. `path` (pairs of operand
  //   indices into the current list, as in torch.einsum with opt_einsum) overrides the choice.
  size_t step = 0;
  while (terms.size() > 1) {
    int bi = 0, bj = 1;
    if (path && step * 2 + 1 < path->size()) {
      bi = int((*path)[step * 2]);
      bj = int((*path)[step * 2 + 1]);
      TP_CHECK(bi != bj && bi >= 0 && bj >= 0 && bi < int(terms.size()) && bj < int(terms.size()), Runtime,
               "einsum(): invalid contraction path entry (", bi, ", ", bj, ")");
      if (bi > bj) std::swap(bi, bj);
    } else {
      double best = -1;
      for (int i = 0; i < int(terms.size()); ++i)
        for (int j = i + 1; j < int(terms.size()); ++j) {
          double cost = 1;
          std::vector<int> seen;
          for (const Term *x : {&terms[i], &terms[j]})
            for (int l : x->labels)
              if (std::find(seen.begin(), seen.end(), l) == seen.end()) {
                seen.push_back(l);
                cost *= double(std::max(size_of(terms[i], l), size_of(terms[j], l)));
              }
          if (best < 0 || cost < best) { best = cost; bi = i; bj = j; }
        }
    }
    Term c = contract(terms[bi], terms[bj], uses(terms, bi, bj));
    terms.erase(terms.begin() + bj);
    terms.erase(terms.begin() + bi);
    terms.push_back(std::move(c));
    ++step;
  }

  // 5. output order; an ellipsis label no operand had (fewer dims than ell_dims) is a size-1 dim
  Term r = terms[0];
  std::vector<int> order;
  Shape shape;
  for (int l : out) {
    shape.push_back(size_of(r, l));
    if (std::find(r.labels.begin(), r.labels.end(), l) != r.labels.end()) order.push_back(l);
  }
  return op_reshape(arrange(r, order).t, shape);
}

TP_LIBRARY(einsum) {
  lib.def("einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor");
  // Every step is a dispatched op (permute, reshape, bmm, mv, diagonal, ...): the same code serves CUDA.
  for (auto key : {DispatchKey::CPU, DispatchKey::Meta, DispatchKey::CUDA})
    impl_typed<einsum>(lib, "einsum", key, __LINE__);
}

}  // namespace tp::p10
