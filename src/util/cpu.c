/* CPU features, asked once (see cpu.h). */
#include "util/cpu.h"

int ar_cpu_avx2(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    static int known = -1; /* -1 until asked; a race only asks twice */
    int r = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (r < 0) {
        __builtin_cpu_init();
        r = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
            __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("pclmul") &&
            __builtin_cpu_supports("popcnt");
        __atomic_store_n(&known, r, __ATOMIC_RELAXED);
    }
    return r;
#else
    return 0;
#endif
}
