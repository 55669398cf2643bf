/* tp_abi.h — the one C interface between TensorPlay's pillars.
 *
 * Where it sits: tensorplay_p10._C owns every tensor, op and kernel. It exports one `TP_Api` table through a
 * PyCapsule named TP_ABI_CAPSULE_NAME (the NumPy C-API pattern). tpx, stax, nn — and a user's own native
 * extension — call `tp_import_api()` once at module init and then talk to P10 only through this table.
 *
 * Why plain C: each pillar may be built by another compiler or another nanobind version, so no C++ type may
 * cross. Only opaque handles, C scalars, int64 arrays and the boxed `TP_Value` cross.
 *
 * Note [ABI evolution]
 *   The table is append-only. A field is never removed, reordered or changed in meaning. Appending fields
 *   bumps TP_ABI_MINOR; anything else bumps TP_ABI_MAJOR. A consumer checks `abi_major` for equality and
 *   `abi_minor`/`struct_size` for "at least what I was compiled against" (tp_import_api does both).
 *
 * Note [ABI ownership]
 *   - A function returning `TP_Tensor*` returns a NEW reference: release it with `tensor_decref`.
 *   - `TP_Tensor*` arguments are borrowed.
 *   - `PyObject*` results are NEW references; `PyObject*` arguments are borrowed.
 *   - Pointers into a tensor (sizes, strides, data) are borrowed: valid while the tensor lives.
 *   - `TP_Op*` handles live as long as the process (ops are never unregistered).
 *
 * Note [ABI errors]
 *   No C++ exception ever crosses this boundary. A function that fails returns a non-zero `int` (or NULL) and
 *   leaves a message and an error kind in P10's thread-local error channel (`error_message`, `error_kind`).
 *   A boxed kernel written by a consumer reports failure the same way: call `set_error` and return non-zero.
 *   `raise_python_error` turns the pending error into the matching Python exception.
 */
#ifndef TENSORPLAY_TP_ABI_H
#define TENSORPLAY_TP_ABI_H

#include <Python.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TP_ABI_MAJOR 1
#define TP_ABI_MINOR 6
#define TP_ABI_CAPSULE_NAME "tensorplay_p10._C._tp_abi"

/* Opaque handles. A TP_Tensor is P10's TensorImpl; a TP_Op is a registered operator. */
typedef struct TP_Tensor TP_Tensor;
typedef struct TP_Op TP_Op;

/* dtype codes: the order of ScalarType in P10 (and of tensorplay dtypes). Never renumbered. */
typedef enum TP_DType {
  TP_BOOL = 0, TP_UINT8 = 1, TP_INT8 = 2, TP_INT16 = 3, TP_INT32 = 4, TP_INT64 = 5,
  TP_FLOAT16 = 6, TP_BFLOAT16 = 7, TP_FLOAT32 = 8, TP_FLOAT64 = 9, TP_COMPLEX64 = 10, TP_COMPLEX128 = 11
} TP_DType;

/* device type codes */
typedef enum TP_DeviceType { TP_DEVICE_CPU = 0, TP_DEVICE_CUDA = 1, TP_DEVICE_META = 2, TP_DEVICE_PRIVATEUSE1 = 3 } TP_DeviceType;

/* Dispatch key codes: stable numbers naming keys across the ABI, NOT their priorities. A new key takes the next
 * unused code; a code is never renumbered or reused. Which key runs first is P10's business, kept in its key
 * table (Note [Dispatch key table] in packages/p10/csrc/dispatch/dispatch_key.h); ask P10 for names with
 * key_name / key_find (since 1.5) rather than keeping a copy. */
typedef enum TP_DispatchKey {
  TP_KEY_PRIVATEUSE1 = 0, TP_KEY_META = 1, TP_KEY_CPU = 2, TP_KEY_CUDA = 3,
  TP_KEY_AUTOGRAD = 4, TP_KEY_AUTOCAST = 5, TP_KEY_TRACER = 6, TP_KEY_PYTHON = 7,
  /* Not runtime keys: kernel slots used when a backend (or Autograd) slot is empty. */
  TP_KEY_COMPOSITE = 8,   /* a decomposition into other ops; also used for Autograd (differentiated through) */
  TP_KEY_ANY_BACKEND = 9, /* one kernel correct for every backend (views, metadata ops) */
  /* Since 1.6: a runtime key again (codes follow the order keys were added, not their kind). */
  TP_KEY_FAKE = 10        /* fake tensors: meta kernels on behalf of the device a tensor stands for */
} TP_DispatchKey;
typedef uint32_t TP_KeySet; /* bit `code` set = the key with that TP_KEY_* code is present */
#define TP_KEY_BIT(code) ((TP_KeySet)1u << (code))

