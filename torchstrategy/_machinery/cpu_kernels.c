/* CPU kernels compiled at first use by kernel_build.py (gcc/cc, -O3 -march=native -fopenmp) and called
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
#include <stdlib.h>

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

/* A first convolution in float32 (stride 1, no padding, few input channels: kernel_h * kernel_w * in <= 64)
   with its bias, then the ReLU and a 2x2 max pool, in one pass that never writes the convolution's output:
   each pooled output computes the convolution at its window's four positions in registers (float32 sums
   of products over kh, kw, in in that order, the bias first) and keeps the first maximum as max_pool2d
   does, NaNs included. The backward pass gives the kernel's and the bias's
   gradients (float64 sums per thread) from the window codes and the input alone; the input's gradient
   is never needed (the kernel is used only for inputs that do not require one). Output channels come in
   vectors of 16 (GCC vector extensions: AVX-512 registers where the machine has them). */
typedef float vf16 __attribute__((vector_size(64)));
typedef int32_t vi16 __attribute__((vector_size(64)));
typedef int8_t v16i8 __attribute__((vector_size(16)));
#ifdef _OPENMP
#include <omp.h>
#else
static int omp_get_thread_num(void) { return 0; }  /* no OpenMP: the pragmas are ignored, one thread runs */
#endif

#define MAX_TAPS 64

static inline vf16 splat(float v) { return (vf16){v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v}; }
static inline vi16 splat_i(int32_t v) { return (vi16){v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v}; }
static inline vf16 load16(const float *p) { vf16 v; __builtin_memcpy(&v, p, sizeof v); return v; }
static inline vf16 select16(vi16 mask, vf16 a, vf16 b) { return (vf16)(((vi16)a & mask) | ((vi16)b & ~mask)); }

/* offsets[t] of tap t = (ky * kw + kx) * in + c from a pixel's first input element, in (h, w, c) memory (also
   used by cpu_kernels_bf16.c) */
void ts_conv_tap_offsets(long *offsets, long width, long in, long kh, long kw) {
  long t = 0;
  for (long ky = 0; ky < kh; ++ky)
    for (long kx = 0; kx < kw; ++kx)
      for (long c = 0; c < in; ++c) offsets[t++] = (ky * width + kx) * in + c;
}

/* One pooled output cell's window (2x2), `NB` vectors of 16 output channels from `block` on. */
#define DEFINE_CONV_POOL_CELL(NAME, NB)                                                                    \
  static inline void NAME(const float *restrict x, const float *restrict kernel, const float *restrict bias, \
                          const long *restrict offsets, const long *restrict starts, long taps, long out,    \
                          long block, float *restrict y, int8_t *restrict code, long cell) {                  \
    vf16 acc[4][NB];                                                                                     \
    for (long q = 0; q < NB; ++q) {                                                                      \
      const vf16 bias16 = bias ? load16(bias + block + 16 * q) : splat(0.0f);                            \
      for (long p = 0; p < 4; ++p) acc[p][q] = bias16;                                                   \
    }                                                                                                    \
    for (long t = 0; t < taps; ++t) {                                                                    \
      vf16 xs[4];                                                                                        \
      for (long p = 0; p < 4; ++p) xs[p] = splat(x[starts[p] + offsets[t]]);                             \
      for (long q = 0; q < NB; ++q) {                                                                    \
        const vf16 weights = load16(kernel + t * out + block + 16 * q);                                  \
        for (long p = 0; p < 4; ++p) acc[p][q] += xs[p] * weights;                                       \
      }                                                                                                  \
    }                                                                                                    \
    for (long q = 0; q < NB; ++q) {                                                                      \
      vf16 best = acc[0][q];                                                                             \
      vi16 where = splat_i(0);                                                                           \
      for (long p = 1; p < 4; ++p) {                                                                     \
        const vf16 v = acc[p][q];                                                                        \
        const vi16 take = (v > best) | (v != v);                                                         \
        best = select16(take, v, best);                                                                  \
        where = (splat_i((int32_t)p) & take) | (where & ~take);                                          \
      }                                                                                                  \
      const vi16 pass = ~(best <= splat(0.0f));                                                          \
      best = select16(pass, best, splat(0.0f));                                                          \
      where = (where & pass) | (splat_i(-1) & ~pass);                                                    \
      const long at = cell + block + 16 * q;                                                             \
      const v16i8 codes = __builtin_convertvector(where, v16i8);                                         \
      __builtin_memcpy(code + at, &codes, sizeof codes);                                                 \
      __builtin_memcpy(y + at, &best, sizeof best);                                                      \
    }                                                                                                    \
  }

