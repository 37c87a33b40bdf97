/*
 * The metaschemas of the dialects agentrun implements, embedded so that a $ref to one
 * (https://json-schema.org/draft/2020-12/schema, its vocabularies, and
 * http://json-schema.org/draft-07/schema#) never needs the network. The texts are the
 * JSON Schema organisation's (json-schema.org), as Python's jsonschema-specifications
 * 2025.9.1 ships them, compacted. Generated; regenerate rather than edit.
 */
#include <string.h>

#include "contract/metaschemas.h"

static const struct {
    const char *uri;
    const char *text;
} metaschemas[] = {
    { "https://json-schema.org/draft/2020-12/schema",
      "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$id\":\"https://json-sc"
      "hema.org/draft/2020-12/schema\",\"$vocabulary\":{\"https://json-schema.org/draft/202"
      "0-12/vocab/core\":true,\"https://json-schema.org/draft/2020-12/vocab/applicator\":t"
      "rue,\"https://json-schema.org/draft/2020-12/vocab/unevaluated\":true,\"https://json"
      "-schema.org/draft/2020-12/vocab/validation\":true,\"https://json-schema.org/draft/"
      "2020-12/vocab/meta-data\":true,\"https://json-schema.org/draft/2020-12/vocab/forma"
      "t-annotation\":true,\"https://json-schema.org/draft/2020-12/vocab/content\":true},\""
      "$dynamicAnchor\":\"meta\",\"title\":\"Core and Validation specifications meta-schema\","
      "\"allOf\":[{\"$ref\":\"meta/core\"},{\"$ref\":\"meta/applicator\"},{\"$ref\":\"meta/"
      "unevaluat"
      "ed\"},{\"$ref\":\"meta/validation\"},{\"$ref\":\"meta/meta-data\"},{\"$ref\":\"meta/format-a"
      "nnotation\"},{\"$ref\":\"meta/"
      "content\"}],\"type\":[\"object\",\"boolean\"],\"$comment\":\"Thi"
      "s meta-schema also defines keywords that have appeared in previous drafts in ord"
      "er to prevent incompatible extensions as they remain in common use.\",\"properties"
      "\":{\"definitions\":{\"$comment\":\"\\\"definitions\\\" has been replaced by "
      "\\\"$defs\\\".\",\""
      "type\":\"object\",\"additionalProperties\":{\"$dynamicRef\":\"#meta\"},\"deprecated\":true,"
      "\"default\":{}},\"dependencies\":{\"$comment\":\"\\\"dependencies\\\" has been split and re"
      "placed by \\\"dependentSchemas\\\" and \\\"dependentRequired\\\" in order to serve their"
      " differing semantics.\",\"type\":\"object\",\"additionalProperties\":{\"anyOf\":[{\"$dynam"
      "icRef\":\"#meta\"},{\"$ref\":\"meta/validation#/$defs/stringArray\"}]},\"deprecated\":tru"
      "e,\"default\":{}},\"$recursiveAnchor\":{\"$comment\":\"\\\"$recursiveAnchor\\\" has been re"
      "placed by \\\"$dynamicAnchor\\\".\",\"$ref\":\"meta/core#/$defs/anchorString\",\"deprecate"
      "d\":true},\"$recursiveRef\":{\"$comment\":\"\\\"$recursiveRef\\\" has been replaced by \\\"$"
      "dynamicRef\\\".\",\"$ref\":\"meta/core#/$defs/uriReferenceString\",\"deprecated\":true}}}" },
    { "https://json-schema.org/draft/2020-12/meta/applicator",
      "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$id\":\"https://json-sc"
      "hema.org/draft/2020-12/meta/applicator\",\"$vocabulary\":{\"https://json-schema.org/"
      "draft/2020-12/vocab/applicator\":true},\"$dynamicAnchor\":\"meta\",\"title\":\"Applicato"
      "r vocabulary meta-schema\",\"type\":[\"object\",\"boolean\"],\"properties\":{\"prefixItems"
      "\":{\"$ref\":\"#/$defs/"
      "schemaArray\"},\"items\":{\"$dynamicRef\":\"#meta\"},\"contains\":{\"$d"
      "ynamicRef\":\"#meta\"},\"additionalProperties\":{\"$dynamicRef\":\"#meta\"},\"properties\":"
      "{\"type\":\"object\",\"additionalProperties\":{\"$dynamicRef\":\"#meta\"},\"default\":{}},"
      "\"p"
      "atternProperties\":{\"type\":\"object\",\"additionalProperties\":{\"$dynamicRef\":\"#meta\""
      "},\"propertyNames\":{\"format\":\"regex\"},\"default\":{}},\"dependentSchemas\":{\"type\":"
      "\"o"
      "bject\",\"additionalProperties\":{\"$dynamicRef\":\"#meta\"},\"default\":{}},\"propertyNam"
      "es\":{\"$dynamicRef\":\"#meta\"},\"if\":{\"$dynamicRef\":\"#meta\"},\"then\":{\"$"
      "dynamicRef\":\""
      "#meta\"},\"else\":{\"$dynamicRef\":\"#meta\"},\"allOf\":{\"$ref\":\"#/$defs/"
      "schemaArray\"},\"a"
      "nyOf\":{\"$ref\":\"#/$defs/schemaArray\"},\"oneOf\":{\"$ref\":\"#/$defs/schemaArray\"},\"not"
      "\":{\"$dynamicRef\":\"#meta\"}},\"$defs\":{\"schemaArray\":{\"type\":\"array\",\"minItems\":"
      "1,\""
      "items\":{\"$dynamicRef\":\"#meta\"}}}}" },
    { "https://json-schema.org/draft/2020-12/meta/content",
      "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$id\":\"https://json-sc"
      "hema.org/draft/2020-12/meta/content\",\"$vocabulary\":{\"https://json-schema.org/dra"
      "ft/2020-12/vocab/content\":true},\"$dynamicAnchor\":\"meta\",\"title\":\"Content vocabul"
      "ary meta-schema\",\"type\":[\"object\",\"boolean\"],\"properties\":{\"contentEncoding\":{\"t"
      "ype\":\"string\"},\"contentMediaType\":{\"type\":\"string\"},\"contentSchema\":{\"$dynamicRe"
      "f\":\"#meta\"}}}" },
    { "https://json-schema.org/draft/2020-12/meta/core",
      "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$id\":\"https://json-sc"
      "hema.org/draft/2020-12/meta/core\",\"$vocabulary\":{\"https://json-schema.org/draft/"
      "2020-12/vocab/core\":true},\"$dynamicAnchor\":\"meta\",\"title\":\"Core vocabulary meta-"
      "schema\",\"type\":[\"object\",\"boolean\"],\"properties\":{\"$id\":{\"$ref\":\"#/$defs/"
      "uriRefe"
      "renceString\",\"$comment\":\"Non-empty fragments not allowed.\",\"pattern\":\"^[^#]*#?$\""
      "},\"$schema\":{\"$ref\":\"#/$defs/uriString\"},\"$ref\":{\"$ref\":\"#/$defs/uriReferenceStr"
      "ing\"},\"$anchor\":{\"$ref\":\"#/$defs/anchorString\"},\"$dynamicRef\":{\"$ref\":\"#/$defs/u"
      "riReferenceString\"},\"$dynamicAnchor\":{\"$ref\":\"#/$defs/anchorString\"},\"$vocabular"
      "y\":{\"type\":\"object\",\"propertyNames\":{\"$ref\":\"#/$defs/uriString\"},\"additionalProp"
      "erties\":{\"type\":\"boolean\"}},\"$comment\":{\"type\":\"string\"},\"$defs\":{\"type\":"
      "\"object"
      "\",\"additionalProperties\":{\"$dynamicRef\":\"#meta\"}}},\"$defs\":{\"anchorString\":{\"typ"
      "e\":\"string\",\"pattern\":\"^[A-Za-z_][-A-Za-z0-9._]*$\"},\"uriString\":{\"type\":"
      "\"string\""
      ",\"format\":\"uri\"},\"uriReferenceString\":{\"type\":\"string\",\"format\":\"uri-"
      "reference\"}"
      "}}" },
    { "https://json-schema.org/draft/2020-12/meta/format-annotation",
      "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$id\":\"https://json-sc"
      "hema.org/draft/2020-12/meta/format-annotation\",\"$vocabulary\":{\"https://json-sche"
      "ma.org/draft/2020-12/vocab/format-annotation\":true},\"$dynamicAnchor\":\"meta\",\"tit"
      "le\":\"Format vocabulary meta-schema for annotation results\",\"type\":[\"object\",\"boo"
      "lean\"],\"properties\":{\"format\":{\"type\":\"string\"}}}" },
    { "https://json-schema.org/draft/2020-12/meta/format-assertion",
      "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$id\":\"https://json-sc"
      "hema.org/draft/2020-12/meta/format-assertion\",\"$vocabulary\":{\"https://json-schem"
      "a.org/draft/2020-12/vocab/format-assertion\":true},\"$dynamicAnchor\":\"meta\",\"title"
      "\":\"Format vocabulary meta-schema for assertion results\",\"type\":[\"object\",\"boolea"
      "n\"],\"properties\":{\"format\":{\"type\":\"string\"}}}" },
    { "https://json-schema.org/draft/2020-12/meta/meta-data",
      "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$id\":\"https://json-sc"
      "hema.org/draft/2020-12/meta/meta-data\",\"$vocabulary\":{\"https://json-schema.org/d"
      "raft/2020-12/vocab/meta-data\":true},\"$dynamicAnchor\":\"meta\",\"title\":\"Meta-data v"
      "ocabulary "
      "meta-schema\",\"type\":[\"object\",\"boolean\"],\"properties\":{\"title\":{\"type\""
      ":\"string\"},\"description\":{\"type\":\"string\"},\"default\":true,\"deprecated\":{"
      "\"type\":\""
      "boolean\",\"default\":false},\"readOnly\":{\"type\":\"boolean\",\"default\":false},\"writeOn"
      "ly\":{\"type\":\"boolean\",\"default\":false},\"examples\":{\"type\":\"array\",\"items\":"
      "true}}"
      "}" },
    { "https://json-schema.org/draft/2020-12/meta/unevaluated",
      "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$id\":\"https://json-sc"
      "hema.org/draft/2020-12/meta/unevaluated\",\"$vocabulary\":{\"https://json-schema.org"
      "/draft/2020-12/vocab/unevaluated\":true},\"$dynamicAnchor\":\"meta\",\"title\":\"Unevalu"
      "ated applicator vocabulary meta-schema\",\"type\":[\"object\",\"boolean\"],\"properties\""
      ":{\"unevaluatedItems\":{\"$dynamicRef\":\"#meta\"},\"unevaluatedProperties\":{\"$dynamicR"
      "ef\":\"#meta\"}}}" },
    { "https://json-schema.org/draft/2020-12/meta/validation",
      "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$id\":\"https://json-sc"
      "hema.org/draft/2020-12/meta/validation\",\"$vocabulary\":{\"https://json-schema.org/"
      "draft/2020-12/vocab/validation\":true},\"$dynamicAnchor\":\"meta\",\"title\":\"Validatio"
      "n vocabulary meta-schema\",\"type\":[\"object\",\"boolean\"],\"properties\":{\"type\":{\"any"
      "Of\":[{\"$ref\":\"#/$defs/simpleTypes\"},{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/"
      "sim"
      "pleTypes\"},\"minItems\":1,\"uniqueItems\":true}]},\"const\":true,\"enum\":{\"type\":\"array"
      "\",\"items\":true},\"multipleOf\":{\"type\":\"number\",\"exclusiveMinimum\":0},\"maximum\":{"
      "\""
      "type\":\"number\"},\"exclusiveMaximum\":{\"type\":\"number\"},\"minimum\":{\"type\":"
      "\"number\"}"
      ",\"exclusiveMinimum\":{\"type\":\"number\"},\"maxLength\":{\"$ref\":\"#/$defs/nonNegativeIn"
      "teger\"},\"minLength\":{\"$ref\":\"#/$defs/nonNegativeIntegerDefault0\"},\"pattern\":{\"ty"
      "pe\":\"string\",\"format\":\"regex\"},\"maxItems\":{\"$ref\":\"#/$defs/"
      "nonNegativeInteger\"},"
      "\"minItems\":{\"$ref\":\"#/$defs/nonNegativeIntegerDefault0\"},\"uniqueItems\":{\"type\":\""
      "boolean\",\"default\":false},\"maxContains\":{\"$ref\":\"#/$defs/nonNegativeInteger\"},\"m"
      "inContains\":{\"$ref\":\"#/$defs/nonNegativeInteger\",\"default\":1},\"maxProperties\":{\""
      "$ref\":\"#/$defs/nonNegativeInteger\"},\"minProperties\":{\"$ref\":\"#/$defs/nonNegative"
      "IntegerDefault0\"},\"required\":{\"$ref\":\"#/$defs/stringArray\"},\"dependentRequired\":"
      "{\"type\":\"object\",\"additionalProperties\":{\"$ref\":\"#/$defs/stringArray\"}}},\"$defs\""
      ":{\"nonNegativeInteger\":{\"type\":\"integer\",\"minimum\":0},\"nonNegativeIntegerDefault"
      "0\":{\"$ref\":\"#/$defs/nonNegativeInteger\",\"default\":0},\"simpleTypes\":{\"enum\":[\"arr"
      "ay\",\"boolean\",\"integer\",\"null\",\"number\",\"object\",\"string\"]},\"stringArray\":{"
      "\"type"
      "\":\"array\",\"items\":{\"type\":\"string\"},\"uniqueItems\":true,\"default\":[]}}}" },
    { "http://json-schema.org/draft-07/schema",
      "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"$id\":\"http://json-schema.o"
      "rg/draft-07/schema#\",\"title\":\"Core schema meta-schema\",\"definitions\":{\"schemaArr"
      "ay\":{\"type\":\"array\",\"minItems\":1,\"items\":{\"$ref\":\"#\"}},\"nonNegativeInteger\":{"
      "\"ty"
      "pe\":\"integer\",\"minimum\":0},\"nonNegativeIntegerDefault0\":{\"allOf\":[{\"$ref\":\"#/def"
      "initions/nonNegativeInteger\"},{\"default\":0}]},\"simpleTypes\":{\"enum\":[\"array\",\"bo"
      "olean\",\"integer\",\"null\",\"number\",\"object\",\"string\"]},\"stringArray\":{\"type\":"
      "\"arra"
      "y\",\"items\":{\"type\":\"string\"},\"uniqueItems\":true,\"default\":[]}},\"type\":["
      "\"object\","
      "\"boolean\"],\"properties\":{\"$id\":{\"type\":\"string\",\"format\":\"uri-reference\"},\"$"
      "sche"
      "ma\":{\"type\":\"string\",\"format\":\"uri\"},\"$ref\":{\"type\":\"string\",\"format\":"
      "\"uri-refer"
      "ence\"},\"$comment\":{\"type\":\"string\"},\"title\":{\"type\":\"string\"},\"description\":{"
      "\"ty"
      "pe\":\"string\"},\"default\":true,\"readOnly\":{\"type\":\"boolean\",\"default\":false},"
      "\"exam"
      "ples\":{\"type\":\"array\",\"items\":true},\"multipleOf\":{\"type\":\"number\","
      "\"exclusiveMini"
      "mum\":0},\"maximum\":{\"type\":\"number\"},\"exclusiveMaximum\":{\"type\":\"number\"},"
      "\"minimu"
      "m\":{\"type\":\"number\"},\"exclusiveMinimum\":{\"type\":\"number\"},\"maxLength\":{\"$"
      "ref\":\"#"
      "/definitions/nonNegativeInteger\"},\"minLength\":{\"$ref\":\"#/definitions/nonNegative"
      "IntegerDefault0\"},\"pattern\":{\"type\":\"string\",\"format\":\"regex\"},"
      "\"additionalItems\""
      ":{\"$ref\":\"#\"},\"items\":{\"anyOf\":[{\"$ref\":\"#\"},{\"$ref\":\"#/definitions/"
      "schemaArray\""
      "}],\"default\":true},\"maxItems\":{\"$ref\":\"#/definitions/nonNegativeInteger\"},\"minIt"
      "ems\":{\"$ref\":\"#/definitions/nonNegativeIntegerDefault0\"},\"uniqueItems\":{\"type\":\""
      "boolean\",\"default\":false},\"contains\":{\"$ref\":\"#\"},\"maxProperties\":{\"$ref\":\"#/"
      "def"
      "initions/nonNegativeInteger\"},\"minProperties\":{\"$ref\":\"#/definitions/nonNegative"
      "IntegerDefault0\"},\"required\":{\"$ref\":\"#/definitions/stringArray\"},\"additionalPro"
      "perties\":{\"$ref\":\"#\"},\"definitions\":{\"type\":\"object\",\"additionalProperties\":{"
      "\"$r"
      "ef\":\"#\"},\"default\":{}},\"properties\":{\"type\":\"object\",\"additionalProperties\":{"
      "\"$r"
      "ef\":\"#\"},\"default\":{}},\"patternProperties\":{\"type\":\"object\",\"additionalPropertie"
      "s\":{\"$ref\":\"#\"},\"propertyNames\":{\"format\":\"regex\"},\"default\":{}},"
      "\"dependencies\":"
      "{\"type\":\"object\",\"additionalProperties\":{\"anyOf\":[{\"$ref\":\"#\"},{\"$ref\":\"#/"
      "defini"
      "tions/"
      "stringArray\"}]}},\"propertyNames\":{\"$ref\":\"#\"},\"const\":true,\"enum\":{\"type\":"
      "\"array\",\"items\":true},\"type\":{\"anyOf\":[{\"$ref\":\"#/definitions/"
      "simpleTypes\"},{\"ty"
      "pe\":\"array\",\"items\":{\"$ref\":\"#/definitions/simpleTypes\"},\"minItems\":1,\"uniqueIte"
      "ms\":true}]},\"format\":{\"type\":\"string\"},\"contentMediaType\":{\"type\":\"string\"},"
      "\"con"
      "tentEncoding\":{\"type\":\"string\"},\"if\":{\"$ref\":\"#\"},\"then\":{\"$ref\":\"#\"},"
      "\"else\":{\"$"
      "ref\":\"#\"},\"allOf\":{\"$ref\":\"#/definitions/schemaArray\"},\"anyOf\":{\"$ref\":\"#/"
      "defini"
      "tions/schemaArray\"},\"oneOf\":{\"$ref\":\"#/definitions/schemaArray\"},\"not\":{\"$ref\":\""
      "#\"}},\"default\":true}" },
};

const char *ar_metaschema_text(const char *uri)
{
    size_t n = strlen(uri);
    if (n && uri[n - 1] == '#')
        n--;
    for (size_t i = 0; i < sizeof(metaschemas) / sizeof(metaschemas[0]); i++)
        if (strlen(metaschemas[i].uri) == n && strncmp(metaschemas[i].uri, uri, n) == 0)
            return metaschemas[i].text;
    return NULL;
}
