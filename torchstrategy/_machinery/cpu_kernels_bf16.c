/* The fused first convolution + bias + ReLU + 2x2 max pool of cpu_kernels.c and its kernel's and bias's gradients
   for bfloat16 inputs, weights and output gradients, on the AVX512-BF16 dot product (vdpbf16ps: each float32 lane
   adds the two products of a pair of bfloat16 values): the forward pairs taps, the gradient a window's positions (the
   gradient only for the images cpu_kernels_conv_grad.c's picked loop declines: those holding an infinity or a NaN,
   and all of them in a build without -march=native on AVX-512).
   Built with the other kernels; its functions carry their own target attribute, so the library still builds for
   CPUs without the instructions, and ts_conv_pool_bf16_supported() says at run time whether this CPU has them
   (cpu_kernels.py otherwise widens the values to float32 and runs the float32 kernel).

   The numbers are a bfloat16 convolution's: products of bfloat16 values are exact in float32, summed in float32
   (the bias first, then pairs of taps), the pooled maximum rounded once to bfloat16 (to nearest even, a NaN to
   torch's 0x7FC0). The instruction treats subnormal inputs and sums as zero, so values under ~1e-38 may differ
   from torch's by that much. The window codes are the float32 kernel's. The gradients are the float32 kernel's
   bit for bit (each output channel takes one position of a window, so the pairs add a zero product). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

void ts_conv_tap_offsets(long *offsets, long width, long in, long kh, long kw); /* cpu_kernels.c */
/* cpu_kernels_conv_grad.c: one image's gradients from each channel's picked window position (1), or 0 */
long ts_conv_grad_scratch_floats(long h, long w, long in);
int ts_conv_grad_picked_image_bf16(const uint16_t *x, const uint16_t *grad, const int8_t *code, const long *offsets,
                                   long h, long w, long in, long oh, long ow, long taps, long out, double *totals,
                                   float *scratch);

#ifdef _OPENMP
#include <omp.h>
#else
static int omp_get_thread_num(void) { return 0; } /* no OpenMP: the pragmas are ignored, one thread runs */
#endif

#if defined(__x86_64__) && ((defined(__clang__) && __clang_major__ >= 9) || (!defined(__clang__) && __GNUC__ >= 10))
#include <immintrin.h>
#define TS_BF16_DOT 1
#endif

/* 1 where the bfloat16 kernel can run on this CPU, 0 elsewhere. */
int ts_conv_pool_bf16_supported(void) {
#ifdef TS_BF16_DOT
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
#else
  return 0;
#endif
}

#ifdef TS_BF16_DOT
#define BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#define BF16_INLINE static inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vl,avx512bf16")))
#define MAX_PAIRS 32 /* MAX_TAPS / 2 */

/* The taps in pairs: pair p multiplies the input elements at lo[p] and hi[p] (from a position's first element)
   by one 32-bit word of the packed kernel. Pairs of neighbouring elements come first (`joined` of them: one
   32-bit load gives both); the rest (a pair across kernel rows, the odd last tap with a zero) are put
   together from two loads. hi[p] < 0: the padding half, a zero input times a zero weight. */
typedef struct {
  long lo[MAX_PAIRS], hi[MAX_PAIRS], count, joined;
} tap_pairs;

static void pair_taps(tap_pairs *pairs, const long *offsets, long taps, long *order) {
  long count = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (long t = 0; t < taps; t += 2) {
      const int joined = t + 1 < taps && offsets[t + 1] == offsets[t] + 1;
      if (joined != (pass == 0)) continue;
      pairs->lo[count] = offsets[t];
      pairs->hi[count] = t + 1 < taps ? offsets[t + 1] : -1;
      order[count++] = t;
    }
    if (pass == 0) pairs->joined = count;
  }
  pairs->count = count;
}

BF16_INLINE __m512 widen_bf16(__m256i v) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(v), 16));
}

/* float32 -> bfloat16 to nearest even, NaN -> 0x7FC0 (torch's conversion), 16 lanes. */
BF16_INLINE __m256i round_bf16(__m512 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7FFF))), 16);
  rounded = _mm512_mask_mov_epi32(rounded, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_set1_epi32(0x7FC0));
  return _mm512_cvtepi32_epi16(rounded);
}

BF16_INLINE __m512i pair_word(const uint16_t *at, long lo, long hi) {
  return _mm512_set1_epi32((int)((uint32_t)at[lo] | (hi < 0 ? 0u : (uint32_t)at[hi] << 16)));
}

BF16_INLINE __m512i joined_word(const uint16_t *at) {
  uint32_t word;
  __builtin_memcpy(&word, at, sizeof word);
  return _mm512_set1_epi32((int)word);
}