/* error kinds: each maps to one Python exception type */
typedef enum TP_ErrorKind {
  TP_ERR_NONE = 0, TP_ERR_RUNTIME = 1, TP_ERR_TYPE = 2, TP_ERR_VALUE = 3, TP_ERR_INDEX = 4,
  TP_ERR_NOT_IMPLEMENTED = 5
} TP_ErrorKind;

/* A boxed value on an op's argument stack. */
typedef enum TP_ValueTag {
  TP_VALUE_NONE = 0, TP_VALUE_TENSOR = 1, TP_VALUE_INT = 2, TP_VALUE_DOUBLE = 3, TP_VALUE_BOOL = 4,
  TP_VALUE_INT_LIST = 5, TP_VALUE_STRING = 6, TP_VALUE_DTYPE = 7,
  /* since 1.1 */
  TP_VALUE_TENSOR_LIST = 8, /* `Tensor[]` / `Tensor?[]` (NULL entries are None): see Note [ABI tensor lists] */
  TP_VALUE_DEVICE = 9,      /* v.i = TP_DEVICE_CODE(type, index); index -1 = "the current one" */
  TP_VALUE_GENERATOR = 10,  /* v.p: an opaque, borrowed generator handle (pass it on, never look inside) */
  /* since 1.2 */
  TP_VALUE_COMPLEX = 11     /* v.c: a complex Scalar (before 1.2 it crossed as DOUBLE, losing its imaginary part) */
} TP_ValueTag;

/* Note [ABI tensor lists]
 *   As an argument, a TENSOR_LIST is borrowed like every argument. As an output (from op_call/op_redispatch,
 *   or written by a boxed kernel), its `data` array is allocated with malloc and its entries are NEW references;
 *   the receiver owns both and releases them with `value_release` (or hands them on as its own output). */
#define TP_DEVICE_CODE(type, index) ((int64_t)(type) * 256 + (int64_t)(uint8_t)(int8_t)(index))
#define TP_DEVICE_CODE_TYPE(code) ((int)((code) / 256))
#define TP_DEVICE_CODE_INDEX(code) ((int)(int8_t)(uint8_t)((code) % 256))

typedef struct TP_Value {
  int32_t tag; /* a TP_ValueTag */
  union {
    TP_Tensor *tensor; /* args: borrowed; outputs written by a kernel: a NEW reference */
    int64_t i;         /* INT, BOOL (0/1), DTYPE (a TP_DType) */
    double d;
    struct { const int64_t *data; int64_t len; } ints; /* borrowed for the duration of the call */
    const char *s;                                   /* borrowed for the duration of the call */
    struct { TP_Tensor *const *data; int64_t len; } tensors; /* TENSOR_LIST (Note [ABI tensor lists]) */
    void *p;                                                  /* GENERATOR */
    struct { double re, im; } c;                              /* COMPLEX (since 1.2) */
  } v;
} TP_Value;

/* A boxed kernel. `args` holds the op's arguments in schema order (defaults filled in); the kernel writes
 * exactly `num_outs` values into `outs`. Return 0 on success; on failure call api->set_error and return 1. */
typedef int (*TP_BoxedKernel)(void *user_data, const TP_Op *op, const TP_Value *args, int64_t num_args,
                              TP_Value *outs, int64_t num_outs);

/* Destructor for the autograd-meta slot. */
typedef void (*TP_Deleter)(void *);

