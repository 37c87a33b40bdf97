/* The embedded metaschemas (metaschemas.c). */
#ifndef AR_CONTRACT_METASCHEMAS_H
#define AR_CONTRACT_METASCHEMAS_H

/* The text of the metaschema at `uri` (a trailing '#' ignored), static; NULL when none. */
const char *ar_metaschema_text(const char *uri);

#endif
