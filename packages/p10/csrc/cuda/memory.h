// memory.h — the device's caching allocator instance, pinned host memory, and host<->device copies.
//
// Where it sits: memory.cpp installs the CUDA Allocator that Storage::allocate uses for cuda:N tensors, backed
// by the CachingAllocator (caching_allocator.h) over cuMemAlloc. tp.cuda.memory_* read its statistics.
#pragma once
#include "cuda/caching_allocator.h"
#include "cuda/runtime.h"

namespace tp::p10::cuda {

CachingAllocator &device_allocator();
// Page-locked host memory for pin_memory(): cuMemHostAlloc, so copies from it can run asynchronously.
void *pinned_alloc(size_t bytes);
void pinned_free(void *p);
bool is_pinned(const void *p);
void mem_get_info(int device, size_t *free_bytes, size_t *total_bytes);

}  // namespace tp::p10::cuda
