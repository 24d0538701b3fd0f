/* Paged decode attention for the CPU: each request's one query token attends to its K/V read in
 * place through its block table (no gather, no padding, no mask), softmax in fp32; float32 and
 * bfloat16 (as uint16_t). Layouts are engine/attention/backend.py's: q, out [B, Hq, D]; caches
 * [blocks, bs, Hkv, D]; table int32 [B, W]; lens int32 [B]. Built and loaded by cpu_kernels.py.
 * Positions are the outer loop and heads the inner one, so each block is read once, in order.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>

static inline float load_f32(const float *p) { return *p; }
static inline void store_f32(float *p, float x) { *p = x; }
static inline float load_bf16(const uint16_t *p) {
    union { uint32_t u; float f; } v = {.u = (uint32_t)*p << 16};
    return v.f;
}
static inline void store_bf16(uint16_t *p, float x) {   /* round to nearest even, as torch does */
    union { uint32_t u; float f; } v = {.f = x};
    *p = (uint16_t)((v.u + 0x7FFF + ((v.u >> 16) & 1)) >> 16);
}

/* Ask for the next request's first blocks (at most 8, well inside L2) while this one computes:
 * ~10% on a cold cache. */
static inline void prefetch_request(const char *kc, const char *vc, const int32_t *row, int first,
                                    int last, int64_t block_bytes) {
    for (int j = first; j < last && j < first + 8; j++)
        for (int64_t c = 0; c < block_bytes; c += 64) {
            __builtin_prefetch(kc + row[j] * block_bytes + c, 0, 2);
            __builtin_prefetch(vc + row[j] * block_bytes + c, 0, 2);
        }
}

/* One request: all its heads over positions [start, len); scratch holds Hq * (2 * D + n) floats. */
#define DEFINE_REQUEST(T, SUF)                                                                       \
static inline __attribute__((always_inline)) void request_##SUF(                                    \
        const T *restrict q, const T *restrict kc, const T *restrict vc, const int32_t *restrict row, \
        int start, int len, T *restrict out, int Hq, int Hkv, int bs, int D, float scale,           \
        float *restrict scratch) {                                                                   \
    const int n = len - start, G = Hq / Hkv;                                                         \
    const int64_t stride = (int64_t)Hkv * D;                                                         \
    float *qs = scratch, *acc = scratch + Hq * D, *scores = scratch + 2 * Hq * D;                    \
    for (int j = 0; j < Hq * D; j++) { qs[j] = load_##SUF(q + j) * scale; acc[j] = 0.f; }            \
    for (int i = 0; i < n; i++) {                                                                    \
        const int p = start + i;                                                                     \
        const T *k = kc + ((int64_t)row[p / bs] * bs + p % bs) * stride;                             \
        for (int h = 0; h < Hkv; h++) {                                                              \
            float kf[D];                                                                             \
            for (int d = 0; d < D; d++) kf[d] = load_##SUF(k + h * D + d);                           \
            for (int g = 0; g < G; g++) {                                                            \
                const float *qh = qs + (h * G + g) * D;                                              \
                float s = 0.f;                                                                       \
                for (int d = 0; d < D; d++) s += qh[d] * kf[d];                                      \
                scores[(h * G + g) * n + i] = s;                                                     \
            }                                                                                        \
        }                                                                                            \
    }                                                                                                \
    for (int j = 0; j < Hq; j++) {                                                                   \
        float *s = scores + j * n, m = -FLT_MAX, t = 0.f;                                            \
        for (int i = 0; i < n; i++) m = s[i] > m ? s[i] : m;                                         \
        for (int i = 0; i < n; i++) { s[i] = expf(s[i] - m); t += s[i]; }                            \
        const float inv = 1.f / t;                                                                   \
        for (int i = 0; i < n; i++) s[i] *= inv;                                                     \
    }                                                                                                \
    for (int i = 0; i < n; i++) {                                                                    \
        const int p = start + i;                                                                     \
        const T *v = vc + ((int64_t)row[p / bs] * bs + p % bs) * stride;                             \
        for (int h = 0; h < Hkv; h++) {                                                              \
            float vf[D];                                                                             \
            for (int d = 0; d < D; d++) vf[d] = load_##SUF(v + h * D + d);                           \
            for (int g = 0; g < G; g++) {                                                            \
                const float w = scores[(h * G + g) * n + i];                                         \
                float *a = acc + (h * G + g) * D;                                                    \
                for (int d = 0; d < D; d++) a[d] += w * vf[d];                                       \
            }                                                                                        \
        }                                                                                            \
    }                                                                                                \
    for (int j = 0; j < Hq * D; j++) store_##SUF(out + j, acc[j]);                                   \
}

/* The whole batch; returns 0, or -1 for a shape it does not take (the caller falls back). Head dims
 * 64, 128 and 256 get loops of constant length; others run the same code with D unknown. */
#define DEFINE_DECODE(T, SUF)                                                                        \
DEFINE_REQUEST(T, SUF)                                                                               \
int paged_decode_##SUF(const T *q, const T *kc, const T *vc, const int32_t *table,                   \
                       const int32_t *lens, T *out, int B, int Hq, int Hkv, int D, int bs, int W,    \
                       int window, float scale, float *scratch) {                                    \
    if (Hq % Hkv != 0 || D > 512) return -1;                                                         \
    for (int b = 0; b < B; b++) {                                                                    \
        const int len = lens[b], start = window > 0 && len > window ? len - window : 0;              \
        const int32_t *row = table + (int64_t)b * W;                                                 \
        const T *qb = q + (int64_t)b * Hq * D;                                                       \
        T *ob = out + (int64_t)b * Hq * D;                                                           \
        if (b + 1 < B) {                                                                             \
            const int next = lens[b + 1], from = window > 0 && next > window ? next - window : 0;     \
            prefetch_request((const char *)kc, (const char *)vc, table + (int64_t)(b + 1) * W,       \
                             from / bs, (next + bs - 1) / bs, (int64_t)bs * Hkv * D * (int64_t)sizeof(T)); \
        }                                                                                            \
        if (D == 64) request_##SUF(qb, kc, vc, row, start, len, ob, Hq, Hkv, bs, 64, scale, scratch); \
        else if (D == 128) request_##SUF(qb, kc, vc, row, start, len, ob, Hq, Hkv, bs, 128, scale, scratch); \
        else if (D == 256) request_##SUF(qb, kc, vc, row, start, len, ob, Hq, Hkv, bs, 256, scale, scratch); \
        else request_##SUF(qb, kc, vc, row, start, len, ob, Hq, Hkv, bs, D, scale, scratch);         \
    }                                                                                                \
    return 0;                                                                                        \
}

DEFINE_DECODE(float, f32)
DEFINE_DECODE(uint16_t, bf16)
