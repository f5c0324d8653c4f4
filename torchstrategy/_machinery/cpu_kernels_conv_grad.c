/* The float32 fused first convolution's kernel and bias gradients for one image on AVX-512 (cpu_kernels.c's
   ts_conv_pool_backward calls it per image, and runs its own dense loop where this declines).

   Each output channel takes its gradient from one position of its 2x2 pooling window (the code says which; none
   where the ReLU cut it), so the dense loop's four products per window and tap are three exact zeros and one
   product. Here each tap multiplies only the picked position's input: the tap's inputs at the window's two
   columns in its upper and lower rows are four lanes of two masked loads, and a two-source permute by the
   code puts each channel's own value in its lane. The float32 sums add the same products in the same order
   (the dense loop's extra terms are +-0), so the results are that loop's. It declines an image holding an
   infinity or NaN (there the dense loop's 0 * inf terms make NaNs that torch's gradient has too), more than
   15 input channels (the lower row's lanes start at 16), or a build without AVX-512 (-march=native elsewhere). */
#include <stddef.h>
#include <stdint.h>

#if defined(__AVX512F__)
#include <immintrin.h>
#define PICKED_INLINE static inline __attribute__((always_inline))
#define PICKED_MAX_TAPS 14

/* Whether every element of the image is finite (x - x is 0 only for finite x). */
static int image_is_finite(const float *restrict x, long count) {
  int finite = 1;
  for (long e = 0; e < count; ++e) finite &= (x[e] - x[e]) == 0.0f;
  return finite;
}

/* Taps [chunk, chunk + tap_chunk) and channels [block, block + 16 * nb) of one image, float32 sums added to
   the float64 totals (the bias's too, on the first chunk): tap_chunk * nb accumulators stay in registers. */
PICKED_INLINE void picked_pass(const float *restrict x, const float *restrict grad, const int8_t *restrict code,
                               const long *restrict offsets, long w, long in, long oh, long ow, long taps, long out,
                               long block, long chunk, double *restrict totals, const int nb, const int tap_chunk) {
  __m512 acc[PICKED_MAX_TAPS][2], acc_bias[2];
  for (int q = 0; q < nb; ++q) {
    acc_bias[q] = _mm512_setzero_ps();
    for (int t = 0; t < tap_chunk; ++t) acc[t][q] = _mm512_setzero_ps();
  }
  const __mmask16 columns = (__mmask16)(1u | 1u << in);  /* a tap's input at the window's left and right column */
  const long below = w * in;
  const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi32(1), two = _mm512_set1_epi32(2);
  const __m512i right = _mm512_set1_epi32((int)in), lower = _mm512_set1_epi32(16);
  for (long i = 0; i < oh; ++i)
    for (long j = 0; j < ow; ++j) {
      const long cell = (i * ow + j) * out + block;
      __m512 picked[2];
      __m512i lane[2];
      for (int q = 0; q < nb; ++q) {
        const __m512i codes = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(code + cell + 16 * q)));
        picked[q] = _mm512_maskz_loadu_ps(_mm512_cmpge_epi32_mask(codes, zero), grad + cell + 16 * q);
        acc_bias[q] = _mm512_add_ps(acc_bias[q], picked[q]);
        /* window position p = code: lane (p & 1) * in of the upper row's load, or of the lower row's (+16) */
        lane[q] = _mm512_or_si512(_mm512_maskz_mov_epi32(_mm512_test_epi32_mask(codes, one), right),
                                  _mm512_maskz_mov_epi32(_mm512_test_epi32_mask(codes, two), lower));
      }
      const float *top = x + (2 * i * w + 2 * j) * in;
      _Pragma("GCC unroll 16")
      for (int t = 0; t < tap_chunk; ++t) {
        const float *at = top + offsets[chunk + t];
        const __m512 up = _mm512_maskz_loadu_ps(columns, at), down = _mm512_maskz_loadu_ps(columns, at + below);
        for (int q = 0; q < nb; ++q)
          acc[t][q] = _mm512_fmadd_ps(_mm512_permutex2var_ps(up, lane[q], down), picked[q], acc[t][q]);
      }
    }
  for (int q = 0; q < nb; ++q) {
    float lanes[16];
    _Pragma("GCC unroll 16")
    for (int t = 0; t < tap_chunk; ++t) {  /* a constant count, so acc stays in registers, not memory */
      if (chunk + t >= taps) continue;
      _mm512_storeu_ps(lanes, acc[t][q]);
      for (int k = 0; k < 16; ++k) totals[(chunk + t) * out + block + 16 * q + k] += lanes[k];
    }
    if (chunk == 0) {
      _mm512_storeu_ps(lanes, acc_bias[q]);
      for (int k = 0; k < 16; ++k) totals[taps * out + block + 16 * q + k] += lanes[k];
    }
  }
}
#endif

/* One image's gradients added to `totals` (taps * out kernel sums, then out bias sums): x is the image's (h, w, in)
   input, grad and code its (oh, ow, out) output gradient and window codes, offsets[t] as ts_conv_tap_offsets
   with PICKED_MAX_TAPS zero entries after the last tap. Returns 1 when done, 0 when it declines (see above). */
int ts_conv_grad_picked_image(const float *restrict x, const float *restrict grad, const int8_t *restrict code,
                              const long *restrict offsets, long h, long w, long in, long oh, long ow, long taps,
                              long out, double *restrict totals) {
#if defined(__AVX512F__)
  if (in >= 16 || !image_is_finite(x, h * w * in)) return 0;
  const long step = out % 32 == 0 ? 32 : 16, tap_chunk = step == 32 ? 9 : PICKED_MAX_TAPS;
  for (long block = 0; block < out; block += step)
    for (long chunk = 0; chunk < taps; chunk += tap_chunk) {
      if (step == 32) picked_pass(x, grad, code, offsets, w, in, oh, ow, taps, out, block, chunk, totals, 2, 9);
      else picked_pass(x, grad, code, offsets, w, in, oh, ow, taps, out, block, chunk, totals, 1, PICKED_MAX_TAPS);
    }
  return 1;
#else
  (void)x, (void)grad, (void)code, (void)offsets, (void)h, (void)w, (void)in, (void)oh, (void)ow, (void)taps;
  (void)out, (void)totals;
  return 0;
#endif
}
