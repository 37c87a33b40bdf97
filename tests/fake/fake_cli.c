/*
 * fake_cli: a stand-in for claude, codex and gemini in tests. Copied or
 * linked under any name (build/tests/fake/bin/{claude,codex,gemini}) or run
 * directly, it does what its environment says. tests/fake/README.md is the
 * full reference; in short, in the order things happen:
 *
 *   FAKE_CLI_LOGIN=yes|no      how the status commands answer (`claude auth status`,
 *                              `codex login status`, default yes): such a call does nothing
 *                              else, and is neither counted nor logged
 *   FAKE_CLI_VERSION=s         what `--version` prints (default: a version of the CLI named
 *                              like argv[0] that agentrun starts); likewise neither counted
 *                              nor logged
 *   (claude with --input-format stream-json reads its prompt as claude does: the text of
 *   the stream-json user message on stdin, which is what the log's stdin then holds)
 *   FAKE_CLI_STATE=path        counter file: call N of a run (0, 1, 2 …) picks item N of
 *                              every per-call list below (the last item repeats)
 *   FAKE_CLI_READ_STDIN=0|1    read stdin to EOF first (default 1)
 *   FAKE_CLI_LOG=path          append one JSON object per call: call, argv0, argv, cwd, pid,
 *                              pgid, env (FAKE_CLI_LOG_ENV=NAME,NAME), stdin, stdin_bytes,
 *                              stdin_fnv1a, stdin_truncated (stdin text kept up to
 *                              FAKE_CLI_LOG_STDIN_MAX bytes, default 1 MiB)
 *   FAKE_CLI_IGNORE_TERM=1     ignore SIGTERM
 *   FAKE_CLI_GRANDCHILD=keep-pipes|ignore-term   fork FAKE_CLI_GRANDCHILDREN (default 1)
 *                              children that sleep holding stdout/stderr (ignore-term: and
 *                              ignore SIGTERM); their pids are appended to FAKE_CLI_PIDFILE;
 *                              setsid|daemon[+ignore-term]: ones that leave the group, in a
 *                              session of their own (daemon: orphaned at once, too);
 *                              pgrp[+ignore-term]: in the call's session, in a group whose
 *                              leader exited at once
 *   FAKE_CLI_GRANDCHILD_THREAD=1  fork them from a second thread, which lives on (node's
 *                              worker threads): the kernel lists them under that thread
 *   FAKE_CLI_WRITE_FILES="a.txt=text;dir/b=text"  write files (relative to the cwd)
 *   FAKE_CLI_WRITE_FROM_STDIN=1  write the files the prompt names: each of its lines
 *                              "WRITE a.txt=text" as FAKE_CLI_WRITE_FILES would
 *   FAKE_CLI_STDERR_FIXTURE=path, FAKE_CLI_STDERR_TEXT=s   copied to stderr
 *   FAKE_CLI_FIXTURE=path      replayed to stdout; FAKE_CLI_DELAY_MS=n sleeps n ms between
 *                              the lines of either fixture
 *   FAKE_CLI_STDOUT_TEXT=s     written to stdout as is (\n, \t, \\ understood)
 *   FAKE_CLI_FLOOD_STDOUT=n, FAKE_CLI_FLOOD_STDERR=n   n bytes of 100-byte numbered lines,
 *                              both streams interleaved in 64 KiB turns
 *   FAKE_CLI_LONG_LINE=n       one line of n bytes (a..z repeated) and '\n'
 *   FAKE_CLI_CLOSE_STDOUT=1    close stdout and stderr, then go on
 *   FAKE_CLI_SLEEP_MS=n        sleep before ending
 *   FAKE_CLI_HANG=1            sleep forever
 *   FAKE_CLI_WAIT_FOR=path     (before the files are written) wait until path exists
 *   FAKE_CLI_SIGNAL=n          die by signal n
 *   FAKE_CLI_EXIT=n            exit status (default 0)
 *
 * Every variable may also be given for one call only as FAKE_CLI_<NAME>_<N>
 * (FAKE_CLI_EXIT_1=3), which wins over the list. Lists are comma separated
 * (FAKE_CLI_FIXTURE=main.jsonl,repair.jsonl), except FAKE_CLI_WRITE_FILES,
 * FAKE_CLI_STDOUT_TEXT and FAKE_CLI_STDERR_TEXT, which apply whole.
 *
 * It links nothing but libc (threads included) and does nothing it was not asked to, so the
 * benchmark can spawn it a thousand times.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned long call_no;

static void die(const char *what)
{
    fprintf(stderr, "fake_cli: %s: %s\n", what, strerror(errno));
    exit(99);
}

static void write_all(int fd, const void *p, size_t n)
{
    const char *s = p;
    while (n) {
        ssize_t k = write(fd, s, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return; /* a closed pipe: the test decides what that means */
        }
        s += k;
        n -= (size_t)k;
    }
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/*
 * The value of FAKE_CLI_<name> for this call, in a static buffer: the
 * per-call variable, else item call_no of the comma list (the last item
 * repeats), else NULL. An empty value is NULL.
 */
