// schema.cpp — a small recursive-descent parser for op schemas (grammar in schema.h).
#include "dispatch/schema.h"

#include <cctype>
#include <cstdlib>

namespace tp::p10 {

const char *arg_type_name(ArgType t) {
  static const char *names[] = {"Tensor", "Tensor[]", "int", "int[]", "float", "bool", "Scalar",
                                "ScalarType", "Device", "str", "Generator"};
  return names[int(t)];
}

std::string Argument::type_text() const {
  if (optional_elements) return "Tensor?[]";
  return std::string(arg_type_name(type)) + (optional ? "?" : "");
}

std::string Schema::qualified_name() const {
  return base_name() + (overload.empty() ? "" : "." + overload);
}
std::string Schema::base_name() const { return ns.empty() ? name : ns + "::" + name; }

bool Schema::is_view_op() const {
  if (args.empty() || returns.empty()) return false;
  const Argument &self = args[0];
  if (self.alias_set.empty() || self.is_write) return false;
  for (const Argument &r : returns)
    if (r.alias_set != self.alias_set || r.is_write) return false;
  return true;
}

namespace {

struct Parser {
  const std::string &s;
  size_t pos = 0;

  [[noreturn]] void error(const std::string &what) const {
    fail(ErrorKind::Value, "invalid op schema '", s, "': ", what, " at position ", pos);
  }
  void skip_ws() { while (pos < s.size() && std::isspace((unsigned char)s[pos])) ++pos; }
  bool accept(const char *tok) {
    skip_ws();
    size_t n = std::char_traits<char>::length(tok);
    if (s.compare(pos, n, tok) == 0) { pos += n; return true; }
    return false;
  }
  void expect(const char *tok) { if (!accept(tok)) error(std::string("expected '") + tok + "'"); }
  std::string ident() {
    skip_ws();
    size_t start = pos;
    while (pos < s.size() && (std::isalnum((unsigned char)s[pos]) || s[pos] == '_')) ++pos;
    if (start == pos) error("expected a name");
    return s.substr(start, pos - start);
  }

  std::string alias_name() {
    if (accept("*")) return "*";
    return ident();
  }

  // After "Tensor(": a | a! | a -> * | a! -> b, then ")" (Note [Alias annotations] in schema.h).
  void parse_alias(Argument &a, const std::string &type) {
    if (type != "Tensor") error("alias annotations apply to Tensor only, not '" + type + "'");
    a.alias_set = alias_name();
    if (accept("!")) a.is_write = true;
    if (accept("->")) a.alias_after = alias_name();
    if (!accept(")")) error("expected ')' to close the alias annotation");
  }

  // type: Tensor | Tensor(a!) | Tensor[] | Tensor(a)[] | int[2] | int? | Scalar? ...
  void parse_type(Argument &a) {
    std::string t = ident();
    if (t == "Tensor") a.type = ArgType::Tensor;
    else if (t == "int" || t == "SymInt") a.type = ArgType::Int;
    else if (t == "float") a.type = ArgType::Float;
    else if (t == "bool") a.type = ArgType::Bool;
    else if (t == "Scalar") a.type = ArgType::Scalar;
    else if (t == "ScalarType") a.type = ArgType::ScalarType;
    else if (t == "Device") a.type = ArgType::Device;
    else if (t == "str") a.type = ArgType::String;
    else if (t == "Generator") a.type = ArgType::Generator;
    else error("unknown type '" + t + "'");
    if (accept("(")) parse_alias(a, t);
    if (a.type == ArgType::Tensor && accept("?[")) {  // Tensor?[]: a list whose entries may be None
      expect("]");
      a.type = ArgType::TensorList;
      a.optional_elements = true;
    } else if (accept("[")) {
      skip_ws();
      while (pos < s.size() && std::isdigit((unsigned char)s[pos])) ++pos;  // fixed sizes like int[2]
      expect("]");
      if (a.type == ArgType::Tensor) a.type = ArgType::TensorList;
      else if (a.type == ArgType::Int) a.type = ArgType::IntList;
      else error("only Tensor[] and int[] lists are supported");
    }
    if (accept("?")) a.optional = true;
  }

  Value parse_default(const Argument &a) {
    skip_ws();
    if (accept("None")) return Value();
    if (accept("True")) return Value::from_bool(true);
    if (accept("False")) return Value::from_bool(false);
    if (accept("[")) {
      std::vector<int64_t> v;
      while (!accept("]")) { v.push_back(parse_number().to_int()); accept(","); }
      return Value::from_ints(v);
    }
    if (s[pos] == '"' || s[pos] == '\'') {
      char q = s[pos++];
      size_t start = pos;
      while (pos < s.size() && s[pos] != q) ++pos;
      if (pos >= s.size()) error("unterminated string default");
      return Value::from_string(s.substr(start, pos++ - start));
    }
    Scalar n = parse_number();
    if (a.type == ArgType::IntList) return Value::from_ints({n.to_int()});  // int[2] x=1 means [1, 1]
    if (a.type == ArgType::Float) return Value::from_double(n.to_double());
    if (a.type == ArgType::Int) return Value::from_int(n.to_int());
    return Value::from_scalar(n);
  }

  Scalar parse_number() {
    skip_ws();
    const char *begin = s.c_str() + pos;
    char *end = nullptr;
    double d = std::strtod(begin, &end);
    if (end == begin) error("expected a default value");
    std::string tok(begin, static_cast<const char *>(end));
    pos += end - begin;
    bool is_float = tok.find_first_of(".eEn") != std::string::npos;  // "inf"/"nan" contain n
    return is_float ? Scalar(d) : Scalar(int64_t(std::strtoll(tok.c_str(), nullptr, 10)));
  }

  Argument parse_argument(bool kwarg_only, bool is_return) {
    Argument a;
    size_t start = pos;
    parse_type(a);
    skip_ws();
    if (!is_return || (pos < s.size() && (std::isalpha((unsigned char)s[pos]) || s[pos] == '_'))) a.name = ident();
    if (!is_return && accept("=")) { a.has_default = true; a.default_value = parse_default(a); }
    a.kwarg_only = kwarg_only;
    a.text = s.substr(start, pos - start);
    while (!a.text.empty() && std::isspace((unsigned char)a.text.front())) a.text.erase(0, 1);
    return a;
  }

  Schema parse() {
    Schema sc;
    sc.text = s;
    std::string first = ident();
    if (accept("::")) { sc.ns = first; sc.name = ident(); } else sc.name = first;
    if (accept(".")) sc.overload = ident();
    expect("(");
    bool kw = false;
    if (!accept(")")) {
      for (;;) {
        if (accept("*")) kw = true;
        else sc.args.push_back(parse_argument(kw, false));
        if (accept(")")) break;
        expect(",");
      }
    }
    expect("->");
    if (accept("(")) {
      if (!accept(")")) {
        for (;;) {
          sc.returns.push_back(parse_argument(false, true));
          if (accept(")")) break;
          expect(",");
        }
      }
    } else {
      sc.returns.push_back(parse_argument(false, true));
    }
    skip_ws();
    if (pos != s.size()) error("unexpected trailing text");
    for (size_t i = 0; i < sc.args.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (sc.args[i].name == sc.args[j].name) error("duplicate argument name '" + sc.args[i].name + "'");
    return sc;
  }
};

}  // namespace

Schema parse_schema(const std::string &text) { return Parser{text}.parse(); }

}  // namespace tp::p10
