/* The fused first convolution's kernel and bias gradients for one image on AVX-512 (ts_conv_pool_backward and its
   bfloat16 twin call it per image, and run their own loops where this declines).

   Each output channel takes its gradient from one position of its 2x2 pooling window (the code says which; none
   where the ReLU cut it), so a dense loop's four products per window and tap are three exact zeros and one
   product. Here each tap multiplies only the picked position's input: the image is first laid out as quads (each
   element's values at the four window positions side by side), a tap's quad is broadcast to every 128-bit lane,
   and an in-lane permute by the code gives each channel its own position's value. The float32 sums add the same
   products in the same order (the dense loop's extra terms are +-0), so the results are that loop's bits. It
   declines an image holding an infinity or NaN (there the dense loop's 0 * inf terms make NaNs that torch's
   gradient has too) and builds without AVX-512 (-march=native elsewhere). */
#include <stddef.h>
#include <stdint.h>

#if defined(__AVX512F__)
#include <immintrin.h>
#define PICKED_INLINE static inline __attribute__((always_inline))
#define PICKED_MAX_TAPS 14

/* Whether every element of the image is finite (x - x is 0 only for finite x; bfloat16: an exponent of all ones). */
static int image_is_finite(const float *restrict x, long count) {
  int finite = 1;
  for (long e = 0; e < count; ++e) finite &= (x[e] - x[e]) == 0.0f;
  return finite;
}

static int image_is_finite_bf16(const uint16_t *restrict x, long count) {
  int finite = 1;
  for (long e = 0; e < count; ++e) finite &= (x[e] & 0x7F80) != 0x7F80;
  return finite;
}

/* 16 inputs from x[e] (float32, or bfloat16 widened exactly) */
PICKED_INLINE __m512 load_input(const void *x, long e, const int bf16) {
  if (!bf16) return _mm512_loadu_ps((const float *)x + e);
  const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)((const uint16_t *)x + e)));
  return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
}

PICKED_INLINE float input_at(const void *x, long e, const int bf16) {
  if (!bf16) return ((const float *)x)[e];
  const uint32_t bits = (uint32_t)((const uint16_t *)x)[e] << 16;
  float value;
  __builtin_memcpy(&value, &bits, sizeof value);
  return value;
}

/* 16 output gradients from grad[at] (float32, or bfloat16 widened exactly), zero outside `won`. */
PICKED_INLINE __m512 load_grad(const void *grad, long at, __mmask16 won, const int bf16) {
  if (!bf16) return _mm512_maskz_loadu_ps(won, (const float *)grad + at);
  const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)((const uint16_t *)grad + at)));
  return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(won, wide, 16));
}

/* Taps [chunk, chunk + tap_chunk) and channels [block, block + 16 * nb) of one image, float32 sums added to
   the float64 totals (the bias's too, on the first chunk): tap_chunk * nb accumulators stay in registers. */