static const char *opt(const char *name, int is_list)
{
    static char buf[4096];
    char var[128];
    snprintf(var, sizeof(var), "FAKE_CLI_%s_%lu", name, call_no);
    const char *v = getenv(var);
    if (!v) {
        snprintf(var, sizeof(var), "FAKE_CLI_%s", name);
        v = getenv(var);
    }
    if (!v || !*v)
        return NULL;
    if (!is_list)
        return v;
    const char *p = v;
    for (unsigned long i = 0; i < call_no; i++) {
        const char *comma = strchr(p, ',');
        if (!comma)
            break;
        p = comma + 1;
    }
    size_t n = strcspn(p, ",");
    if (n == 0)
        return NULL;
    if (n >= sizeof(buf))
        n = sizeof(buf) - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

static long opt_long(const char *name, long dflt)
{
    const char *v = opt(name, 1);
    return v ? strtol(v, NULL, 0) : dflt;
}

/* Reads and bumps the counter in FAKE_CLI_STATE under a lock: concurrent calls get distinct N. */
static unsigned long next_call(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        die(path);
    flock(fd, LOCK_EX);
    char buf[32] = { 0 };
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    unsigned long k = n > 0 ? strtoul(buf, NULL, 10) : 0;
    int len = snprintf(buf, sizeof(buf), "%lu\n", k + 1);
    if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)len, 0) != len)
        die(path);
    close(fd);
    return k;
}

struct bytes {
    char *p;
    size_t len, cap;
};

static void bytes_add(struct bytes *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        if (!(b->p = realloc(b->p, cap)))
            die("realloc");
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void bytes_str(struct bytes *b, const char *s)
{
    bytes_add(b, s, strlen(s));
}

/* Length of a valid UTF-8 sequence at p (n bytes left), or 0. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
    size_t k = p[0] >= 0xF0 && p[0] <= 0xF4 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
    if (k == 0 || k > n || p[0] >= 0xF5)
        return 0;
    for (size_t i = 1; i < k; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    return k;
}

/* A JSON string; bytes that are not UTF-8 become \u00XX so the log always parses. */
static void json_str(struct bytes *b, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    bytes_add(b, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned char ch = p[i];
        char esc[8];
        if (ch == '"' || ch == '\\') {
            esc[0] = '\\';
            esc[1] = (char)ch;
            bytes_add(b, esc, 2);
        } else if (ch == '\n') {
            bytes_str(b, "\\n");
        } else if (ch < 0x20 || ch == 0x7F) {
            snprintf(esc, sizeof(esc), "\\u%04x", ch);
            bytes_str(b, esc);
        } else if (ch >= 0x80) {
            size_t k = utf8_len(p + i, n - i);
            if (k) {
                bytes_add(b, p + i, k);
                i += k;
                continue;
            }
            snprintf(esc, sizeof(esc), "\\u%04x", ch);
            bytes_str(b, esc);
        } else {
            bytes_add(b, &ch, 1);
        }
        i++;
    }
    bytes_add(b, "\"", 1);
}

static uint64_t fnv1a(const char *p, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ull;
    }
    return h;
}

