/* What the CPU runs beyond the baseline the build targets, asked once. */
#ifndef AR_UTIL_CPU_H
#define AR_UTIL_CPU_H

/* Non-zero when the CPU runs AVX2 with BMI1, BMI2, PCLMUL and POPCNT: the
 * 64-byte paths of src/json (the block walker, compaction, the fence search)
 * are taken then, and their 16-byte or byte-wise fallbacks otherwise. */
int ar_cpu_avx2(void);

/* Non-zero when the CPU runs SSSE3 and POPCNT: the 16-byte compaction's shuffle. */
int ar_cpu_ssse3(void);

/* What CPUID and XGETBV say, asked now: AR_CPU_AVX2 as ar_cpu_avx2() means it,
 * AR_CPU_SSSE3 as ar_cpu_ssse3() does. What those two return where the C library
 * does not know (musl); tests/unit checks it against glibc where it does. */
enum { AR_CPU_AVX2 = 1 << 0, AR_CPU_SSSE3 = 1 << 1 };
int ar_cpu_probe(void);

#endif