PICKED_INLINE void picked_pass(const float *restrict quads, const void *restrict grad, const int8_t *restrict code,
                               const long *restrict offsets, long w, long in, long oh, long ow, long taps, long out,
                               long block, long chunk, double *restrict totals, const int nb, const int tap_chunk,
                               const int bf16) {
  __m512 acc[PICKED_MAX_TAPS][2], acc_bias[2];
  for (int q = 0; q < nb; ++q) {
    acc_bias[q] = _mm512_setzero_ps();
    for (int t = 0; t < tap_chunk; ++t) acc[t][q] = _mm512_setzero_ps();
  }
  const __m512i zero = _mm512_setzero_si512();
  for (long i = 0; i < oh; ++i)
    for (long j = 0; j < ow; ++j) {
      const long cell = (i * ow + j) * out + block;
      __m512 picked[2];
      __m512i codes[2];
      for (int q = 0; q < nb; ++q) {
        codes[q] = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(code + cell + 16 * q)));
        picked[q] = load_grad(grad, cell + 16 * q, _mm512_cmpge_epi32_mask(codes[q], zero), bf16);
        acc_bias[q] = _mm512_add_ps(acc_bias[q], picked[q]);
      }
      const float *top = quads + 4 * (2 * i * w + 2 * j) * in;
      _Pragma("GCC unroll 16")
      for (int t = 0; t < tap_chunk; ++t) {
        const __m512 four = _mm512_broadcast_f32x4(_mm_loadu_ps(top + 4 * offsets[chunk + t]));
        for (int q = 0; q < nb; ++q)  /* the code's low two bits pick the lane (-1: lane 3, times a zero gradient) */
          acc[t][q] = _mm512_fmadd_ps(_mm512_permutevar_ps(four, codes[q]), picked[q], acc[t][q]);
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

/* quads[4 * e + p] = the element e's value at window position p: e, e + in (the next column), e + w * in (the next
   row) and e + (w + 1) * in, for e < (h - 1) * w * in (past a row's end the values are unused); the vector loop
   writes up to 64 floats more. */
PICKED_INLINE void build_quads(const void *restrict x, float *restrict quads, long h, long w, long in, const int bf16) {
  const long width = w * in, count = (h - 1) * width;
  const __m512i pair_lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i pair_hi = _mm512_add_epi32(pair_lo, _mm512_set1_epi32(8));
  const __m512i quad_lo = _mm512_setr_epi32(0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
  const __m512i quad_hi = _mm512_add_epi32(quad_lo, _mm512_set1_epi32(8));
  long e = 0;
  for (; e < count && e + 16 + width + in <= h * width; e += 16) {
    const __m512 a = load_input(x, e, bf16), b = load_input(x, e + in, bf16);
    const __m512 c = load_input(x, e + width, bf16), d = load_input(x, e + width + in, bf16);
    const __m512 ab0 = _mm512_permutex2var_ps(a, pair_lo, b), ab1 = _mm512_permutex2var_ps(a, pair_hi, b);
    const __m512 cd0 = _mm512_permutex2var_ps(c, pair_lo, d), cd1 = _mm512_permutex2var_ps(c, pair_hi, d);
    _mm512_storeu_ps(quads + 4 * e, _mm512_permutex2var_ps(ab0, quad_lo, cd0));
    _mm512_storeu_ps(quads + 4 * e + 16, _mm512_permutex2var_ps(ab0, quad_hi, cd0));
    _mm512_storeu_ps(quads + 4 * e + 32, _mm512_permutex2var_ps(ab1, quad_lo, cd1));
    _mm512_storeu_ps(quads + 4 * e + 48, _mm512_permutex2var_ps(ab1, quad_hi, cd1));
  }
  for (; e < count; ++e) {
    quads[4 * e] = input_at(x, e, bf16);
    quads[4 * e + 1] = input_at(x, e + in, bf16);
    quads[4 * e + 2] = input_at(x, e + width, bf16);
    quads[4 * e + 3] = e + width + in < h * width ? input_at(x, e + width + in, bf16) : 0.0f;
  }
}

/* All blocks and chunks of one image. */
PICKED_INLINE void picked_image(const float *restrict quads, const void *restrict grad, const int8_t *restrict code,
                                const long *restrict offsets, long w, long in, long oh, long ow, long taps, long out,
                                double *restrict totals, const int bf16) {
  const long step = out % 32 == 0 ? 32 : 16, tap_chunk = step == 32 ? 9 : PICKED_MAX_TAPS;
  for (long block = 0; block < out; block += step)
    for (long chunk = 0; chunk < taps; chunk += tap_chunk) {
      if (step == 32)
        picked_pass(quads, grad, code, offsets, w, in, oh, ow, taps, out, block, chunk, totals, 2, 9, bf16);
      else
        picked_pass(quads, grad, code, offsets, w, in, oh, ow, taps, out, block, chunk, totals, 1, PICKED_MAX_TAPS,
                    bf16);
    }
}
#endif

/* Floats of the scratch buffer the functions below take for an (h, w, in) image. */
long ts_conv_grad_scratch_floats(long h, long w, long in) { return 4 * h * w * in + 64; }

/* One image's gradients added to `totals` (taps * out kernel sums, then out bias sums): x is the image's (h, w, in)
   input, grad and code its (oh, ow, out) output gradient and window codes, offsets[t] as ts_conv_tap_offsets
   with PICKED_MAX_TAPS zero entries after the last tap, scratch ts_conv_grad_scratch_floats(h, w, in) floats.
   Returns 1 when done, 0 when it declines (see above). */
int ts_conv_grad_picked_image(const float *restrict x, const float *restrict grad, const int8_t *restrict code,
                              const long *restrict offsets, long h, long w, long in, long oh, long ow, long taps,
                              long out, double *restrict totals, float *restrict scratch) {
#if defined(__AVX512F__)
  if (!image_is_finite(x, h * w * in)) return 0;
  build_quads(x, scratch, h, w, in, 0);
  picked_image(scratch, grad, code, offsets, w, in, oh, ow, taps, out, totals, 0);
  return 1;
#else
  (void)x, (void)grad, (void)code, (void)offsets, (void)h, (void)w, (void)in, (void)oh, (void)ow, (void)taps;
  (void)out, (void)totals, (void)scratch;
  return 0;
#endif
}

/* As ts_conv_grad_picked_image for bfloat16 bits of the image and its output gradient, widened exactly: exact
   products, float32 sums, the bits of the float32 loop on the widened values (cpu_kernels_bf16.c's dot product
   loop gives them too, but for subnormals, which that instruction takes as zero). */
int ts_conv_grad_picked_image_bf16(const uint16_t *restrict x, const uint16_t *restrict grad,
                                   const int8_t *restrict code, const long *restrict offsets, long h, long w, long in,
                                   long oh, long ow, long taps, long out, double *restrict totals,
                                   float *restrict scratch) {
#if defined(__AVX512F__)
  if (!image_is_finite_bf16(x, h * w * in)) return 0;
  build_quads(x, scratch, h, w, in, 1);
  picked_image(scratch, grad, code, offsets, w, in, oh, ow, taps, out, totals, 1);
  return 1;
#else
  (void)x, (void)grad, (void)code, (void)offsets, (void)h, (void)w, (void)in, (void)oh, (void)ow, (void)taps;
  (void)out, (void)totals, (void)scratch;
  return 0;
#endif
}
