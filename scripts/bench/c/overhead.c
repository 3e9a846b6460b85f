/*
 * Per-call cost of the C ABI on the standard overhead workload (the same in every binding):
 *   allocate          shardline_allocate_into of shard "new" with least-shard on a state of 10
 *                     Up members with one region each and shards "0".."999" placed by the
 *                     strategy (read-only: the state does not change), the region id copied
 *                     into a stack buffer;
 *   allocate-string   the same decision through shardline_allocate, result string freed;
 *   coordinator-step  shardline_coordinator_handle(receive GetShardHome "7" from r1) then
 *                     shardline_coordinator_drain_outputs (one ShardHome), JSON string freed;
 *   coordinator-step-typed
 *                     the same step through the typed API: shardline_coordinator_feed of the
 *                     receive as a struct, then shardline_coordinator_next_output until it gives
 *                     NULL (one ShardHome send, its region read from the view). No JSON;
 *   cheapest-call     shardline_state_region_count: an export taking one handle and answering
 *                     an integer, the cheapest call the ABI has (issue 18 bounds allocate's
 *                     extra cost by twice this).
 * Each is the best of several timed loops after a warm-up, in ns per call. Built and run by
 * scripts/bench/c.sh (release library, -O2, no sanitizers).
 *
 * Usage: overhead [--quick] [--out FILE]
 */
#define _POSIX_C_SOURCE 200809L

#include <shardline.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int quick;

static void die(const char *what, shardline_status rc) {
    char msg[1024] = "";
    shardline_last_error_message(msg, sizeof msg, NULL);
    fprintf(stderr, "overhead: %s failed: %s (%s)\n", what, shardline_status_str(rc), msg);
    exit(1);
}

