/*
 * A tool call's result within what MCP clients take (result.c): claude hands
 * its model a result's structuredContent whole up to 50,000 characters, and
 * no more; what passes AR_MCP_RESULT_MAX is written to files of the server's
 * that the result names.
 */
#ifndef AR_MCP_RESULT_H
#define AR_MCP_RESULT_H

#include <jansson.h>

#include "agentrun/agentrun.h"
#include "mcp/call.h"

/* The files of the results one server cut. */
struct ar_mcp_results {
    const char *base;            /* the server's directory (borrowed) */
    const struct ar_logger *log; /* borrowed */
    int fd;                      /* base/.agentrun/mcp/PID once made, else -1 */
    char *dir;                   /* its path */
    json_t *files;               /* the names of the files written there (array) */
    unsigned long n_cut;         /* results cut so far: the files' prefix */
};

void ar_mcp_results_init(struct ar_mcp_results *rs, const char *base, const struct ar_logger *log);

/*
 * r is a CallToolResult of tool (borrowed, changed in place). When its
 * structuredContent's JSON is longer than AR_MCP_RESULT_MAX, it keeps the members
 * that fit, in their order (the outputSchema's required ones always; of an array
 * that does not fit, its first items that do), each member left out or shortened is
 * written whole to a file under rs->base/.agentrun/mcp/PID (a string as its text,
 * anything else as indented JSON), "truncated_result" names them, and the text
 * content says so.
 */
void ar_mcp_result_fit(struct ar_mcp_results *rs, const struct ar_mcp_tool *tool, json_t *r);

/* Removes the files written (they live as long as the server) and frees rs. */
void ar_mcp_results_finish(struct ar_mcp_results *rs);

#endif
