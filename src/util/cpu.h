/* What the CPU runs beyond the baseline the build targets, asked once. */
#ifndef AR_UTIL_CPU_H
#define AR_UTIL_CPU_H

/* Non-zero when the CPU runs AVX2 with BMI1, BMI2, PCLMUL and POPCNT: the
 * 64-byte paths of src/json (the block walker, compaction, the fence search)
 * are taken then, and their 16-byte or byte-wise fallbacks otherwise. */
int ar_cpu_avx2(void);

/* Non-zero when the CPU runs SSSE3 and POPCNT: the 16-byte compaction's shuffle. */
int ar_cpu_ssse3(void);

#endif