#define MUST(call)                                                                                                     \
    do {                                                                                                               \
        shardline_status rc_ = (call);                                                                                 \
        if (rc_ != SHARDLINE_STATUS_OK) die(#call, rc_);                                                               \
    } while (0)

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Best of several timed loops of `n` calls, after one untimed loop to warm caches. */
static double per_call(void (*f)(void), long n) {
    for (long i = 0; i < n; i++) f();
    double best = 1e300;
    for (int r = 0; r < (quick ? 3 : 7); r++) {
        double t = now_ns();
        for (long i = 0; i < n; i++) f();
        double per = (now_ns() - t) / (double)n;
        if (per < best) best = per;
    }
    return best;
}

static char node_buf[64];
static const char *node(int i) {
    snprintf(node_buf, sizeof node_buf, "pekko://sys@10.0.0.%d:2552", i);
    return node_buf;
}

/* ---- allocate ------------------------------------------------------------------------------- */

static struct shardline_strategy *g_strategy;
static struct shardline_state *g_state;

static char *allocate(const char *shard) {
    char *region = NULL;
    bool pending = false;
    MUST(shardline_allocate(g_strategy, g_state, NULL, shard, &region, &pending, NULL));
    if (region == NULL) {
        fprintf(stderr, "overhead: allocate of %s is pending\n", shard);
        exit(1);
    }
    return region;
}

static void allocate_string(void) { shardline_string_free(allocate("new")); }

static volatile char g_first;

static void allocate_new(void) {
    char region[64];
    bool pending = true;
    MUST(shardline_allocate_into(g_strategy, g_state, NULL, "new", region, sizeof region, NULL, &pending));
    g_first = region[0];
}

static void setup_allocate(void) {
    MUST(shardline_strategy_new("{\"kind\":\"least-shard\"}", &g_strategy));
    MUST(shardline_state_new(node(0), &g_state));
    for (int i = 0; i < 10; i++) {
        char id[8];
        snprintf(id, sizeof id, "r%d", i);
        /* Member defaults, as every binding's workload: Up, 0.0.0, "default", upNumber INT32_MAX. */
        MUST(shardline_state_upsert_member(g_state, node(i), NULL, NULL, NULL, INT32_MAX));
        MUST(shardline_state_add_region(g_state, id, node(i), false));
    }
    for (int s = 0; s < 1000; s++) {
        char shard[8];
        snprintf(shard, sizeof shard, "%d", s);
        char *region = allocate(shard);
        MUST(shardline_state_add_shard(g_state, region, shard));
        shardline_string_free(region);
    }
    /* The timed answer must be a registered region. */
    char *got = allocate("new");
    size_t n = 0;
    int known = 0;
    MUST(shardline_state_region_count(g_state, &n));
    for (size_t i = 0; i < n; i++) {
        char *id = NULL;
        MUST(shardline_state_region_id(g_state, i, &id));
        known |= strcmp(id, got) == 0;
        shardline_string_free(id);
    }
    if (!known || n != 10) {
        fprintf(stderr, "overhead: allocate answered %s, not one of %zu regions\n", got, n);
        exit(1);
    }
    char copied[64];
    bool pending = true;
    MUST(shardline_allocate_into(g_strategy, g_state, NULL, "new", copied, sizeof copied, NULL, &pending));
    if (pending || strcmp(copied, got) != 0) {
        fprintf(stderr, "overhead: allocate_into answered %s, allocate %s\n", copied, got);
        exit(1);
    }
    shardline_string_free(got);
}

/* ---- coordinator step ----------------------------------------------------------------------- */

static struct shardline_coordinator *g_coordinator;

static const char ASK[] = "{\"type\":\"receive\",\"envelope\":{\"from\":{\"region\":\"r1\"},\"to\":\"coordinator\","
                          "\"message\":{\"command\":{\"type\":\"getShardHome\",\"shard\":\"7\"}}}}";
static const char EXPECTED[] =
    "[{\"type\":\"send\",\"envelope\":{\"from\":\"coordinator\",\"to\":{\"region\":\"r1\"},\"message\":{\"directive\":"
    "{\"type\":\"shardHome\",\"shard\":\"7\",\"region\":\"r1\",\"stamp\":{\"token\":1,\"version\":1}}}}}]";

static char *step(void) {
    char *out = NULL;
    MUST(shardline_coordinator_handle(g_coordinator, 0, ASK));
    MUST(shardline_coordinator_drain_outputs(g_coordinator, &out));
    return out;
}

static void coordinator_step(void) { shardline_string_free(step()); }

static void feed(const char *json) {
    MUST(shardline_coordinator_handle(g_coordinator, 0, json));
}

static void setup_coordinator(void) {
    struct shardline_strategy *s = NULL;
    MUST(shardline_strategy_new("{\"kind\":\"least-shard\"}", &s));
    MUST(shardline_coordinator_new(s, node(0), NULL, &g_coordinator)); /* takes `s` over */
    MUST(shardline_coordinator_start(g_coordinator, 0));
    feed("{\"type\":\"leaseGranted\",\"token\":1,\"validUntilMs\":9223372036854775808}");
    feed("{\"type\":\"stateLoaded\",\"state\":{\"snapshot\":null,\"events\":[]}}");
    feed("{\"type\":\"member\",\"member\":{\"address\":\"pekko://sys@10.0.0.1:2552\"}}");
    feed("{\"type\":\"receive\",\"envelope\":{\"from\":{\"region\":\"r1\"},\"to\":\"coordinator\","
         "\"message\":{\"command\":{\"type\":\"register\",\"node\":\"pekko://sys@10.0.0.1:2552\"}}}}");
    feed(ASK); /* allocates 7 to r1 */
    char *drained = NULL;
    MUST(shardline_coordinator_drain_outputs(g_coordinator, &drained));
    shardline_string_free(drained);
    char *out = step();
    if (strcmp(out, EXPECTED) != 0) {
        fprintf(stderr, "overhead: the step gave\n  %s\nexpected\n  %s\n", out, EXPECTED);
        exit(1);
    }
    shardline_string_free(out);
}

/* The same step, typed: what a C host without a JSON parser runs. */
static struct shardline_coordinator_input g_ask;
static volatile size_t g_sink;

static size_t typed_step(void) {
    const struct shardline_coordinator_output *o = NULL;
    size_t sends = 0;
    MUST(shardline_coordinator_feed(g_coordinator, 0, &g_ask));
    for (;;) {
        MUST(shardline_coordinator_next_output(g_coordinator, &o));
        if (o == NULL) {
            return sends;
        }
        g_sink += o->envelope.region.len;
        sends += o->kind == SHARDLINE_COORDINATOR_OUTPUT_KIND_SEND;
    }
}

static void coordinator_step_typed(void) { (void)typed_step(); }

static void setup_typed(void) {
    memset(&g_ask, 0, sizeof g_ask);
    g_ask.struct_size = (uint32_t)sizeof g_ask;
    g_ask.kind = SHARDLINE_COORDINATOR_INPUT_KIND_RECEIVE;
    g_ask.envelope.kind = SHARDLINE_MESSAGE_KIND_GET_SHARD_HOME;
    g_ask.envelope.from.data = "r1";
    g_ask.envelope.from.len = 2;
    g_ask.envelope.shard.data = "7";
    g_ask.envelope.shard.len = 1;
    /* The timed answer must be the one ShardHome the JSON step gives. */
    const struct shardline_coordinator_output *o = NULL;
    MUST(shardline_coordinator_feed(g_coordinator, 0, &g_ask));
    MUST(shardline_coordinator_next_output(g_coordinator, &o));
    const struct shardline_envelope *e = o != NULL ? &o->envelope : NULL;
    if (e == NULL || o->kind != SHARDLINE_COORDINATOR_OUTPUT_KIND_SEND || e->kind != SHARDLINE_MESSAGE_KIND_SHARD_HOME ||
        e->to.len != 2 || memcmp(e->to.data, "r1", 2) != 0 || e->region.len != 2 ||
        memcmp(e->region.data, "r1", 2) != 0 || e->shard.len != 1 || e->shard.data[0] != '7' || e->token != 1 ||
        e->version != 1) {
        fprintf(stderr, "overhead: the typed step did not give ShardHome 7 at r1 with stamp 1/1\n");
        exit(1);
    }
    MUST(shardline_coordinator_next_output(g_coordinator, &o));
    if (o != NULL || typed_step() != 1) {
        fprintf(stderr, "overhead: the typed step gave more than one output\n");
        exit(1);
    }
}

/* ---- the cheapest call ---------------------------------------------------------------------- */

static void cheapest(void) {
    size_t n = 0;
    MUST(shardline_state_region_count(g_state, &n));
}

int main(int argc, char **argv) {
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else {
            fprintf(stderr, "usage: overhead [--quick] [--out FILE]\n");
            return 2;
        }
    }
    if (shardline_abi_version() != SHARDLINE_ABI_VERSION) {
        fprintf(stderr, "overhead: loaded ABI %u, compiled against %u\n", shardline_abi_version(),
                SHARDLINE_ABI_VERSION);
        return 2;
    }
    long n = quick ? 100000 : 1000000;
    setup_allocate();
    setup_coordinator();
    setup_typed();
    struct {
        const char *name;
        double ns;
    } figures[] = {
        {"overhead.c.allocate", per_call(allocate_new, n)},
        {"overhead.c.allocate-string", per_call(allocate_string, n)},
        {"overhead.c.coordinator-step", per_call(coordinator_step, n / 5)},
        {"overhead.c.coordinator-step-typed", per_call(coordinator_step_typed, n / 2)},
        {"overhead.c.cheapest-call", per_call(cheapest, n * 5)},
    };
    size_t count = sizeof figures / sizeof figures[0];
    for (size_t i = 0; i < count; i++) {
        printf("%-32s %10.1f ns\n", figures[i].name, figures[i].ns);
    }
    if (out != NULL) {
        FILE *f = fopen(out, "w");
        if (f == NULL) {
            perror(out);
            return 1;
        }
        fprintf(f, "{\"figures\":[");
        for (size_t i = 0; i < count; i++) {
            fprintf(f, "%s\n {\"name\":\"%s\",\"value\":%.2f,\"unit\":\"ns\"}", i ? "," : "", figures[i].name,
                    figures[i].ns);
        }
        fprintf(f, "\n],\"ratios\":[]}\n");
        if (fclose(f) != 0) {
            perror(out);
            return 1;
        }
    }
    shardline_coordinator_free(g_coordinator);
    shardline_state_free(g_state);
    shardline_strategy_free(g_strategy);
    return 0;
}