static void read_stdin(struct bytes *in)
{
    char buf[65536];
    for (;;) {
        ssize_t n = read(0, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        bytes_add(in, buf, (size_t)n);
    }
}

/* Decodes the JSON string at *pp (just past its opening quote) into out; advances *pp past
 * the closing quote. Returns 0, or -1 when it is not a well-formed JSON string. */
static int json_unstr(const char **pp, const char *end, struct bytes *out)
{
    const char *p = *pp;
    while (p < end && *p != '"') {
        unsigned char ch = (unsigned char)*p;
        if (ch < 0x20)
            return -1; /* a raw control character: claude's JSON.parse refuses it too */
        if (ch != '\\') {
            bytes_add(out, p++, 1);
            continue;
        }
        if (++p >= end)
            return -1;
        char c = *p++;
        const char *simple = strchr("\"\\/bfnrt", c);
        if (c && simple) {
            static const char to[] = "\"\\/\b\f\n\r\t";
            bytes_add(out, &to[simple - "\"\\/bfnrt"], 1);
            continue;
        }
        if (c != 'u' || end - p < 4)
            return -1;
        char hex[5] = { p[0], p[1], p[2], p[3], 0 }, *stop;
        unsigned long u = strtoul(hex, &stop, 16);
        if (*stop)
            return -1;
        p += 4;
        if (u >= 0xD800 && u < 0xDC00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
            char lo[5] = { p[2], p[3], p[4], p[5], 0 };
            unsigned long l = strtoul(lo, &stop, 16);
            if (!*stop && l >= 0xDC00 && l < 0xE000) {
                u = 0x10000 + ((u - 0xD800) << 10) + (l - 0xDC00);
                p += 6;
            }
        }
        unsigned char enc[4];
        size_t k = u < 0x80 ? 1 : u < 0x800 ? 2 : u < 0x10000 ? 3 : 4;
        if (k == 1)
            enc[0] = (unsigned char)u;
        else if (k == 2)
            enc[0] = (unsigned char)(0xC0 | (u >> 6)), enc[1] = (unsigned char)(0x80 | (u & 0x3F));
        else if (k == 3)
            enc[0] = (unsigned char)(0xE0 | (u >> 12)),
            enc[1] = (unsigned char)(0x80 | ((u >> 6) & 0x3F)),
            enc[2] = (unsigned char)(0x80 | (u & 0x3F));
        else
            enc[0] = (unsigned char)(0xF0 | (u >> 18)),
            enc[1] = (unsigned char)(0x80 | ((u >> 12) & 0x3F)),
            enc[2] = (unsigned char)(0x80 | ((u >> 6) & 0x3F)),
            enc[3] = (unsigned char)(0x80 | (u & 0x3F));
        bytes_add(out, enc, k);
    }
    if (p >= end)
        return -1;
    *pp = p + 1;
    return 0;
}

/*
 * claude's stream-json input: one user message a line,
 * {"type":"user","message":{"role":"user","content":"TEXT"},…}. The prompt claude reads is
 * the TEXT of each; *composed says whether every message had "client_composed":true. Returns
 * 0 with *prompt filled, or -1 when stdin is not such a stream.
 */
/* GCC 12 under -fsanitize=address,undefined at -O2 sees a NULL line that cannot be (base is
 * checked) and fails the sanitizer build with -Wnonnull: off for this function only. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnonnull"
static int stream_json_prompt(const struct bytes *wire, struct bytes *prompt, int *composed)
{
    static const char key[] = "\"content\":\"";
    *composed = 1;
    /* Read once: prompt grows as the loop goes (the compiler cannot tell it is not wire). */
    const char *base = wire->p;
    size_t total = wire->len;
    if (!base)
        return -1;
    int messages = 0;
    for (size_t off = 0; off < total;) {
        const char *line = base + off, *nl = memchr(line, '\n', total - off);
        size_t n = nl ? (size_t)(nl - line) : total - off;
        off += n + 1;
        if (!n)
            continue;
        const char *end = line + n, *c = memmem(line, n, key, sizeof(key) - 1);
        if (!memmem(line, n, "\"type\":\"user\"", 13) || !c)
            return -1;
        c += sizeof(key) - 1;
        if (messages++)
            bytes_add(prompt, "\n", 1);
        if (json_unstr(&c, end, prompt) < 0)
            return -1;
        if (!memmem(line, n, "\"client_composed\":true", 22))
            *composed = 0;
    }
    return messages ? 0 : -1;
}
#pragma GCC diagnostic pop