DEFINE_CONV_POOL_CELL(conv_pool_cell_1, 1)
DEFINE_CONV_POOL_CELL(conv_pool_cell_2, 2)
DEFINE_CONV_POOL_CELL(conv_pool_cell_4, 4)

/* Windows are 2x2; `out` is a multiple of 16; kh * kw * in <= MAX_TAPS. */
void ts_conv_pool_forward(const float *restrict x, const float *restrict kernel, const float *restrict bias,
                          float *restrict y, int8_t *restrict code, long n, long h, long w, long in, long kh,
                          long kw, long out, int threads) {
  const long oh = (h - kh + 1) / 2, ow = (w - kw + 1) / 2, taps = kh * kw * in;
  const long step = out % 64 == 0 ? 64 : out % 32 == 0 ? 32 : 16;
  long offsets[MAX_TAPS];
  ts_conv_tap_offsets(offsets, w, in, kh, kw);
  _Pragma("omp parallel for num_threads(threads) schedule(static)")
  for (long row = 0; row < n * oh; ++row) {
    const long b = row / oh, i = row % oh;
    for (long j = 0; j < ow; ++j) {
      long starts[4];
      for (long p = 0; p < 4; ++p) starts[p] = ((b * h + 2 * i + p / 2) * w + 2 * j + p % 2) * in;
      const long cell = (row * ow + j) * out;
      for (long block = 0; block < out; block += step) {
        if (step == 64) conv_pool_cell_4(x, kernel, bias, offsets, starts, taps, out, block, y, code, cell);
        else if (step == 32) conv_pool_cell_2(x, kernel, bias, offsets, starts, taps, out, block, y, code, cell);
        else conv_pool_cell_1(x, kernel, bias, offsets, starts, taps, out, block, y, code, cell);
      }
    }
  }
}

/* The dense loop (cpu_kernels_conv_grad.c's picked loop takes the images it can, with the same sums): the
   kernel's gradient for taps [chunk, chunk + CHUNK) and channels [block, block + 16 * NB) summed over one
   image, added to that thread's float64 totals (the bias's too, on the first chunk). CHUNK * NB accumulators
   plus 4 * NB working vectors stay within the 32 vector registers: 14 taps of 16 channels or 9 of 32 (a
   3x3x3 kernel's 27 taps are 3 chunks of 9); more spill to the stack on every multiply-add. */
