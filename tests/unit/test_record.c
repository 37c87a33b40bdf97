/* Unit tests of src/record and its helpers: SHA-256, base64, redaction, cassettes, cache keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/proc.h"
#include "record/record.h"
#include "util/temp.h"
#include "util/base64.h"
#include "util/sha256.h"

static void test_sha256_matches_the_fips_vectors(void **state)
{
    char hex[AR_SHA256_HEX];
    ar_sha256_hex_of("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    ar_sha256_hex_of("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    ar_sha256_hex_of(two, strlen(two), hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* A million 'a', fed in uneven pieces across block boundaries. */
    struct ar_sha256 s;
    ar_sha256_init(&s);
    char a[1000];
    memset(a, 'a', sizeof(a));
    size_t left = 1000000;
    for (size_t k = 1; left; k = k % 997 + 1) {
        size_t n = k < left ? k : left;
        ar_sha256_update(&s, a, n);
        left -= n;
    }
    ar_sha256_hex(&s, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* RFC 4231 test cases 1, 2 and 6 (a key longer than a block is hashed first). */
static void test_hmac_sha256_matches_the_rfc_vectors(void **state)
{
    (void)state;
    char hex[AR_SHA256_HEX];
    struct ar_hmac_sha256 m;
    unsigned char k1[20];
    memset(k1, 0x0b, sizeof(k1));
    ar_hmac_sha256_init(&m, k1, sizeof(k1));
    ar_hmac_sha256_update(&m, "Hi There", 8);
    ar_hmac_sha256_hex(&m, hex);
    assert_string_equal(hex, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    ar_hmac_sha256_init(&m, "Jefe", 4);
    ar_hmac_sha256_update(&m, "what do ya want ", 16);
    ar_hmac_sha256_update(&m, "for nothing?", 12);
    ar_hmac_sha256_hex(&m, hex);
    assert_string_equal(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    unsigned char k6[131];
    memset(k6, 0xaa, sizeof(k6));
    const char *msg = "Test Using Larger Than Block-Size Key - Hash Key First";
    ar_hmac_sha256_init(&m, k6, sizeof(k6));
    ar_hmac_sha256_update(&m, msg, strlen(msg));
    ar_hmac_sha256_hex(&m, hex);
    assert_string_equal(hex, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

static void test_base64_round_trips_and_refuses_garbage(void **state)
{
    const char *cases[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
    const char *want[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy" };
    for (size_t i = 0; i < 7; i++) {
        size_t n;
        char *e = ar_base64_encode(cases[i], strlen(cases[i]), &n);
        assert_string_equal(e, want[i]);
        char *d = ar_base64_decode(e, n, &n);
        assert_non_null(d);
        assert_int_equal(n, strlen(cases[i]));
        assert_memory_equal(d, cases[i], n);
        free(e);
        free(d);
    }
    size_t n;
    assert_null(ar_base64_decode("Zm9", 3, &n));
    assert_null(ar_base64_decode("Zm9*", 4, &n));
    assert_null(ar_base64_decode("Zg==Zg==", 8, &n));
    char bin[3] = { 0, (char)0xff, '\n' };
    char *e = ar_base64_encode(bin, 3, &n);
    char *d = ar_base64_decode(e, n, &n);
    assert_int_equal(n, 3);
    assert_memory_equal(d, bin, 3);
    free(e);
    free(d);
}

static char *redacted(const struct ar_redactor *r, const char *s)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_redact(r, s, strlen(s), &b), 0);
    char *out = ar_buf_detach(&b, NULL);
    ar_buf_finish(&b);
    return out;
}

static void test_redaction_of_env_values_and_token_shapes(void **state)
{
    setenv("AR_TEST_API_KEY", "hunter2-value", 1);
    setenv("AR_TEST_PLAIN", "not-a-secret-value", 1);
    setenv("AR_TEST_TOKEN", "abc", 1); /* too short to redact */
    const char *extra[] = { "CHILD_SECRET=child-only-secret", "CHILD_NAME=visible-name", NULL };
    struct ar_redactor r;
    assert_int_equal(ar_redactor_init(&r, extra), 0);
    char *s = redacted(&r, "key hunter2-value, child-only-secret and not-a-secret-value, abc");
    assert_string_equal(s, "key [REDACTED], [REDACTED] and not-a-secret-value, abc");
    free(s);
    s = redacted(&r, "{\"k\":\"sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv\",\"x\":\"task-runner-sk-1\"}");
    assert_string_equal(s, "{\"k\":\"[REDACTED]\",\"x\":\"task-runner-sk-1\"}");
    free(s);
    s = redacted(&r, "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc and Bearer of news");
    assert_string_equal(s, "Authorization: Bearer [REDACTED] and Bearer of news");
    free(s);
    s = redacted(&r, "AIzaSyA-1234567890abcdefghijklmnopqrstu ghp_0123456789abcdefghijABCD");
    assert_string_equal(s, "[REDACTED] [REDACTED]");
    free(s);
    assert_true(ar_redact_secret_name("GEMINI_API_KEY", 14));
    assert_true(ar_redact_secret_name("github_token", 12));
    assert_false(ar_redact_secret_name("PATH", 4));
    ar_redactor_finish(&r);
    unsetenv("AR_TEST_API_KEY");
    unsetenv("AR_TEST_PLAIN");
    unsetenv("AR_TEST_TOKEN");
}

static char *redacted_stdout(const struct ar_redactor *r, const char *s)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    assert_int_equal(ar_redact_stdout(r, s, strlen(s), &b), 0);
    char *out = ar_buf_detach(&b, NULL);
    ar_buf_finish(&b);
    return out;
}

/* The "content" strings of gemini delta lines, joined as its unwrapper joins them. */
static char *joined_content(const char *lines)
{
    struct ar_buf b;
    ar_buf_init(&b, AR_BUF_UNLIMITED);
    for (const char *p = lines; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        json_error_t je;
        json_t *o = json_loadb(p, n, 0, &je);
        assert_non_null(o); /* every line is still JSON */
        const char *c = json_string_value(json_object_get(o, "content"));
        if (c)
            ar_buf_puts(&b, c);
        json_decref(o);
        p = nl ? nl + 1 : p + n;
    }
    char *out = ar_buf_detach(&b, NULL);
    ar_buf_finish(&b);
    return out;
}

static void test_redaction_joins_a_streamed_answer_before_looking(void **state)
{
    (void)state;
    struct ar_redactor r;
    assert_int_equal(ar_redactor_init(&r, (const char *[]){ "X_TOKEN=tok-3141-5926", NULL }), 0);
    /* A GitHub token and an env value, each split across gemini's deltas. */
    const char *in =
        "{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"use "
        "ghp_0123456\",\"delta\":true}\n"
        "{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"789abcdefghijABCD now\","
        "\"delta\":true}\n"
        "{\"type\":\"message\",\"role\":\"assistant\",\"content\":\" and tok-31\",\"delta\":true}\n"
        "{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"41-59\",\"delta\":true}\n"
        "{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"26!\",\"delta\":true}\n"
        "{\"type\":\"result\",\"status\":\"success\",\"stats\":{\"input_tokens\":7}}\n";
    char *out = redacted_stdout(&r, in);
    char *text = joined_content(out);
    assert_string_equal(text, "use [REDACTED] now and [REDACTED]!");
    assert_null(strstr(out, "ghp_0123456"));
    assert_null(strstr(out, "789abcdefghij"));
    assert_null(strstr(out, "tok-31"));
    /* What held no secret is byte for byte the same. */
    assert_non_null(strstr(
        out, "{\"type\":\"result\",\"status\":\"success\",\"stats\":{\"input_tokens\":7}}\n"));
    free(text);
    free(out);
    ar_redactor_finish(&r);
}

static void test_redaction_finds_escaped_and_encoded_forms(void **state)
{
    (void)state;
    struct ar_redactor r;
    const char *extra[] = { "DB_PASSWORD=pa\"ss\\word/1", NULL };
    assert_int_equal(ar_redactor_init(&r, extra), 0);
    /* In a CLI's JSON output the value is escaped; in a URL it is percent-encoded. */
    char *s = redacted(&r, "{\"error\":\"bad password pa\\\"ss\\\\word/1\"}");
    assert_string_equal(s, "{\"error\":\"bad password [REDACTED]\"}");
    free(s);
    s = redacted(&r, "GET https://db.example/?p=pa%22ss%5Cword%2F1 401");
    assert_string_equal(s, "GET https://db.example/?p=[REDACTED] 401");
    free(s);
    /* A stored stdout line: decoded, cut, encoded again, still JSON. */
    s = redacted_stdout(&r, "{\"type\":\"result\",\"result\":\"it is pa\\\"ss\\\\word/1, ok\"}\n");
    assert_string_equal(s, "{\"type\":\"result\",\"result\":\"it is [REDACTED], ok\"}\n");
    free(s);
    /* \u escapes decode too. */
    s = redacted_stdout(&r, "{\"r\":\"pa\\u0022ss\\u005cword\\/1\"}\n");
    assert_string_equal(s, "{\"r\":\"[REDACTED]\"}\n");
    free(s);
    ar_redactor_finish(&r);
}

static void test_redaction_minimum_length_and_longest_first(void **state)
{
    (void)state;
    struct ar_redactor r;
    /* AR_REDACT_MIN_LEN is 6: a 5-byte value stays, a 6-byte one goes. */
    const char *extra[] = { "A_TOKEN=five5", "B_TOKEN=six666", "C_KEY=abcdefgh", "D_KEY=abcdef",
                            NULL };
    assert_int_equal(AR_REDACT_MIN_LEN, 6);
    assert_int_equal(ar_redactor_init(&r, extra), 0);
    char *s = redacted(&r, "five5 six666 abcdefgh abcdef");
    /* The longer value is cut whole, not as "abcdef" + "gh". */
    assert_string_equal(s, "five5 [REDACTED] [REDACTED] [REDACTED]");
    free(s);
    /* A secret that ends the text goes too. */
    s = redacted(&r, "six666");
    assert_string_equal(s, "[REDACTED]");
    free(s);
    ar_redactor_finish(&r);
    /* The longest first whatever the environment's order: here the prefix comes first. */
    const char *prefix_first[] = { "D_KEY=abcdef", "C_KEY=abcdefgh", NULL };
    assert_int_equal(ar_redactor_init(&r, prefix_first), 0);
    s = redacted(&r, "abcdefgh abcdef");
    assert_string_equal(s, "[REDACTED] [REDACTED]");
    free(s);
    ar_redactor_finish(&r);
}

static void test_redaction_of_text_lines_and_broken_json(void **state)
{
    (void)state;
    struct ar_redactor r;
    assert_int_equal(ar_redactor_init(&r, (const char *[]){ "K_TOKEN=zz-secret-zz", NULL }), 0);
    char *s = redacted_stdout(&r, "plain zz-secret-zz text\n{\"broken\": \"zz-secret-zz\n"
                                  "{\"n\": 1, \"deep\": [[[\"zz-sec\", \"ret-zz\"]]]}\n");
    assert_null(strstr(s, "zz-secret-zz"));
    assert_null(strstr(s, "zz-sec\", \"ret-zz"));
    assert_string_equal(s, "plain [REDACTED] text\n{\"broken\": \"[REDACTED]\n"
                           "{\"n\": 1, \"deep\": [[[\"[REDACTED]\", \"\"]]]}\n");
    free(s);
    ar_redactor_finish(&r);
}

static void request(struct ar_cassette *c, const char *prompt, const char *tmp, const char *model)
{
    struct ar_call_setup setup;
    ar_call_setup_init(&setup);
    ar_strv_push(&setup.argv, "/usr/bin/codex");
    ar_strv_push(&setup.argv, "exec");
    ar_strv_push(&setup.argv, "--output-schema");
    ar_strv_push(&setup.argv, tmp);
    ar_strv_push(&setup.tmpfiles, tmp);
    /* Inside an argument too (codex's -c model_instructions_file="…"), and the machine's
     * paths the adapter names (its absolute cwd in -c projects={…}). */
    ar_strv_pushf(&setup.argv, "model_instructions_file=\"%s\"", tmp);
    ar_strv_pushf(&setup.argv, "projects={\"%s/x\"={trust_level=\"untrusted\"},\"%s\"={}}", tmp,
                  tmp);
    ar_strv_push(&setup.local_paths, tmp);
    struct ar_redactor r;
    ar_redactor_init(&r, NULL);
    ar_cassette_init(c);
    assert_int_equal(ar_cassette_set_request(c, "codex", &setup, prompt, strlen(prompt),
                                             "{\"type\":\"object\"}", model, &r),
                     0);
    ar_redactor_finish(&r);
    /* Not a real file: nothing to unlink. */
    ar_strv_finish(&setup.tmpfiles);
    ar_strv_init(&setup.tmpfiles);
    ar_call_setup_finish(&setup);
}

static void test_cassette_key_ignores_temp_names_and_binary_but_not_the_prompt(void **state)
{
    struct ar_cassette a, b, c;
    request(&a, "review this", "/tmp/agentrun-schema-AAAAAA", NULL);
    request(&b, "review this", "/tmp/agentrun-schema-BBBBBB", NULL);
    request(&c, "review this!", "/tmp/agentrun-schema-AAAAAA", NULL);
    assert_string_equal(a.argv.v[2], "@tmpfile");
    assert_string_equal(a.argv.v[3], "model_instructions_file=\"@tmpfile\"");
    /* The longest match wins; a temporary file name and a local path alike. */
    assert_string_equal(a.argv.v[4], "projects={\"@tmpfile/x\"={trust_level=\"untrusted\"},"
                                     "\"@tmpfile\"={}}");
    char ka[AR_SHA256_HEX], kb[AR_SHA256_HEX], kc[AR_SHA256_HEX];
    ar_cassette_key(&a, ka);
    ar_cassette_key(&b, kb);
    ar_cassette_key(&c, kc);
    assert_string_equal(ka, kb);
    assert_string_not_equal(ka, kc);
    /* The cache key adds the model and the CLI's identity. */
    char ca[AR_SHA256_HEX], cm[AR_SHA256_HEX], cs[AR_SHA256_HEX];
    ar_cache_key(&a, "codex", ca);
    struct ar_cassette m;
    request(&m, "review this", "/tmp/x", "gpt-5.5");
    ar_cache_key(&m, "codex", cm);
    assert_string_not_equal(ca, cm);
    a.cli.size = 12345;
    ar_cache_key(&a, "codex", cs);
    assert_string_not_equal(ca, cs);
    ar_cassette_finish(&a);
    ar_cassette_finish(&b);
    ar_cassette_finish(&c);
    ar_cassette_finish(&m);
}

static void test_cassette_json_round_trip_keeps_bytes(void **state)
{
    struct ar_cassette a, b;
    request(&a, "prompt", "/tmp/t", NULL);
    ar_buf_append(&a.out, "{\"type\":\"x\"}\n\xff\x00 binary\n", 24);
    ar_buf_puts(&a.err, "warning: something\n");
    a.exit_code = 137;
    a.term_signal = 9;
    a.end = AR_CHILD_TIMEOUT;
    a.duration_ms = 4321;
    json_t *v = ar_cassette_to_json(&a);
    assert_non_null(json_object_get(v, "stdout_base64"));
    assert_non_null(json_object_get(v, "stderr"));
    ar_cassette_init(&b);
    struct ar_error err = AR_ERROR_INIT;
    assert_int_equal(ar_cassette_from_json(v, &b, &err), 0);
    assert_int_equal(b.out.len, 24);
    assert_memory_equal(b.out.data, a.out.data, 24);
    assert_string_equal(ar_buf_cstr(&b.err), "warning: something\n");
    assert_int_equal(b.exit_code, 137);
    assert_int_equal(b.term_signal, 9);
    assert_int_equal(b.end, AR_CHILD_TIMEOUT);
    assert_int_equal(b.duration_ms, 4321);
    char ka[AR_SHA256_HEX], kb[AR_SHA256_HEX];
    ar_cassette_key(&a, ka);
    ar_cassette_key(&b, kb);
    assert_string_equal(ka, kb);
    json_decref(v);
    ar_cassette_finish(&b);
    /* Not a cassette: a clear error, never a crash. */
    v = json_loads("{\"schema\":\"agentrun.cassette/1\",\"provider\":\"codex\",\"argv\":[1]}", 0,
                   NULL);
    ar_cassette_init(&b);
    assert_int_equal(ar_cassette_from_json(v, &b, &err), AR_EIO);
    assert_non_null(strstr(err.msg, "argv"));
    json_decref(v);
    ar_cassette_finish(&b);
    ar_cassette_finish(&a);
}

static void test_cache_call_cacheable_only_for_text_calls_that_do_not_edit(void **state)
{
    struct ar_call_spec s = { 0 };
    assert_false(ar_cache_call_cacheable(&s));
    s.tools = AR_TOOLS_NONE;
    assert_true(ar_cache_call_cacheable(&s));
    s.tools = AR_TOOLS_READ;
    assert_false(ar_cache_call_cacheable(&s));
    s.tools = AR_TOOLS_EDIT;
    assert_false(ar_cache_call_cacheable(&s));
    s.tools = AR_TOOLS_NONE;
    s.trust_project = 1;
    assert_false(ar_cache_call_cacheable(&s));
    s.trust_project = 0;
    s.resume = "session";
    assert_false(ar_cache_call_cacheable(&s));
}

/* A request whose argv is "codex" followed by the pieces. */
static void request_argv(struct ar_cassette *c, const char *const *pieces, size_t n)
{
    struct ar_call_setup setup;
    ar_call_setup_init(&setup);
    ar_strv_push(&setup.argv, "codex");
    for (size_t i = 0; i < n; i++)
        ar_strv_push(&setup.argv, pieces[i]);
    struct ar_redactor r;
    ar_redactor_init(&r, NULL);
    ar_cassette_init(c);
    assert_int_equal(ar_cassette_set_request(c, "codex", &setup, "p", 1, NULL, NULL, &r), 0);
    ar_redactor_finish(&r);
    ar_call_setup_finish(&setup);
}

/*
 * Cache and cassette keys are injective over argv: every way of cutting "abcd" into one to
 * four arguments (empty ones too: 56 argv) has a key of its own, so two argv that differ only
 * in where one string ends never share an answer. And an entry stored for ["ab","c"] does not
 * answer ["a","bc"].
 */
static void test_keys_tell_apart_every_cut_of_the_same_bytes(void **state)
{
    (void)state;
    static const char word[] = "abcd";
    char keys[64][AR_SHA256_HEX], ckeys[64][AR_SHA256_HEX], names[64][16];
    size_t n = 0;
    for (size_t parts = 1; parts <= 4; parts++) {
        /* cuts[0] <= cuts[1] <= … : where each of the first parts-1 pieces ends */
        size_t cuts[3] = { 0, 0, 0 };
        for (;;) {
            char buf[4][5];
            const char *pieces[4];
            size_t at = 0;
            for (size_t i = 0; i < parts; i++) {
                size_t end = i + 1 < parts ? cuts[i] : 4;
                snprintf(buf[i], sizeof(buf[i]), "%.*s", (int)(end - at), word + at);
                pieces[i] = buf[i];
                at = end;
            }
            struct ar_cassette c;
            request_argv(&c, pieces, parts);
            assert_true(n < 64);
            ar_cache_key(&c, "codex", keys[n]);
            ar_cassette_key(&c, ckeys[n]);
            snprintf(names[n], sizeof(names[n]), "%zu:%zu%zu%zu", parts, cuts[0], cuts[1], cuts[2]);
            n++;
            ar_cassette_finish(&c);
            /* the next non-decreasing cut sequence of parts-1 cuts in 0..4 */
            size_t k = parts - 1;
            while (k > 0 && cuts[k - 1] == 4)
                k--;
            if (k == 0)
                break;
            cuts[k - 1]++;
            for (size_t j = k; j + 1 < parts; j++)
                cuts[j] = cuts[k - 1];
        }
    }
    assert_int_equal(n, 56);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++) {
            if (strcmp(keys[i], keys[j]) == 0)
                fail_msg("argv %s and %s share a cache key", names[i], names[j]);
            if (strcmp(ckeys[i], ckeys[j]) == 0)
                fail_msg("argv %s and %s share a cassette key", names[i], names[j]);
        }

    /* What a user meets: the answer stored for one argv is no answer for the other. */
    char dir[] = "/tmp/agentrun-test-cache-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct ar_cassette ab_c, a_bc, hit;
    request_argv(&ab_c, (const char *const[]){ "ab", "c" }, 2);
    request_argv(&a_bc, (const char *const[]){ "a", "bc" }, 2);
    ar_buf_puts(&ab_c.out, "the answer to ab c\n");
    char k1[AR_SHA256_HEX], k2[AR_SHA256_HEX];
    ar_cache_key(&ab_c, "codex", k1);
    ar_cache_key(&a_bc, "codex", k2);
    unsigned char secret[AR_CACHE_SECRET_LEN];
    memset(secret, 0x5a, sizeof(secret));
    assert_int_equal(ar_cache_put(dir, secret, k1, &ab_c, NULL), 0);
    ar_cassette_init(&hit);
    assert_int_equal(ar_cache_get(dir, secret, k1, "codex", 0, &hit), 1);
    assert_int_equal(ar_cache_get(dir, secret, k2, "codex", 0, &hit), 0);
    ar_cassette_finish(&hit);
    ar_cassette_finish(&ab_c);
    ar_cassette_finish(&a_bc);
    ar_remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_matches_the_fips_vectors),
        cmocka_unit_test(test_hmac_sha256_matches_the_rfc_vectors),
        cmocka_unit_test(test_base64_round_trips_and_refuses_garbage),
        cmocka_unit_test(test_redaction_of_env_values_and_token_shapes),
        cmocka_unit_test(test_redaction_joins_a_streamed_answer_before_looking),
        cmocka_unit_test(test_redaction_finds_escaped_and_encoded_forms),
        cmocka_unit_test(test_redaction_minimum_length_and_longest_first),
        cmocka_unit_test(test_redaction_of_text_lines_and_broken_json),
        cmocka_unit_test(test_cassette_key_ignores_temp_names_and_binary_but_not_the_prompt),
        cmocka_unit_test(test_keys_tell_apart_every_cut_of_the_same_bytes),
        cmocka_unit_test(test_cassette_json_round_trip_keeps_bytes),
        cmocka_unit_test(test_cache_call_cacheable_only_for_text_calls_that_do_not_edit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