static void log_call(const char *path, int argc, char **argv, const struct bytes *in,
                     const char *format, int composed, size_t wire_bytes)
{
    struct bytes b = { 0 };
    char num[64], cwd[PATH_MAX];
    snprintf(num, sizeof(num), "{\"call\":%lu,\"argv0\":", call_no);
    bytes_str(&b, num);
    const char *base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    json_str(&b, base, strlen(base));
    bytes_str(&b, ",\"argv\":[");
    for (int i = 0; i < argc; i++) {
        if (i)
            bytes_str(&b, ",");
        json_str(&b, argv[i], strlen(argv[i]));
    }
    bytes_str(&b, "],\"cwd\":");
    if (!getcwd(cwd, sizeof(cwd)))
        strcpy(cwd, "?");
    json_str(&b, cwd, strlen(cwd));
    snprintf(num, sizeof(num), ",\"pid\":%ld,\"pgid\":%ld,\"env\":{", (long)getpid(),
             (long)getpgrp());
    bytes_str(&b, num);
    const char *names = getenv("FAKE_CLI_LOG_ENV");
    int first = 1;
    while (names && *names) {
        size_t n = strcspn(names, ",");
        char name[256];
        if (n && n < sizeof(name)) {
            memcpy(name, names, n);
            name[n] = '\0';
            const char *v = getenv(name);
            bytes_str(&b, first ? "" : ",");
            first = 0;
            json_str(&b, name, n);
            bytes_str(&b, ":");
            if (v)
                json_str(&b, v, strlen(v));
            else
                bytes_str(&b, "null");
        }
        names += n + (names[n] == ',');
    }
    long max = opt_long("LOG_STDIN_MAX", 1 << 20);
    size_t keep = in->len < (size_t)max ? in->len : (size_t)max;
    bytes_str(&b, "},\"stdin\":");
    json_str(&b, in->p ? in->p : "", keep);
    snprintf(num, sizeof(num), ",\"stdin_bytes\":%zu,\"stdin_fnv1a\":\"%016llx\"", in->len,
             (unsigned long long)fnv1a(in->p ? in->p : "", in->len));
    bytes_str(&b, num);
    if (format) {
        snprintf(num, sizeof(num), ",\"stdin_format\":\"%s\",\"client_composed\":%s", format,
                 composed ? "true" : "false");
        bytes_str(&b, num);
        snprintf(num, sizeof(num), ",\"stdin_wire_bytes\":%zu", wire_bytes);
        bytes_str(&b, num);
    }
    bytes_str(&b,
              keep < in->len ? ",\"stdin_truncated\":true}\n" : ",\"stdin_truncated\":false}\n");
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        die(path);
    /* One locked write per record, so concurrent calls never interleave. */
    flock(fd, LOCK_EX);
    write_all(fd, b.p, b.len);
    close(fd);
    free(b.p);
}

/* A grandchild's life: close what was asked, then sleep until a signal ends it. */
static void linger(int escaped)
{
    if (escaped) {
        /* A daemon's manners: nothing of the call held open, so only a kill ends it. */
        int null = open("/dev/null", O_RDWR);
        for (int fd = 0; fd < 3 && null >= 0; fd++)
            dup2(null, fd);
    }
    for (;;)
        pause();
}

/*
 * Forks one grandchild as mode says and returns its pid once it is where it was
 * going (after its setsid()), so a test cannot kill it before it escaped:
 *   stay      in the group, holding stdout and stderr
 *   setsid    a session of its own (codex's shell snapshot), its parent the leader
 *   daemon    a session of its own under a middle child that exits at once, so
 *             its parent is init, or the nearest subreaper
 *   pgrp      the call's session, in a process group the middle child made and
 *             led, and left at once: the group has no leader, its id no process
 *             (a shell's job whose first command ended), its parent is as daemon's
 */