#define TAP_CHUNK_1 14
#define TAP_CHUNK_2 9
#define TAP_CHUNK_MAX 14
#define DEFINE_CONV_POOL_GRAD(NAME, NB, TAP_CHUNK)                                                                    \
  static inline void NAME(const float *restrict x, const float *restrict grad_out, const int8_t *restrict code, \
                          const long *restrict offsets, long b, long h, long w, long in, long oh, long ow,   \
                          long taps, long out, long block, long chunk, double *restrict totals) {             \
    vf16 acc[TAP_CHUNK][NB], acc_bias[NB];                                                               \
    for (long q = 0; q < NB; ++q) {                                                                      \
      acc_bias[q] = splat(0.0f);                                                                         \
      for (long t = 0; t < TAP_CHUNK; ++t) acc[t][q] = splat(0.0f);                                      \
    }                                                                                                    \
    for (long i = 0; i < oh; ++i) {                                                                      \
      for (long j = 0; j < ow; ++j) {                                                                    \
        const long cell = ((b * oh + i) * ow + j) * out + block;                                         \
        vf16 g[NB];                                                                                      \
        vi16 codes[NB];                                                                                  \
        for (long q = 0; q < NB; ++q) {                                                                  \
          v16i8 packed;                                                                                  \
          __builtin_memcpy(&packed, code + cell + 16 * q, sizeof packed);                                \
          codes[q] = __builtin_convertvector(packed, vi16);                                              \
          g[q] = load16(grad_out + cell + 16 * q);                                                       \
        }                                                                                                \
        for (long p = 0; p < 4; ++p) {                                                                   \
          const float *start = x + ((b * h + 2 * i + p / 2) * w + 2 * j + p % 2) * in;                   \
          vf16 picked[NB];                                                                               \
          for (long q = 0; q < NB; ++q) {                                                                \
            picked[q] = select16(codes[q] == splat_i((int32_t)p), g[q], splat(0.0f));                    \
            acc_bias[q] += picked[q];                                                                    \
          }                                                                                              \
          for (long t = 0; t < TAP_CHUNK; ++t) {                                                         \
            const vf16 xs = splat(start[offsets[chunk + t]]);                                            \
            for (long q = 0; q < NB; ++q) acc[t][q] += xs * picked[q];                                   \
          }                                                                                              \
        }                                                                                                \
      }                                                                                                  \
    }                                                                                                    \
    for (long q = 0; q < NB; ++q) {                                                                      \
      for (long t = 0; t < TAP_CHUNK && chunk + t < taps; ++t)                                           \
        for (long k = 0; k < 16; ++k) totals[(chunk + t) * out + block + 16 * q + k] += acc[t][q][k];    \
      if (chunk == 0)                                                                                    \
        for (long k = 0; k < 16; ++k) totals[taps * out + block + 16 * q + k] += acc_bias[q][k];         \
    }                                                                                                    \
  }

DEFINE_CONV_POOL_GRAD(conv_pool_grad_1, 1, TAP_CHUNK_1)
DEFINE_CONV_POOL_GRAD(conv_pool_grad_2, 2, TAP_CHUNK_2)

/* cpu_kernels_conv_grad.c: one image's gradients from the picked window positions (1), or 0 where it declines */
long ts_conv_grad_scratch_floats(long h, long w, long in);
int ts_conv_grad_picked_image(const float *x, const float *grad, const int8_t *code, const long *offsets, long h,
                              long w, long in, long oh, long ow, long taps, long out, double *totals, float *scratch);

/* Returns 0, or 1 when the per-thread sums could not be allocated. Each image goes to the AVX-512 loop of
   cpu_kernels_conv_grad.c where it takes it, else to the dense loop above. */