/* One pooled output cell (its 2x2 window of convolution outputs), `nb` vectors of 16 output channels from
   `block` on: acc[p][q] = bias + sum over pairs of (x pair) . (kernel pair), then max + ReLU + code. */
BF16_INLINE void conv_pool_cell(const uint16_t *restrict x, const uint16_t *restrict packed,
                                const uint16_t *restrict bias, const tap_pairs *pairs, const long *starts,
                                long out, long block, uint16_t *restrict y, int8_t *restrict code, long cell,
                                const int nb) {
  __m512 acc[4][4];
  for (int q = 0; q < nb; ++q) {
    const __m512 b = bias ? widen_bf16(_mm256_loadu_si256((const __m256i *)(bias + block + 16 * q)))
                          : _mm512_setzero_ps();
    for (int p = 0; p < 4; ++p) acc[p][q] = b;
  }
  for (long k = 0; k < pairs->count; ++k) {
    __m512i xs[4];
    if (k < pairs->joined)
      for (int p = 0; p < 4; ++p) xs[p] = joined_word(x + starts[p] + pairs->lo[k]);
    else
      for (int p = 0; p < 4; ++p) xs[p] = pair_word(x + starts[p], pairs->lo[k], pairs->hi[k]);
    for (int q = 0; q < nb; ++q) {
      const __m512bh w = (__m512bh)_mm512_loadu_si512(packed + 2 * (k * out + block + 16 * q));
      for (int p = 0; p < 4; ++p) acc[p][q] = _mm512_dpbf16_ps(acc[p][q], (__m512bh)xs[p], w);
    }
  }
  for (int q = 0; q < nb; ++q) {
    __m512 best = acc[0][q];
    __m512i where = _mm512_setzero_si512();
    for (int p = 1; p < 4; ++p) {
      const __mmask16 take = _mm512_cmp_ps_mask(acc[p][q], best, _CMP_GT_OQ) |
                             _mm512_cmp_ps_mask(acc[p][q], acc[p][q], _CMP_UNORD_Q);
      best = _mm512_mask_mov_ps(best, take, acc[p][q]);
      where = _mm512_mask_mov_epi32(where, take, _mm512_set1_epi32(p));
    }
    const __mmask16 cut = _mm512_cmp_ps_mask(best, _mm512_setzero_ps(), _CMP_LE_OQ);
    best = _mm512_mask_mov_ps(best, cut, _mm512_setzero_ps());
    where = _mm512_mask_mov_epi32(where, cut, _mm512_set1_epi32(-1));
    const long at = cell + block + 16 * q;
    _mm_storeu_si128((__m128i *)(code + at), _mm512_cvtepi32_epi8(where));
    _mm256_storeu_si256((__m256i *)(y + at), round_bf16(best));
  }
}

static BF16_TARGET void conv_pool_rows(const uint16_t *restrict x, const uint16_t *restrict packed,
                                       const uint16_t *restrict bias, const tap_pairs *pairs, uint16_t *restrict y,
                                       int8_t *restrict code, long n, long h, long w, long in, long out,
                                       long oh, long ow, int threads) {
  const long step = out % 64 == 0 ? 64 : out % 32 == 0 ? 32 : 16;
  _Pragma("omp parallel for num_threads(threads) schedule(static)")
  for (long row = 0; row < n * oh; ++row) {
    const long b = row / oh, i = row % oh;
    for (long j = 0; j < ow; ++j) {
      long starts[4];
      for (long p = 0; p < 4; ++p) starts[p] = ((b * h + 2 * i + p / 2) * w + 2 * j + p % 2) * in;
      const long cell = (row * ow + j) * out;
      for (long block = 0; block < out; block += step) {
        if (step == 64) conv_pool_cell(x, packed, bias, pairs, starts, out, block, y, code, cell, 4);
        else if (step == 32) conv_pool_cell(x, packed, bias, pairs, starts, out, block, y, code, cell, 2);
        else conv_pool_cell(x, packed, bias, pairs, starts, out, block, y, code, cell, 1);
      }
    }
  }
}

/* The kernel's gradient pairs the reduction's terms two columns at a time: a pooling window's left and right
   positions in one row. words[e] = x[e] | x[e + in] << 16 (each input element beside the same channel one
   column right; 0 past the row's end), one image at a time, so a tap's word for both is one 32-bit load. */
static BF16_TARGET void pair_columns(const uint16_t *restrict x, uint32_t *restrict words, long h, long w, long in) {
  const long width = w * in;
  for (long r = 0; r < h; ++r) {
    const uint16_t *row = x + r * width;
    uint32_t *to = words + r * width;
    for (long e = 0; e < width - in; ++e) to[e] = (uint32_t)row[e] | (uint32_t)row[e + in] << 16;
    for (long e = width - in; e < width; ++e) to[e] = row[e];
  }
}

