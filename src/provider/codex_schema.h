/*
 * codex's structured output under OpenAI's strict mode (codex_schema.c): the
 * contract is rewritten before the call (--output-schema) and the answer's
 * forced nulls are taken out after it. Pure functions on JSON text; only
 * src/provider/ and the unit tests include this.
 */
#ifndef AR_PROVIDER_CODEX_SCHEMA_H
#define AR_PROVIDER_CODEX_SCHEMA_H

/*
 * The contract rewritten for OpenAI strict structured outputs: every object
 * gets additionalProperties false and lists all its properties in required
 * (optional ones become nullable); keywords strict mode rejects are dropped
 * ($schema among them: the dialect is strict mode's own); oneOf becomes anyOf; a const or
 * enum without a type gets the type of its values (strict mode requires one). NULL when the root is
 * not an object schema, when strict mode cannot carry the contract (a map of names it
 * leaves open, allOf, a reference to an anchor or another document: then no
 * --output-schema is passed, codex_schema.c says why) or the text is not JSON. schema is borrowed.
 * Caller free()s.
 */
char *ar_codex_strict_schema(const char *schema);

/*
 * Non-zero when there is a strict copy and it says all the contract asserts (only
 * annotations are left out; oneOf read as anyOf counts as lost), so the prompt need not
 * state the contract (provider.h, native_contract). A lossy copy still goes to codex,
 * and the prompt keeps the contract. NULL-safe.
 */
int ar_codex_native_contract(const char *schema);

/*
 * The answer to a strict-mode call with the nulls taken out that strict mode
 * forced on optional properties the contract does not allow to be null; NULL
 * when nothing changed (or text is not JSON). text and schema (the original
 * contract, not its strict copy) are borrowed. Caller free()s.
 */
char *ar_codex_unstrict(const char *text, const char *schema);

#endif
