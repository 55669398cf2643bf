// parallel.h — split a range of work over threads (tp.set_num_threads / get_num_threads).
//
// Where it sits: the loop machinery (tensor_iterator.h) and the reductions call parallel_for; nothing else
// starts threads. Note [Grain size]: work below `grain` elements runs on the calling thread, because waking
// a pool costs microseconds and small tensors are the common case in eager code.
#pragma once
#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace tp::p10 {

int get_num_threads();
void set_num_threads(int n);  // ValueError for n < 1
bool in_parallel_region();

constexpr int64_t kGrainSize = 32768;

template <typename F> void parallel_for(int64_t begin, int64_t end, int64_t grain, const F &f) {
  int64_t n = end - begin;
  if (n <= 0) return;
  int threads = get_num_threads();
#ifdef _OPENMP
  if (n > grain && threads > 1 && !in_parallel_region()) {
    int64_t chunks = std::min<int64_t>(threads, (n + grain - 1) / grain);
#pragma omp parallel num_threads(int(chunks))
    {
      int64_t tid = omp_get_thread_num(), nt = omp_get_num_threads();
      int64_t per = (n + nt - 1) / nt;
      int64_t b = begin + tid * per, e = std::min(end, b + per);
      if (b < e) f(b, e);
    }
    return;
  }
#endif
  (void)threads;
  f(begin, end);
}

}  // namespace tp::p10