/* As cpu_kernels.c's conv_pool_grad_*: taps [chunk, chunk + tap_chunk), channels [block, block + 16 * nb), one
   image (its paired words), float32 sums added to the thread's float64 totals. The gradient's picked values
   (bfloat16, zero where another position won) for a row's two positions side by side as the instruction takes
   them; the bias's gradient summed in float32 from the same values. */
BF16_INLINE void conv_pool_grad_image(const uint32_t *restrict words, const uint16_t *restrict grad_out,
                                      const int8_t *restrict code, const long *restrict offsets, long b, long w,
                                      long in, long oh, long ow, long taps, long out, long block, long chunk,
                                      double *restrict totals, const int nb, const int tap_chunk) {
  __m512 acc[14][2], acc_bias[2];
  for (int q = 0; q < nb; ++q) {
    acc_bias[q] = _mm512_setzero_ps();
    for (int t = 0; t < tap_chunk; ++t) acc[t][q] = _mm512_setzero_ps();
  }
  for (long i = 0; i < oh; ++i)
    for (long j = 0; j < ow; ++j) {
      const long cell = ((b * oh + i) * ow + j) * out + block;
      __m512i picked[2][2];
      for (int q = 0; q < nb; ++q) {
        const __m256i g = _mm256_loadu_si256((const __m256i *)(grad_out + cell + 16 * q));
        const __m128i codes = _mm_loadu_si128((const __m128i *)(code + cell + 16 * q));
        for (int r = 0; r < 2; ++r) {
          const __mmask16 at_left = _mm_cmpeq_epi8_mask(codes, _mm_set1_epi8((char)(2 * r)));
          const __mmask16 at_right = _mm_cmpeq_epi8_mask(codes, _mm_set1_epi8((char)(2 * r + 1)));
          const __m512i left = _mm512_cvtepu16_epi32(_mm256_maskz_mov_epi16(at_left, g));
          const __m512i right = _mm512_cvtepu16_epi32(_mm256_maskz_mov_epi16(at_right, g));
          picked[r][q] = _mm512_or_si512(left, _mm512_slli_epi32(right, 16));
        }
        const __m256i won = _mm256_maskz_mov_epi16(_mm_cmpge_epi8_mask(codes, _mm_setzero_si128()), g);
        acc_bias[q] = _mm512_add_ps(acc_bias[q], widen_bf16(won));
      }
      for (int r = 0; r < 2; ++r) {
        const uint32_t *start = words + ((2 * i + r) * w + 2 * j) * in;
        for (int t = 0; t < tap_chunk; ++t) {
          const __m512bh xs = (__m512bh)_mm512_set1_epi32((int)start[offsets[chunk + t]]);
          for (int q = 0; q < nb; ++q) acc[t][q] = _mm512_dpbf16_ps(acc[t][q], xs, (__m512bh)picked[r][q]);
        }
      }
    }
  for (int q = 0; q < nb; ++q) {
    float lanes[16];
    for (int t = 0; t < tap_chunk && chunk + t < taps; ++t) {
      _mm512_storeu_ps(lanes, acc[t][q]);
      for (int k = 0; k < 16; ++k) totals[(chunk + t) * out + block + 16 * q + k] += lanes[k];
    }
    if (chunk == 0) {
      _mm512_storeu_ps(lanes, acc_bias[q]);
      for (int k = 0; k < 16; ++k) totals[taps * out + block + 16 * q + k] += lanes[k];
    }
  }
}

static BF16_TARGET int conv_pool_grad_images(const uint16_t *restrict x, const uint16_t *restrict grad_out,
                                             const int8_t *restrict code, const long *restrict offsets,
                                             double *restrict totals, long sums, long n, long h, long w, long in,
                                             long oh, long ow, long taps, long out, int threads) {
  const long step = out % 32 == 0 ? 32 : 16, tap_chunk = step == 32 ? 9 : 14;
  int failed = 0;
  _Pragma("omp parallel num_threads(threads) reduction(|: failed)")
  {
    double *mine = totals + omp_get_thread_num() * sums;
    uint32_t *words = malloc(sizeof(uint32_t) * (size_t)(h * w * in));
    float *scratch = malloc(sizeof(float) * (size_t)ts_conv_grad_scratch_floats(h, w, in));
    failed = words == NULL || scratch == NULL;
    _Pragma("omp for schedule(static)")
    for (long b = 0; b < n; ++b) {
      if (!words || !scratch) continue;
      const long cells = b * oh * ow * out;
      if (ts_conv_grad_picked_image_bf16(x + b * h * w * in, grad_out + cells, code + cells, offsets, h, w, in, oh,
                                         ow, taps, out, mine, scratch))
        continue;
      pair_columns(x + b * h * w * in, words, h, w, in);
      for (long block = 0; block < out; block += step)
        for (long chunk = 0; chunk < taps; chunk += tap_chunk) {
          if (step == 32)
            conv_pool_grad_image(words, grad_out, code, offsets, b, w, in, oh, ow, taps, out, block, chunk, mine,
                                 2, 9);
          else
            conv_pool_grad_image(words, grad_out, code, offsets, b, w, in, oh, ow, taps, out, block, chunk, mine,
                                 1, 14);
        }
    }
    free(words);
    free(scratch);
  }
  return failed;
}
#endif

