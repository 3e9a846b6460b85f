/*
 * The C tests' harness: a case (begin .. end) fails when any of its checks fails; main prints the
 * counts. Also the helpers every test program builds typed inputs with. Included by each test
 * program (test_shardline.c, test_etcd.c).
 */
#ifndef SHARDLINE_TEST_HARNESS_H
#define SHARDLINE_TEST_HARNESS_H

#include <shardline.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- a tiny harness: a case fails when any of its checks fails ------------------------------ */

static int g_passed;
static int g_failed;
static int g_case_failed;
static char g_case[160];

static void begin(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_case, sizeof g_case, fmt, ap);
    va_end(ap);
    g_case_failed = 0;
}

static void end(void) {
    if (g_case_failed) {
        g_failed++;
    } else {
        g_passed++;
    }
}

static int check(int ok, const char *file, int line, const char *fmt, ...) {
    if (!ok) {
        va_list ap;
        g_case_failed = 1;
        fprintf(stderr, "FAIL [%s] %s:%d: ", g_case, file, line);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
    }
    return ok;
}

#define CHECK(ok, ...) check((ok) != 0, __FILE__, __LINE__, __VA_ARGS__)

static const char *last_error(void) {
    static char buf[2048];
    buf[0] = '\0';
    shardline_last_error_message(buf, sizeof buf, NULL);
    return buf;
}

static int expect_status(shardline_status got, shardline_status want, const char *call, const char *file,
                         int line) {
    return check(got == want, file, line, "%s returned %s, expected %s (last error: %s)", call,
                 shardline_status_str(got), shardline_status_str(want), last_error());
}

#define EXPECT(call, want) expect_status((call), (want), #call, __FILE__, __LINE__)
#define OK(call) EXPECT(call, SHARDLINE_STATUS_OK)

static int contains(const char *haystack, const char *needle) {
    return haystack != NULL && strstr(haystack, needle) != NULL;
}

static int str_is(const char *s, const char *want) { return s != NULL && strcmp(s, want) == 0; }

/* Text as the typed API takes it. */
static struct shardline_str S(const char *s) {
    struct shardline_str r = {s, s != NULL ? strlen(s) : 0};
    return r;
}

/* A typed coordinator input of `kind`, every other field empty. */
static struct shardline_coordinator_input c_input(shardline_coordinator_input_kind kind) {
    struct shardline_coordinator_input in;
    memset(&in, 0, sizeof in);
    in.struct_size = (uint32_t)sizeof in;
    in.kind = kind;
    in.up_number = INT32_MAX;
    return in;
}

#endif
