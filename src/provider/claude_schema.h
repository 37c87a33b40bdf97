/*
 * claude's --json-schema from a contract (claude_schema.c). Pure functions on JSON text;
 * only src/provider/ and the unit tests include this.
 */
#ifndef AR_PROVIDER_CLAUDE_SCHEMA_H
#define AR_PROVIDER_CLAUDE_SCHEMA_H

/*
 * The contract (JSON Schema text, borrowed) as claude's --json-schema takes it: draft-07,
 * no "$schema", only keywords its validator knows (it refuses any other before the first
 * request: "strict mode: unknown keyword"), compact. 2020-12's forms are written the
 * draft-07 way (prefixItems as an items array, dependentRequired and dependentSchemas as
 * dependencies, $defs as definitions); what draft-07 cannot say is left out, so the copy
 * only ever accepts more than the contract (format, unevaluated*, minContains beside
 * contains). NULL when the root does not describe an object (claude's StructuredOutput
 * tool takes objects), when a reference cannot be written as a JSON Pointer from the root
 * ($dynamicRef, an $anchor, a nested $id, another document), or on bad JSON: then no
 * --json-schema is passed, and agentrun's own check stays the judge either way.
 * Caller free()s.
 */
char *ar_claude_schema(const char *contract);

/*
 * Non-zero when ar_claude_schema() gives a copy that says all the contract asserts: then
 * the prompt need not state the contract (provider.h, native_contract). A copy that
 * accepts more still goes to claude, and the prompt keeps the contract.
 */
int ar_claude_native_contract(const char *contract);

#endif
