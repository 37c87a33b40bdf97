/*
 * libFuzzer target for the names of agentrun's worktrees (git/worktrees.h): any
 * job id gives one component of a valid branch name, and any name the check
 * accepts, used as a path below a folder, cannot leave it or pass for an option.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "git/worktrees.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* No empty, "." or ".." part (nor any part starting with '.'), no leading '-' or '/'. */
static void stays_below(const char *name)
{
    if (!ar_git_branch_name_ok(name) || name[0] == '-' || name[0] == '/')
        abort();
    for (const char *p = name;;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 0 || p[0] == '.')
            abort();
        if (!slash)
            return;
        p = slash + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = strndup((const char *)data, size);
    if (!text)
        return 0;
    char part[AR_GIT_COMPONENT_SIZE], branch[256];
    ar_git_ref_component(text, part);
    if (strchr(part, '/') || strlen(part) >= AR_GIT_COMPONENT_SIZE)
        abort();
    ar_git_tree_branch("20261125-143001-3fa2", text, branch, sizeof(branch));
    stays_below(branch);
    if (!ar_git_tree_branch_ours(branch)) /* prune would not know its own branch */
        abort();
    if (ar_git_branch_name_ok(text))
        stays_below(text);
    free(text);
    return 0;
}