static pid_t grandchild(const char *how)
{
    int p[2];
    if (pipe(p) != 0)
        die("pipe");
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        close(p[0]);
        int daemon = strcmp(how, "daemon") == 0, pgrp = strcmp(how, "pgrp") == 0;
        if (pgrp)
            setpgid(0, 0);
        if ((daemon || pgrp) && fork() != 0)
            _exit(0); /* the middle child (or a failed fork: the read below sees EOF) */
        if (strcmp(how, "stay") != 0 && !pgrp) {
            setsid();
#ifdef PR_SET_NAME
            /* A name that reads as a dead orphan to a parser that takes the first ')':
             * /proc/PID/stat is "PID (x) Z 1 1 1 0) S PPID …". */
            prctl(PR_SET_NAME, "x) Z 1 1 1 0");
#endif
        }
        pid_t me = getpid();
        write_all(p[1], &me, sizeof(me));
        close(p[1]);
        linger(strcmp(how, "stay") != 0);
    }
    close(p[1]);
    pid_t got = 0;
    ssize_t n;
    while ((n = read(p[0], &got, sizeof(got))) < 0 && errno == EINTR)
        ;
    close(p[0]);
    if (strcmp(how, "daemon") == 0 || strcmp(how, "pgrp") == 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    if (n != (ssize_t)sizeof(got))
        die("grandchild");
    return got;
}

/* mode: keep-pipes, setsid, daemon or pgrp, each optionally with "+ignore-term" (or
 * ignore-term alone, which keeps the pipes). */
static void grandchildren(const char *mode)
{
    /* mode lives in opt()'s buffer: decide before the next opt() call. */
    char how[32];
    snprintf(how, sizeof(how), "%s", mode);
    char *plus = strchr(how, '+');
    int ignore = strcmp(how, "ignore-term") == 0 || (plus && strcmp(plus, "+ignore-term") == 0);
    if (plus)
        *plus = '\0';
    if (strcmp(how, "ignore-term") == 0 || strcmp(how, "keep-pipes") == 0)
        snprintf(how, sizeof(how), "stay");
    else if (strcmp(how, "setsid") != 0 && strcmp(how, "daemon") != 0 && strcmp(how, "pgrp") != 0)
        ignore = -1;
    if (ignore < 0 || (plus && !ignore)) {
        fprintf(stderr, "fake_cli: unknown FAKE_CLI_GRANDCHILD '%s'\n", mode);
        exit(98);
    }
    long count = opt_long("GRANDCHILDREN", 1);
    const char *pidfile = opt("PIDFILE", 0);
    char line[32];
    for (long i = 0; i < count; i++) {
        /* The disposition is set before fork so no kill can arrive before it holds. */
        struct sigaction sa, old;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = ignore ? SIG_IGN : SIG_DFL;
        sigaction(SIGTERM, &sa, &old);
        pid_t pid = grandchild(how);
        sigaction(SIGTERM, &old, NULL);
        if (pidfile) {
            int fd = open(pidfile, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
            if (fd < 0)
                die(pidfile);
            int n = snprintf(line, sizeof(line), "%ld\n", (long)pid);
            write_all(fd, line, (size_t)n);
            close(fd);
        }
    }
}

/* FAKE_CLI_GRANDCHILD_THREAD: a worker thread forks the grandchildren and lives on. */
struct forker {
    const char *mode;
    int done[2];
};

static void *forker_main(void *arg)
{
    struct forker *f = arg;
    grandchildren(f->mode);
    write_all(f->done[1], "", 1);
    for (;;)
        pause();
    return NULL;
}

static void grandchildren_from_a_thread(const char *mode)
{
    static struct forker f;
    f.mode = mode;
    pthread_t t;
    char c;
    if (pipe(f.done) != 0)
        die("pipe");
    if ((errno = pthread_create(&t, NULL, forker_main, &f)) != 0)
        die("pthread_create");
    while (read(f.done[0], &c, 1) < 0 && errno == EINTR)
        ;
}

static void write_files(const char *spec)
{
    while (*spec) {
        size_t n = strcspn(spec, ";");
        const char *eq = memchr(spec, '=', n);
        if (eq) {
            char path[PATH_MAX];
            size_t pl = (size_t)(eq - spec);
            if (pl < sizeof(path)) {
                memcpy(path, spec, pl);
                path[pl] = '\0';
                for (char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
                    *s = '\0';
                    mkdir(path, 0755);
                    *s = '/';
                }
                int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (fd < 0)
                    die(path);
                write_all(fd, eq + 1, (size_t)(spec + n - eq - 1));
                close(fd);
            }
        }
        spec += n + (spec[n] == ';');
    }
}

/* The prompt's lines "WRITE path=text", each written like one FAKE_CLI_WRITE_FILES entry:
 * jobs of one batch get one environment, and so each says what to write in its prompt. */
static void write_from_stdin(const struct bytes *in)
{
    static const char tag[] = "WRITE ";
    for (size_t off = 0; off < in->len;) {
        const char *p = in->p + off, *nl = memchr(p, '\n', in->len - off);
        size_t n = nl ? (size_t)(nl - p) : in->len - off;
        if (n > sizeof(tag) - 1 && memcmp(p, tag, sizeof(tag) - 1) == 0) {
            char *line = strndup(p + sizeof(tag) - 1, n - (sizeof(tag) - 1));
            if (!line)
                die("strndup");
            write_files(line);
            free(line);
        }
        off += n + 1;
    }
}

static void copy_file(const char *path, int to, long delay_ms)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        die(path);
    struct bytes b = { 0 };
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0)
        bytes_add(&b, buf, (size_t)n);
    close(fd);
    if (delay_ms <= 0) {
        write_all(to, b.p, b.len);
    } else {
        size_t off = 0;
        while (off < b.len) {
            char *nl = memchr(b.p + off, '\n', b.len - off);
            size_t k = nl ? (size_t)(nl - (b.p + off)) + 1 : b.len - off;
            write_all(to, b.p + off, k);
            off += k;
            if (off < b.len)
                sleep_ms(delay_ms);
        }
    }
    free(b.p);
}