int ts_conv_pool_backward(const float *restrict x, const float *restrict grad_out, const int8_t *restrict code,
                          float *restrict grad_kernel, float *restrict grad_bias, long n, long h, long w, long in,
                          long kh, long kw, long out, int threads) {
  const long oh = (h - kh + 1) / 2, ow = (w - kw + 1) / 2, taps = kh * kw * in;
  const long step = out % 32 == 0 ? 32 : 16, teams = threads > 0 ? threads : 1, sums = taps * out + out;
  const long tap_chunk = step == 32 ? TAP_CHUNK_2 : TAP_CHUNK_1;
  long offsets[MAX_TAPS + TAP_CHUNK_MAX];
  ts_conv_tap_offsets(offsets, w, in, kh, kw);
  for (long t = taps; t < taps + TAP_CHUNK_MAX; ++t) offsets[t] = 0;  /* padding taps read a real element */
  double *totals = calloc((size_t)(sums * teams), sizeof(double));
  if (!totals) return 1;
  _Pragma("omp parallel num_threads(threads)")
  {
    double *mine = totals + omp_get_thread_num() * sums;
    float *scratch = malloc(sizeof(float) * (size_t)ts_conv_grad_scratch_floats(h, w, in));  /* none: dense */
    _Pragma("omp for schedule(static)")
    for (long b = 0; b < n; ++b) {
      const long cells = b * oh * ow * out;
      if (scratch && ts_conv_grad_picked_image(x + b * h * w * in, grad_out + cells, code + cells, offsets, h, w, in,
                                               oh, ow, taps, out, mine, scratch))
        continue;
      for (long block = 0; block < out; block += step)
        for (long chunk = 0; chunk < taps; chunk += tap_chunk) {
          if (step == 32) conv_pool_grad_2(x, grad_out, code, offsets, b, h, w, in, oh, ow, taps, out, block, chunk, mine);
          else conv_pool_grad_1(x, grad_out, code, offsets, b, h, w, in, oh, ow, taps, out, block, chunk, mine);
        }
    }
    free(scratch);
  }
  for (long s = 0; s < sums; ++s) {
    double v = 0.0;
    for (long t = 0; t < teams; ++t) v += totals[t * sums + s];
    if (s < taps * out) grad_kernel[s] = (float)v;
    else if (grad_bias) grad_bias[s - taps * out] = (float)v;
  }
  free(totals);
  return 0;
}

/* CRC-32C (Castagnoli), the checksum of TF's checkpoint files, continued over `size` more bytes from the
   register `crc` (already complemented by the caller, as formats/_crc32c.py keeps it). The SSE4.2 / ARMv8
   CRC instructions do eight bytes per instruction; elsewhere slicing-by-8 tables, filled when the library
   is loaded. */
#if defined(__x86_64__) && defined(__SSE4_2__)
#include <nmmintrin.h>
#define TS_CRC32C_HARDWARE 1
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#define TS_CRC32C_HARDWARE 2
#endif

static uint32_t crc32c_tables[8][256];

__attribute__((constructor)) static void crc32c_fill_tables(void) {
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
    crc32c_tables[0][byte] = crc;
  }
  for (uint32_t byte = 0; byte < 256; ++byte)
    for (int k = 1; k < 8; ++k)
      crc32c_tables[k][byte] = (crc32c_tables[k - 1][byte] >> 8) ^ crc32c_tables[0][crc32c_tables[k - 1][byte] & 0xFF];
}

/* 1 where the CRC instructions are used, 0 for the tables (the Python side reports which). */
int ts_crc32c_hardware(void) {
#ifdef TS_CRC32C_HARDWARE
  return 1;
#else
  return 0;
#endif
}

uint32_t ts_crc32c_extend(uint32_t crc, const uint8_t *data, size_t size) {
  while (size && ((uintptr_t)data & 7)) {
    crc = crc32c_tables[0][(crc ^ *data++) & 0xFF] ^ (crc >> 8);
    --size;
  }
#if TS_CRC32C_HARDWARE == 1
  uint64_t wide = crc;
  for (; size >= 8; size -= 8, data += 8) wide = _mm_crc32_u64(wide, *(const uint64_t *)data);
  crc = (uint32_t)wide;
#elif TS_CRC32C_HARDWARE == 2
  for (; size >= 8; size -= 8, data += 8) crc = __crc32cd(crc, *(const uint64_t *)data);
#else
  for (; size >= 8; size -= 8, data += 8) {
    const uint32_t low = crc ^ ((uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
                                (uint32_t)data[3] << 24);
    crc = crc32c_tables[7][low & 0xFF] ^ crc32c_tables[6][(low >> 8) & 0xFF] ^
          crc32c_tables[5][(low >> 16) & 0xFF] ^ crc32c_tables[4][low >> 24] ^ crc32c_tables[3][data[4]] ^
          crc32c_tables[2][data[5]] ^ crc32c_tables[1][data[6]] ^ crc32c_tables[0][data[7]];
  }
#endif
  while (size--) crc = crc32c_tables[0][(crc ^ *data++) & 0xFF] ^ (crc >> 8);
  return crc;
}