typedef struct TP_Api {
  /* ---- version (Note [ABI evolution]) ---- */
  uint32_t abi_major;
  uint32_t abi_minor;
  uint64_t struct_size;

  /* ---- error channel (Note [ABI errors]) ---- */
  void (*set_error)(int kind, const char *message);
  const char *(*error_message)(void); /* borrowed; "" when none */
  int (*error_kind)(void);            /* a TP_ErrorKind */
  void (*clear_error)(void);
  PyObject *(*raise_python_error)(void); /* sets the Python error from the channel; returns NULL */

  /* ---- tensor handles and metadata ---- */
  void (*tensor_incref)(TP_Tensor *t);
  void (*tensor_decref)(TP_Tensor *t);
  int64_t (*tensor_dim)(const TP_Tensor *t);
  const int64_t *(*tensor_sizes)(const TP_Tensor *t);
  const int64_t *(*tensor_strides)(const TP_Tensor *t);
  int64_t (*tensor_storage_offset)(const TP_Tensor *t);
  int64_t (*tensor_numel)(const TP_Tensor *t);
  int (*tensor_dtype)(const TP_Tensor *t);       /* a TP_DType */
  int (*tensor_device_type)(const TP_Tensor *t); /* a TP_DeviceType */
  int (*tensor_device_index)(const TP_Tensor *t);
  void *(*tensor_data_ptr)(const TP_Tensor *t); /* address of element 0 (offset applied); NULL on meta */
  int (*tensor_requires_grad)(const TP_Tensor *t);
  int (*tensor_set_requires_grad)(TP_Tensor *t, int flag); /* 0 ok; non-zero + error */
  int64_t (*tensor_version)(const TP_Tensor *t);
  void (*tensor_bump_version)(TP_Tensor *t);
  /* NEW tensor, contiguous, uninitialised. NULL + error on failure. */
  TP_Tensor *(*tensor_empty)(const int64_t *sizes, int64_t ndim, int dtype, int device_type, int device_index);

  /* ---- Python object conversion ---- */
  TP_Tensor *(*tensor_from_python)(PyObject *obj); /* NEW ref; NULL + error if obj is no Tensor */
  PyObject *(*tensor_to_python)(TP_Tensor *t);     /* NEW ref; NULL + Python error on failure */

  /* ---- ops: lookup, definition, boxed calls ---- */
  const TP_Op *(*op_find)(const char *qualified_name); /* "add.Tensor" or "add"; NULL if unknown (no error set) */
  const TP_Op *(*op_define)(const char *schema);       /* NULL + error on a bad or duplicate schema */
  const char *(*op_name)(const TP_Op *op);             /* "add.Tensor" */
  int64_t (*op_num_args)(const TP_Op *op);
  int64_t (*op_num_returns)(const TP_Op *op);
  /* Call through the full dispatcher. args: borrowed; outs: receive NEW references. */
  int (*op_call)(const TP_Op *op, const TP_Value *args, int64_t num_args, TP_Value *outs, int64_t num_outs);
  /* Call with every key at or above `key` masked out: how a wrapper kernel hands on to the next key. */
  int (*op_redispatch)(const TP_Op *op, int key, const TP_Value *args, int64_t num_args, TP_Value *outs,
                       int64_t num_outs);
  /* Register a boxed kernel for (op, key). file/line are shown by tp.explain. 0 ok, else error. */
  int (*op_register_kernel)(const TP_Op *op, int key, TP_BoxedKernel fn, void *user_data, const char *file,
                            int line);

  /* ---- the autograd-meta slot (owned by tpx) ---- */
  void *(*tensor_autograd_meta)(const TP_Tensor *t);
  void (*tensor_set_autograd_meta)(TP_Tensor *t, void *meta, TP_Deleter deleter);

  /* ---- thread-local dispatch key sets ---- */
  TP_KeySet (*tls_included)(void);
  TP_KeySet (*tls_excluded)(void);
  void (*tls_set_included)(TP_KeySet keys);
  void (*tls_set_excluded)(TP_KeySet keys);

  /* ---- since 1.1 ---- */
  /* Register a boxed kernel run for every op that has no kernel of its own at wrapper key `key` (Autograd,
   * Autocast, Tracer, Python). 0 ok, else error. */
  int (*op_register_fallback)(int key, TP_BoxedKernel fn, void *user_data, const char *file, int line);
  /* Release an output value received from op_call/op_redispatch: a tensor's reference, or a tensor list's
   * references and array (Note [ABI tensor lists]). Other tags: nothing to do. Sets the tag to NONE. */
  void (*value_release)(TP_Value *v);
  /* The op's schema as text, "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" (borrowed). */
  const char *(*op_schema)(const TP_Op *op);
  /* Does the op write into argument `i` (`Tensor(a!)`: in-place and out= arguments)? */
  int (*op_arg_is_write)(const TP_Op *op, int64_t i);
  /* The root tensor `t` is a view of (borrowed), or NULL when `t` is not a view. */
  TP_Tensor *(*tensor_view_base)(const TP_Tensor *t);
  /* Inference mode (thread-local): tensors created while it is on are inference tensors. */
  int (*tensor_is_inference)(const TP_Tensor *t);
  int (*tls_inference_mode)(void);
  void (*tls_set_inference_mode)(int on);

  /* ---- CUDA (minor 3) ---- */
  /* Launch the kernel `kernel` (an extern "C" __global__ name) of the CUDA C++ file `module` -- an absolute
   * path to the caller's own .cu source -- on device `device`'s current stream; `args` holds one pointer per
   * kernel parameter, as for cuLaunchKernel. P10 compiles the file with NVRTC for the device on first use
   * and caches the binary like its own kernels (its kernel directory is on the include path, so the source
   * may #include "common.cuh"). 0 ok; non-zero + error when there is no driver, the source does not compile,
   * the kernel does not exist, or the launch fails. */
  int (*cuda_launch)(const char *module, const char *kernel, int device, const uint32_t grid[3],
                     const uint32_t block[3], uint32_t shared_bytes, void **args);

  /* ---- minor 4 ---- */
  /* A NEW tensor over `t`'s storage, geometry and version counter that is not a view of `t` (no view base)
   * and has no autograd meta and requires_grad off: PyTorch's `tensor_data()`. Autograd keeps a node's own
   * output this way, so the saved copy does not own the output (and through it the node). */
  TP_Tensor *(*tensor_shallow_copy)(const TP_Tensor *t);

  /* ---- minor 5: P10's dispatch keys, so a client need not keep its own list of names ---- */
  int (*key_count)(void);             /* one more than the largest TP_KEY_* code P10 knows */
  const char *(*key_name)(int code);  /* "CPU" (static storage), or NULL when no key has that code */
  int (*key_find)(const char *name);  /* the TP_KEY_* code of the key named `name`, or -1 (no error set) */
} TP_Api;