static void write_text(int to, const char *s)
{
    struct bytes b = { 0 };
    for (; *s; s++) {
        char ch = *s;
        if (ch == '\\' && s[1]) {
            s++;
            ch = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
        }
        bytes_add(&b, &ch, 1);
    }
    write_all(to, b.p, b.len);
    free(b.p);
}

/* Fills buf with 100-byte lines "<9-digit number> <tag x 89>\n" numbered from *line. */
static void flood_lines(char *buf, size_t n, char tag, unsigned long *line)
{
    for (size_t off = 0; off + 100 <= n; off += 100) {
        char head[16];
        snprintf(head, sizeof(head), "%09lu ", (*line)++ % 1000000000ul);
        memcpy(buf + off, head, 10);
        memset(buf + off + 10, tag, 89);
        buf[off + 99] = '\n';
    }
}

static void floods(long out_bytes, long err_bytes)
{
    static char obuf[65500], ebuf[65500];
    unsigned long oline = 0, eline = 0;
    size_t o = out_bytes > 0 ? (size_t)out_bytes : 0, e = err_bytes > 0 ? (size_t)err_bytes : 0;
    /* Interleaved, so a reader that drains one stream only would deadlock on the other. */
    while (o || e) {
        if (o) {
            size_t k = o < sizeof(obuf) ? o : sizeof(obuf);
            flood_lines(obuf, sizeof(obuf), 'o', &oline);
            write_all(1, obuf, k);
            o -= k;
        }
        if (e) {
            size_t k = e < sizeof(ebuf) ? e : sizeof(ebuf);
            flood_lines(ebuf, sizeof(ebuf), 'e', &eline);
            write_all(2, ebuf, k);
            e -= k;
        }
    }
}

/* Hangs until the test creates `path`: a call that runs exactly as long as a test wants. */
static void wait_for(const char *path)
{
    while (access(path, F_OK) != 0)
        sleep_ms(10);
}

static void long_line(long n)
{
    static char buf[65536];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (char)('a' + i % 26);
    size_t left = (size_t)n;
    while (left) {
        size_t k = left < sizeof(buf) ? left : sizeof(buf);
        write_all(1, buf, k);
        left -= k;
    }
    write_all(1, "\n", 1);
}

