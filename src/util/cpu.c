/*
 * CPU features, asked once (see cpu.h).
 *
 * From glibc where it says (<sys/platform/x86.h>): the dynamic loader read the
 * CPU before main, so the answer costs a load. libgcc's __builtin_cpu_supports
 * would link its own reader, a constructor that runs a dozen CPUID instructions
 * at every start, each one a trap to the hypervisor in a virtual machine: a
 * third of a millisecond of every `agentrun run` on a CI runner.
 */
#include "ar_config.h"
#include "util/cpu.h"

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
#elif defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* Each answer is asked for once: -1 until then (a race only asks twice). */
#define ASK_ONCE(...)                                  \
    static int known = -1;                             \
    int r = __atomic_load_n(&known, __ATOMIC_RELAXED); \
    if (r < 0) {                                       \
        __builtin_cpu_init();                          \
        r = __VA_ARGS__;                               \
        __atomic_store_n(&known, r, __ATOMIC_RELAXED); \
    }                                                  \
    return r

int ar_cpu_avx2(void)
{
    ASK_ONCE(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
             __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("pclmul") &&
             __builtin_cpu_supports("popcnt"));
}

int ar_cpu_ssse3(void)
{
    ASK_ONCE(__builtin_cpu_supports("ssse3") && __builtin_cpu_supports("popcnt"));
}
#else
int ar_cpu_avx2(void)
{
    return 0;
}

int ar_cpu_ssse3(void)
{
    return 0;
}
#endif
