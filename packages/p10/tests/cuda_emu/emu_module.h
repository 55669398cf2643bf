// emu_module.h — the glue that turns one kernel file into an emulator library (emu_<module>.so) the stand-in
// driver (fake_cuda_launch.c) runs launches through.
//
// cuda_testing.build_emulated_driver writes, per emulated kernel file, a translation unit
//     #include "<module>.cu"          (a patched copy: Note [Emulator patches] in cuda_testing.py)
//     #include "emu_module.h"
//     TP_EMU_TABLE(TP_EMU_ENTRY(kernel_a) TP_EMU_ENTRY(kernel_b) ...)
// with every `extern "C" __global__` name of the file (found by preprocessing it, so none is forgotten) and
// every template instance the host registered (TP_EMU_NAMED), and
// compiles it with cuda_emu.h force-included. The table maps a kernel name to a body that reads
// cuLaunchKernel's argument array as the kernel's own parameter types and calls it: one emulated thread.
// tp_emu_run (emu_runtime.cpp) runs that body for every thread of every block.
#pragma once
#include <string.h>

#include <type_traits>
#include <utility>

// Must match EmuKernel in fake_cuda_launch.c.
struct TpEmuKernel {
  void (*body)(void **args);
  int nparams;
  unsigned long long pointers;  // bit i: parameter i is a pointer (the driver checks it points into memory)
};

template <auto F, class... A, size_t... I> void tp_emu_call(void **args, void (*)(A...), std::index_sequence<I...>) {
  F(*static_cast<std::decay_t<A> *>(args[I])...);
}
template <auto F, class... A> void tp_emu_body(void **args) {
  tp_emu_call<F>(args, F, std::index_sequence_for<A...>{});
}
template <auto F, class... A> constexpr TpEmuKernel tp_emu_kernel_of(void (*)(A...)) {
  unsigned long long mask = 0, bit = 1;
  ((mask |= std::is_pointer_v<std::decay_t<A>> ? bit : 0, bit <<= 1), ...);
  return {&tp_emu_body<F, A...>, int(sizeof...(A)), mask};
}

struct TpEmuNamed {
  const char *name;
  TpEmuKernel kernel;
};
#define TP_EMU_ENTRY(name) {#name, tp_emu_kernel_of<&name>(&name)},
// A template instance (Note [Emulated templates] in cuda_testing.py): its lowered name, then its name expression
// (which may hold commas: unary_contig<Exp, float32>).
#define TP_EMU_NAMED(lowered, ...) {lowered, tp_emu_kernel_of<&__VA_ARGS__>(&__VA_ARGS__)},
#define TP_EMU_TABLE(...)                                                                                    \
  static const TpEmuNamed tp_emu_table[] = {__VA_ARGS__};                                                    \
  extern "C" __attribute__((visibility("default"))) const TpEmuKernel *tp_emu_kernel(const char *name) {     \
    for (const TpEmuNamed &k : tp_emu_table)                                                                 \
      if (strcmp(k.name, name) == 0) return &k.kernel;                                                       \
    return nullptr;                                                                                          \
  }