/* A status command: claude's JSON, or codex's words on stderr. Returns its exit status. */
static int login_status(const char *cli)
{
    const char *v = getenv("FAKE_CLI_LOGIN");
    int yes = !v || strcmp(v, "no") != 0;
    if (!strcmp(cli, "auth"))
        printf(yes ? "{\"loggedIn\": true, \"authMethod\": \"fake\"}\n"
                   : "{\"loggedIn\": false}\n");
    else
        fputs(yes ? "Logged in using an API key\n" : "Not logged in\n", stderr);
    return yes ? 0 : 1;
}

/* What `--version` prints: FAKE_CLI_VERSION, else a version agentrun starts of the CLI this
 * copy stands in for (claude's is at least its min_version). */
static int version(const char *argv0)
{
    const char *v = getenv("FAKE_CLI_VERSION");
    const char *base = strrchr(argv0, '/');
    base = base ? base + 1 : argv0;
    if (!v)
        v = !strcmp(base, "claude")  ? "2.1.337 (Claude Code)"
            : !strcmp(base, "codex") ? "codex-cli 0.171.0"
                                     : "0.61.0";
    printf("%s\n", v);
    return 0;
}

/* Whether argv asks for claude's stream-json input (--input-format stream-json). */
static int stream_json_input(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--input-format") && !strcmp(argv[i + 1], "stream-json"))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[2], "status") &&
        (!strcmp(argv[1], "auth") || !strcmp(argv[1], "login")))
        return login_status(argv[1]);
    if (argc == 2 && !strcmp(argv[1], "--version"))
        return version(argv[0]);
    const char *state = getenv("FAKE_CLI_STATE");
    if (state && *state)
        call_no = next_call(state);

    struct bytes in = { 0 };
    if (opt_long("READ_STDIN", 1))
        read_stdin(&in);
    /* The prompt as claude reads it from its stream-json input. */
    const char *format = NULL;
    int composed = 0;
    size_t wire_bytes = in.len;
    if (in.len && stream_json_input(argc, argv)) {
        struct bytes prompt = { 0 };
        format = "stream-json";
        if (stream_json_prompt(&in, &prompt, &composed) < 0) {
            free(prompt.p);
            fputs("Error: fake_cli: stdin is not stream-json user messages\n", stderr);
            return 1;
        }
        free(in.p);
        in = prompt;
    }
    const char *log = opt("LOG", 0);
    if (log)
        log_call(log, argc, argv, &in, format, composed, wire_bytes);

    if (opt_long("IGNORE_TERM", 0))
        signal(SIGTERM, SIG_IGN);
    const char *v;
    if ((v = opt("GRANDCHILD", 1))) {
        /* The mode is copied before the next opt() call reuses its buffer. */
        char mode[32];
        snprintf(mode, sizeof(mode), "%s", v);
        if (opt_long("GRANDCHILD_THREAD", 0))
            grandchildren_from_a_thread(mode);
        else
            grandchildren(mode);
    }
    if ((v = opt("WAIT_FOR", 1)))
        wait_for(v);
    if ((v = opt("WRITE_FILES", 0)))
        write_files(v);
    if (opt_long("WRITE_FROM_STDIN", 0))
        write_from_stdin(&in);
    free(in.p);
    long delay = opt_long("DELAY_MS", 0); /* before opt(): both use its one buffer */
    if ((v = opt("STDERR_FIXTURE", 1)))
        copy_file(v, 2, delay);
    if ((v = opt("STDERR_TEXT", 0)))
        write_text(2, v);
    if ((v = opt("FIXTURE", 1)))
        copy_file(v, 1, delay);
    if ((v = opt("STDOUT_TEXT", 0)))
        write_text(1, v);
    floods(opt_long("FLOOD_STDOUT", 0), opt_long("FLOOD_STDERR", 0));
    long n = opt_long("LONG_LINE", 0);
    if (n > 0)
        long_line(n);
    if (opt_long("CLOSE_STDOUT", 0)) {
        close(1);
        close(2);
    }
    n = opt_long("SLEEP_MS", 0);
    if (n > 0)
        sleep_ms(n);
    if (opt_long("HANG", 0))
        for (;;)
            pause();
    int sig = (int)opt_long("SIGNAL", 0);
    if (sig > 0) {
        signal(sig, SIG_DFL);
        raise(sig);
    }
    return (int)opt_long("EXIT", 0);
}