/* Import P10's table. Returns NULL with a Python ImportError set when p10 is missing or too old.
 * Call once at module init, with the GIL held. */
static inline const TP_Api *tp_import_api(void) {
  const TP_Api *api = (const TP_Api *)PyCapsule_Import(TP_ABI_CAPSULE_NAME, 0);
  if (!api) return NULL;
  if (api->abi_major != TP_ABI_MAJOR || api->abi_minor < TP_ABI_MINOR ||
      api->struct_size < (uint64_t)sizeof(TP_Api)) {
    PyErr_Format(PyExc_ImportError,
                 "tensorplay C ABI mismatch: tensorplay-p10 provides %u.%u (table of %llu bytes), this module "
                 "needs %d.>=%d (%llu bytes). Install matching versions of the tensorplay packages.",
                 api->abi_major, api->abi_minor, (unsigned long long)api->struct_size, TP_ABI_MAJOR,
                 TP_ABI_MINOR, (unsigned long long)sizeof(TP_Api));
    return NULL;
  }
  return api;
}

/* Whether `t` is laid out row-major with no gaps (size-1 dims may have any stride). A convenience built on the
 * table's accessors, not an entry of it: every pillar asks this before handing a tensor to a flat loop. */
static inline int tp_tensor_is_contiguous(const TP_Api *api, const TP_Tensor *t) {
  const int64_t ndim = api->tensor_dim(t);
  const int64_t *sizes = api->tensor_sizes(t), *strides = api->tensor_strides(t);
  int64_t expected = 1;
  for (int64_t d = ndim - 1; d >= 0; --d) {
    if (sizes[d] != 1 && strides[d] != expected) return 0;
    expected *= sizes[d];
  }
  return 1;
}

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif /* TENSORPLAY_TP_ABI_H */
