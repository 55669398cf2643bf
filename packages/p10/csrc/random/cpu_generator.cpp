// cpu_generator.cpp — seeding, the default generator, and the byte layout of a saved CPU RNG state.
//
// Where it sits: implements cpu_generator.h. The layout below is PyTorch's CPUGeneratorImplState, so the
// bytes from tp.get_rng_state() can be fed to torch.set_rng_state() and back.
#include "random/cpu_generator.h"

#include <cstring>
#include <random>

#include "core/errors.h"
#include "dispatch/value.h"

namespace tp::p10 {

// Note [CPU RNG state layout]
//   5056 little-endian bytes, the C struct PyTorch has kept since the TH days (natural alignment, x86-64):
//     offset  size  field
//        0      8   uint64  initial seed
//        8      4   int32   left            (Note [MT19937 bookkeeping])
//       12      4   int32   seeded          (0/1)
//       16      8   uint64  next
//       24   4992   uint64  state[624]      (each word zero-extended from 32 bits)
//     5016      8   double  normal_x        (legacy, always 0)
//     5024      8   double  normal_y        the cached double normal sample, 0 when none
//     5032      8   double  normal_rho      (legacy, always 0)
//     5040      4   int32   normal_is_valid 1 when normal_y holds a cached sample
//     5044      4           padding (0)
//     5048      4   float   next_float_normal_sample
//     5052      1   bool    is_next_float_normal_sample_valid
//     5053      3           padding (0)
//   PyTorch 2.x accepts only this full size on load (the 5048-byte legacy prefix is refused), ignores the
//   high halves of the state words, reads `seeded` as a bool, and validates the engine after loading.
namespace {
constexpr size_t kOffLeft = 8, kOffSeeded = 12, kOffNext = 16, kOffWords = 24, kOffNormalY = 5024,
                 kOffNormalValid = 5040, kOffFloatNormal = 5048, kOffFloatValid = 5052;

template <typename T> void put(std::vector<uint8_t> &b, size_t off, T v) { std::memcpy(b.data() + off, &v, sizeof(T)); }
template <typename T> T get(const uint8_t *b, size_t off) {
  T v;
  std::memcpy(&v, b + off, sizeof(T));
  return v;
}
}  // namespace

CPUGenerator::CPUGenerator(uint64_t seed) : GeneratorImpl(Device{}), engine_(seed) {}

CPUGenerator::CPUGenerator(const CPUGenerator &other) : GeneratorImpl(other) {
  std::lock_guard<std::mutex> lock(other.mutex);
  engine_ = other.engine_;
  next_double_normal_sample = other.next_double_normal_sample;
  next_float_normal_sample = other.next_float_normal_sample;
}

CPUGenerator &CPUGenerator::operator=(const CPUGenerator &other) {
  if (this == &other) return *this;
  std::scoped_lock lock(mutex, other.mutex);
  engine_ = other.engine_;
  next_double_normal_sample = other.next_double_normal_sample;
  next_float_normal_sample = other.next_float_normal_sample;
  return *this;
}

void CPUGenerator::set_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex);
  next_float_normal_sample.reset();
  next_double_normal_sample.reset();
  engine_ = MT19937(seed);
}

std::vector<uint8_t> CPUGenerator::get_state() const {
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<uint8_t> b(kCPUStateBytes, 0);
  put<uint64_t>(b, 0, engine_.seed);
  put<int32_t>(b, kOffLeft, engine_.left);
  put<int32_t>(b, kOffSeeded, engine_.seeded ? 1 : 0);
  put<uint64_t>(b, kOffNext, engine_.next);
  for (int i = 0; i < kMTStateSize; ++i) put<uint64_t>(b, kOffWords + 8 * size_t(i), engine_.state[i]);
  if (next_double_normal_sample) {
    put<int32_t>(b, kOffNormalValid, 1);
    put<double>(b, kOffNormalY, *next_double_normal_sample);
  }
  if (next_float_normal_sample) {
    put<float>(b, kOffFloatNormal, *next_float_normal_sample);
    b[kOffFloatValid] = 1;
  }
  return b;
}

void CPUGenerator::set_state(const uint8_t *data, size_t n) {
  TP_CHECK(data != nullptr || n == 0, Value, "set_rng_state: state bytes are null");
  TP_CHECK(n == kCPUStateBytes, Value, "set_rng_state: expected a CPU generator state of ", kCPUStateBytes,
           " bytes (torch.get_rng_state() layout) but got ", n, " bytes");
  MT19937 e;
  e.seed = get<uint64_t>(data, 0);
  e.left = get<int32_t>(data, kOffLeft);
  e.seeded = get<int32_t>(data, kOffSeeded) != 0;
  e.next = uint32_t(get<uint64_t>(data, kOffNext));  // PyTorch's engine keeps `next` as 32 bits
  for (int i = 0; i < kMTStateSize; ++i) e.state[i] = uint32_t(get<uint64_t>(data, kOffWords + 8 * size_t(i)));
  TP_CHECK(e.is_valid(), Value, "set_rng_state: invalid mt19937 state (seeded=", e.seeded, ", left=", e.left,
           ", next=", e.next, "; need seeded, 1 <= left <= ", kMTStateSize, ", next <= ", kMTStateSize, ")");

  std::lock_guard<std::mutex> lock(mutex);
  engine_ = e;
  next_double_normal_sample.reset();
  next_float_normal_sample.reset();
  if (get<int32_t>(data, kOffNormalValid) != 0) next_double_normal_sample = get<double>(data, kOffNormalY);
  if (data[kOffFloatValid] != 0) next_float_normal_sample = get<float>(data, kOffFloatNormal);
}

GeneratorImpl *generator_arg(const Value &v, DeviceType type, const char *op) {
  if (v.tag != Value::Tag::Generator || v.generator == nullptr) return nullptr;
  const DeviceType got = v.generator->device().type;
  TP_CHECK(got == type, Runtime, op, ": Expected a '", device_type_name(type), "' device type for generator but "
           "found '", device_type_name(got), "'");
  return v.generator;
}

CPUGenerator &cpu_generator(const Value &v, const char *op) {
  GeneratorImpl *g = generator_arg(v, DeviceType::CPU, op);
  return g ? static_cast<CPUGenerator &>(*g) : default_cpu_generator();
}

CPUGenerator &default_cpu_generator() {
  static CPUGenerator gen(kDefaultCPUSeed);
  return gen;
}

uint64_t nondeterministic_seed() {
  std::random_device rd;
  // Two 32-bit words, cut to 53 bits as PyTorch does, so that the seed survives a trip through a Python
  // float (tp.initial_seed() users sometimes store it in JSON).
  uint64_t hi = rd(), lo = rd();
  return ((hi << 32) | lo) & 0x1FFFFFFFFFFFFFULL;
}

}  // namespace tp::p10
