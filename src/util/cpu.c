/*
 * CPU features, asked once (see cpu.h).
 *
 * From glibc where it says (<sys/platform/x86.h>): the dynamic loader read the
 * CPU before main, so the answer costs a load. Elsewhere (musl, which the
 * release binary links: docs/decisions.md) from ar_cpu_probe(), when a 64-byte
 * path first wants to know. Never libgcc's __builtin_cpu_supports: linking it
 * links its reader, a constructor that runs a dozen CPUID instructions at every
 * start, each one a trap to the hypervisor in a virtual machine.
 */
#include "ar_config.h"
#include "util/cpu.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>

int ar_cpu_probe(void)
{
    /* Three CPUID instructions (each a trap on a virtual machine): the highest
     * leaf, then leaves 1 and 7 as they are (__get_cpuid would ask leaf 0 again
     * before each). */
    unsigned max, a, b, c, d;
    __cpuid(0, max, b, c, d);
    if (max < 1)
        return 0;
    __cpuid(1, a, b, c, d);
    if (!(c & bit_POPCNT))
        return 0;
    int have = (c & bit_SSSE3) ? AR_CPU_SSSE3 : 0;
    int ymm = 0; /* the OS saves the XMM and YMM registers across a switch */
    if ((c & bit_OSXSAVE) && (c & bit_AVX)) {
        unsigned lo, hi;
        __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        ymm = (lo & 6) == 6;
    }
    if (!ymm || !(c & bit_PCLMUL) || max < 7)
        return have;
    __cpuid_count(7, 0, a, b, c, d);
    if ((b & bit_AVX2) && (b & bit_BMI) && (b & bit_BMI2))
        have |= AR_CPU_AVX2;
    return have;
}
#else
int ar_cpu_probe(void)
{
    return 0;
}
#endif

#if defined(__x86_64__) && defined(AR_HAVE_GLIBC_X86_H)
#include <sys/platform/x86.h>

int ar_cpu_avx2(void)
{
    return CPU_FEATURE_ACTIVE(AVX2) && CPU_FEATURE_ACTIVE(BMI1) && CPU_FEATURE_ACTIVE(BMI2) &&
           CPU_FEATURE_ACTIVE(PCLMULQDQ) && CPU_FEATURE_ACTIVE(POPCNT);
}

int ar_cpu_ssse3(void)
{
    return CPU_FEATURE_ACTIVE(SSSE3) && CPU_FEATURE_ACTIVE(POPCNT);
}
#else
/* ar_cpu_probe()'s answer with 1 << 30 set once it is known: 0 until then (a
 * race only asks twice). */
static int cpu(void)
{
    static int known;
    int r = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (r == 0) {
        r = ar_cpu_probe() | 1 << 30;
        __atomic_store_n(&known, r, __ATOMIC_RELAXED);
    }
    return r;
}

int ar_cpu_avx2(void)
{
    return (cpu() & AR_CPU_AVX2) != 0;
}

int ar_cpu_ssse3(void)
{
    return (cpu() & AR_CPU_SSSE3) != 0;
}
#endif
