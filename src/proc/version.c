/* The libuv version agentrun runs with (uv.h stays inside src/proc). */
#include <uv.h>

#include "proc/proc.h"

const char *ar_libuv_version(void)
{
    return uv_version_string();
}
