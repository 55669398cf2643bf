// parallel.cpp — the thread-count setting behind parallel_for.
#include "loop/parallel.h"

#include <thread>

#include "core/errors.h"

namespace tp::p10 {

static int g_num_threads = [] {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}();

int get_num_threads() { return g_num_threads; }

void set_num_threads(int n) {
  TP_CHECK(n >= 1, Value, "set_num_threads: expected a positive number of threads, got ", n);
  g_num_threads = n;
}

bool in_parallel_region() {
#ifdef _OPENMP
  return omp_in_parallel();
#else
  return false;
#endif
}

}  // namespace tp::p10