/* As ts_conv_pool_forward, on bfloat16 bits (x, the (kh, kw, in, out) kernel, the bias or NULL, the output y).
   Returns 0; 1 when the packed kernel could not be allocated; 2 when this build or CPU lacks AVX512-BF16. */
int ts_conv_pool_forward_bf16(const uint16_t *restrict x, const uint16_t *restrict kernel,
                              const uint16_t *restrict bias, uint16_t *restrict y, int8_t *restrict code, long n,
                              long h, long w, long in, long kh, long kw, long out, int threads) {
#ifdef TS_BF16_DOT
  if (!ts_conv_pool_bf16_supported()) return 2;
  const long oh = (h - kh + 1) / 2, ow = (w - kw + 1) / 2, taps = kh * kw * in;
  long offsets[2 * MAX_PAIRS], order[MAX_PAIRS];
  tap_pairs pairs;
  ts_conv_tap_offsets(offsets, w, in, kh, kw);
  pair_taps(&pairs, offsets, taps, order);
  /* packed[(k * out + c) * 2 + half]: pair k's two weights of output channel c, side by side as the
     instruction takes them (a zero for the padding half) */
  uint16_t *packed = malloc(sizeof(uint16_t) * 2 * (size_t)(pairs.count * out));
  if (!packed) return 1;
  for (long k = 0; k < pairs.count; ++k)
    for (long c = 0; c < out; ++c) {
      packed[(k * out + c) * 2] = kernel[order[k] * out + c];
      packed[(k * out + c) * 2 + 1] = pairs.hi[k] < 0 ? 0 : kernel[(order[k] + 1) * out + c];
    }
  conv_pool_rows(x, packed, bias, &pairs, y, code, n, h, w, in, out, oh, ow, threads);
  free(packed);
  return 0;
#else
  (void)x, (void)kernel, (void)bias, (void)y, (void)code, (void)n, (void)h, (void)w, (void)in, (void)kh, (void)kw;
  (void)out, (void)threads;
  return 2;
#endif
}

/* As ts_conv_pool_backward, from bfloat16 bits of the input and the output's gradient: exact products, float32
   sums per image, float64 over images. Returns 0; 1 when a buffer could not be allocated; 2 without AVX512-BF16. */
int ts_conv_pool_backward_bf16(const uint16_t *restrict x, const uint16_t *restrict grad_out,
                               const int8_t *restrict code, float *restrict grad_kernel, float *restrict grad_bias,
                               long n, long h, long w, long in, long kh, long kw, long out, int threads) {
#ifdef TS_BF16_DOT
  if (!ts_conv_pool_bf16_supported()) return 2;
  const long oh = (h - kh + 1) / 2, ow = (w - kw + 1) / 2, taps = kh * kw * in, sums = taps * out + out;
  const long teams = threads > 0 ? threads : 1;
  long offsets[2 * MAX_PAIRS + 14];
  ts_conv_tap_offsets(offsets, w, in, kh, kw);
  for (long t = taps; t < taps + 14; ++t) offsets[t] = 0; /* padding taps read a real word */
  double *totals = calloc((size_t)(sums * teams), sizeof(double));
  if (!totals) return 1;
  if (conv_pool_grad_images(x, grad_out, code, offsets, totals, sums, n, h, w, in, oh, ow, taps, out, threads)) {
    free(totals);
    return 1;
  }
  for (long s = 0; s < sums; ++s) {
    double v = 0.0;
    for (long t = 0; t < teams; ++t) v += totals[t * sums + s];
    if (s < taps * out) grad_kernel[s] = (float)v;
    else if (grad_bias) grad_bias[s - taps * out] = (float)v;
  }
  free(totals);
  return 0;
#else
  (void)x, (void)grad_out, (void)code, (void)grad_kernel, (void)grad_bias, (void)n, (void)h, (void)w, (void)in;
  (void)kh, (void)kw, (void)out, (void)threads;
  return 2;
#endif
}
