/* CPU kernels compiled at first use by _cpu_kernels.py (gcc/cc, -O3 -march=native -fopenmp) and called
   through ctypes. OpenMP resolves to the libgomp torch already loaded, so they share torch's thread pool.

   Max pooling over (batch, height, width, channels) contiguous tensors, windows == strides, no padding
   (rows/columns past the last whole window are dropped, as 'valid' pooling does), with an optional ReLU
   on the pooled output. The forward pass stores one int8 per output: the window position of the max, or
   -1 where the ReLU cut it; the backward pass writes every input gradient once from those codes, so no
   zero fill, no int64 indices and no separate ReLU pass are needed. The numbers are torch's:
   max_pool2d keeps the first maximum of a window in row-major order and lets a NaN win (a later NaN
   over an earlier one), relu keeps NaN, and relu's backward passes the gradient unless output <= 0. */
#include <stddef.h>
#include <stdint.h>

static inline float from_f32(float v) { return v; }

static inline float from_bf16(uint16_t v) {
  union { uint32_t u; float f; } bits;
  bits.u = (uint32_t)v << 16;
  return bits.f;
}

/* The channel loops are innermost and branch-free so the compiler vectorizes them. */
#define DEFINE_POOL_FORWARD(NAME, T, TO_FLOAT)                                                            \
  void NAME(const T *restrict x, T *restrict y, int8_t *restrict code, long n, long h, long w, long c,   \
            long kh, long kw, int relu, int threads) {                                                   \
    const long oh = h / kh, ow = w / kw;                                                                 \
    _Pragma("omp parallel for num_threads(threads) schedule(static)")                                    \
    for (long row = 0; row < n * oh; ++row) {                                                            \
      const long b = row / oh, i = row % oh;                                                             \
      float best[c];                                                                                     \
      T best_bits[c];                                                                                    \
      int8_t where[c];                                                                                   \
      for (long j = 0; j < ow; ++j) {                                                                    \
        const T *restrict window = x + ((b * h + i * kh) * w + j * kw) * c;                              \
        T *restrict out = y + (row * ow + j) * c;                                                        \
        int8_t *restrict out_code = code + (row * ow + j) * c;                                           \
        for (long k = 0; k < c; ++k) {                                                                   \
          best_bits[k] = window[k];                                                                      \
          best[k] = TO_FLOAT(window[k]);                                                                 \
          where[k] = 0;                                                                                  \
        }                                                                                                \
        for (long a = 0; a < kh; ++a) {                                                                  \
          for (long e = (a == 0); e < kw; ++e) {                                                         \
            const T *restrict at = window + (a * w + e) * c;                                             \
            const int8_t position = (int8_t)(a * kw + e);                                                \
            for (long k = 0; k < c; ++k) {                                                               \
              const float v = TO_FLOAT(at[k]);                                                           \
              const int take = (v > best[k]) | (v != v);                                                 \
              best[k] = take ? v : best[k];                                                              \
              best_bits[k] = take ? at[k] : best_bits[k];                                                \
              where[k] = take ? position : where[k];                                                     \
            }                                                                                            \
          }                                                                                              \
        }                                                                                                \
        if (relu) {                                                                                      \
          for (long k = 0; k < c; ++k) {                                                                 \
            const int pass = !(best[k] <= 0.0f);                                                         \
            out[k] = pass ? best_bits[k] : (T)0;                                                         \
            out_code[k] = pass ? where[k] : (int8_t)-1;                                                  \
          }                                                                                              \
        } else {                                                                                         \
          for (long k = 0; k < c; ++k) {                                                                 \
            out[k] = best_bits[k];                                                                       \
            out_code[k] = where[k];                                                                      \
          }                                                                                              \
        }                                                                                                \
      }                                                                                                  \
    }                                                                                                    \
  }

DEFINE_POOL_FORWARD(ts_max_pool_forward_f32, float, from_f32)
DEFINE_POOL_FORWARD(ts_max_pool_forward_bf16, uint16_t, from_bf16)

/* The backward pass only moves bits, so one version per element size serves every dtype of that size
   (a zero bit pattern is +0.0 in float32 and bfloat16 alike). */
#define DEFINE_POOL_BACKWARD(NAME, T)                                                                     \
  void NAME(const T *restrict grad_out, const int8_t *restrict code, T *restrict grad_in, long n, long h, \
            long w, long c, long kh, long kw, int threads) {                                             \
    const long oh = h / kh, ow = w / kw;                                                                 \
    _Pragma("omp parallel for num_threads(threads) schedule(static)")                                    \
    for (long row = 0; row < n * h; ++row) {                                                             \
      const long b = row / h, i = row % h, o = i / kh;                                                   \
      T *restrict out = grad_in + row * w * c;                                                           \
      if (o >= oh) {                                                                                     \
        for (long q = 0; q < w * c; ++q) out[q] = 0;                                                     \
        continue;                                                                                        \
      }                                                                                                  \
      for (long j = 0; j < w; ++j) {                                                                     \
        const long u = j / kw;                                                                           \
        T *restrict at = out + j * c;                                                                    \
        if (u >= ow) {                                                                                   \
          for (long k = 0; k < c; ++k) at[k] = 0;                                                        \
          continue;                                                                                      \
        }                                                                                                \
        const int8_t position = (int8_t)((i % kh) * kw + j % kw);                                        \
        const long cell = ((b * oh + o) * ow + u) * c;                                                   \
        const T *restrict g = grad_out + cell;                                                           \
        const int8_t *restrict cc = code + cell;                                                         \
        for (long k = 0; k < c; ++k) at[k] = cc[k] == position ? g[k] : (T)0;                           \
      }                                                                                                  \
    }                                                                                                    \
  }

DEFINE_POOL_BACKWARD(ts_max_pool_backward_32, uint32_t)
DEFINE_POOL_BACKWARD(ts_max_pool_backward_16, uint16_t)
