/*
 * C host tests of libshardline: replays every conformance vector through shardline_decide and
 * through the typed API, checks the entity hash vectors, and drives every error path, a custom
 * strategy and the ownership rules, and drives a coordinator with regions through the JSON step
 * API, the typed step API and the callback drivers, and replays every recorded state-machine trace
 * through shardline_replay. Run by scripts/test-c.sh under ASan/UBSan with leak checks.
 *
 * Usage: test_shardline <tests/vectors directory> <tests/traces directory>
 */
#define _POSIX_C_SOURCE 200809L

#include <shardline.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static char *read_file(const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    if (text == NULL || fread(text, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    text[n] = '\0';
    fclose(f);
    return text;
}

static cJSON *parse_file(const char *dir, const char *name) {
    char *text = read_file(dir, name);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    if (doc == NULL) {
        fprintf(stderr, "%s is not JSON\n", name);
        exit(2);
    }
    return doc;
}

static const char *str_field(const cJSON *obj, const char *key) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int list_equals(const struct shardline_shard_list *list, const cJSON *expected, int sorted) {
    size_t n = shardline_shard_list_len(list);
    if (!cJSON_IsArray(expected) || (size_t)cJSON_GetArraySize(expected) != n) {
        return 0;
    }
    const char **got = malloc((n + 1) * sizeof *got);
    for (size_t i = 0; i < n; i++) {
        got[i] = shardline_shard_list_get(list, i);
    }
    if (sorted) {
        qsort(got, n, sizeof *got, cmp_str);
    }
    int same = 1;
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, expected) {
        if (!cJSON_IsString(e) || got[i] == NULL || strcmp(e->valuestring, got[i]) != 0) {
            same = 0;
        }
        i++;
    }
    free(got);
    return same;
}

/* ---- (a) vectors through shardline_decide --------------------------------------------------- */

static const char *const DECISION_KEYS[] = {"region", "error", "pending", "order", "shards", "shardsInOrder", "rounds"};

static void compare_decision(const cJSON *vector, const cJSON *got) {
    const cJSON *expect = cJSON_GetObjectItemCaseSensitive(vector, "expect");
    for (size_t k = 0; k < sizeof DECISION_KEYS / sizeof DECISION_KEYS[0]; k++) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(expect, DECISION_KEYS[k]);
        if (e != NULL) {
            const cJSON *g = cJSON_GetObjectItemCaseSensitive(got, DECISION_KEYS[k]);
            char *gs = g ? cJSON_PrintUnformatted(g) : NULL;
            CHECK(g != NULL && cJSON_Compare(e, g, 1), "%s: got %s", DECISION_KEYS[k], gs ? gs : "nothing");
            cJSON_free(gs);
        }
    }
    const cJSON *then = cJSON_GetObjectItemCaseSensitive(vector, "then");
    if (then == NULL) {
        return;
    }
    const cJSON *got_then = cJSON_GetObjectItemCaseSensitive(got, "then");
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(got_then, "counts");
    const cJSON *expect_counts = cJSON_GetObjectItemCaseSensitive(then, "expectCounts");
    int n = cJSON_GetArraySize(expect_counts);
    if (!CHECK(cJSON_GetArraySize(counts) == n, "then.counts has %d entries, expected %d",
               cJSON_GetArraySize(counts), n)) {
        return;
    }
    int *a = malloc(sizeof(int) * (size_t)(n + 1));
    int *b = malloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        a[i] = cJSON_GetArrayItem(counts, i)->valueint;
        b[i] = cJSON_GetArrayItem(expect_counts, i)->valueint;
    }
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(then, "countsSorted"))) {
        for (int i = 0; i < n; i++) {
            for (int j = i + 1; j < n; j++) {
                if (a[j] < a[i]) { int t = a[i]; a[i] = a[j]; a[j] = t; }
                if (b[j] < b[i]) { int t = b[i]; b[i] = b[j]; b[j] = t; }
            }
        }
    }
    CHECK(memcmp(a, b, sizeof(int) * (size_t)n) == 0, "then: counts differ");
    free(a);
    free(b);
    const cJSON *regions = cJSON_GetObjectItemCaseSensitive(then, "expectRegions");
    if (regions != NULL) {
        CHECK(cJSON_Compare(regions, cJSON_GetObjectItemCaseSensitive(got_then, "regions"), 1),
              "then: regions differ");
    }
}

static void replay_decide(const cJSON *vector, const char *id) {
    char *text = cJSON_PrintUnformatted(vector);
    for (int explain = 0; explain <= 1; explain++) {
        begin("decide %s%s", id, explain ? " (explained)" : "");
        char *out = NULL;
        if (OK(shardline_decide(text, explain != 0, &out))) {
            cJSON *got = cJSON_Parse(out);
            if (CHECK(got != NULL, "output is not JSON: %s", out)) {
                compare_decision(vector, got);
                CHECK((cJSON_GetObjectItemCaseSensitive(got, "explanation") != NULL) == explain,
                      "explanation present only when asked for");
            }
            cJSON_Delete(got);
        }
        shardline_string_free(out);
        end();
    }
    cJSON_free(text);
}

static void replay_decide_file(const cJSON *vectors, const char *file) {
    const cJSON *v;
    cJSON_ArrayForEach(v, vectors) {
        replay_decide(v, str_field(v, "id"));
    }
    begin("decide the whole of %s as one array", file);
    char *text = cJSON_PrintUnformatted(vectors);
    char *out = NULL;
    if (OK(shardline_decide(text, false, &out))) {
        cJSON *got = cJSON_Parse(out);
        CHECK(cJSON_GetArraySize(got) == cJSON_GetArraySize(vectors), "one result per vector");
        int i = 0;
        cJSON_ArrayForEach(v, vectors) {
            compare_decision(v, cJSON_GetArrayItem(got, i++));
        }
        cJSON_Delete(got);
    }
    shardline_string_free(out);
    cJSON_free(text);
    end();
}

/* ---- (b) vectors through the typed API ------------------------------------------------------ */

/* Strings seen so far (borrowed from the vector document). */
struct names {
    const char **items;
    size_t len;
};

static int names_has(const struct names *n, const char *s) {
    for (size_t i = 0; i < n->len; i++) {
        if (strcmp(n->items[i], s) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Builds the state exactly as shardline_core::conformance does. */
static struct shardline_state *build_state(const cJSON *v) {
    const cJSON *cluster = cJSON_GetObjectItemCaseSensitive(v, "cluster");
    const cJSON *regions = cJSON_GetObjectItemCaseSensitive(v, "regions");
    const cJSON *candidates = cJSON_GetObjectItemCaseSensitive(v, "candidates");
    const char *self_address = "shardline://self";
    if (cluster != NULL) {
        self_address = str_field(cluster, "self");
    } else if (cJSON_GetArraySize(regions) > 0) {
        self_address = str_field(cJSON_GetArrayItem(regions, 0), "address");
    }
    struct shardline_state *st = NULL;
    if (!OK(shardline_state_new(self_address, &st))) {
        return NULL;
    }
    size_t cap = (size_t)cJSON_GetArraySize(regions) + (size_t)cJSON_GetArraySize(candidates) + 1;
    struct names seen = {malloc(cap * sizeof(char *)), 0};
    struct names ids = {malloc(cap * sizeof(char *)), 0};
    int ok = 1;
    const cJSON *it;
    if (cluster != NULL) {
        int i = 0;
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(cluster, "members")) {
            const cJSON *up = cJSON_GetObjectItemCaseSensitive(it, "upNumber");
            ok &= OK(shardline_state_upsert_member(st, str_field(it, "address"), str_field(it, "status"),
                                                   str_field(it, "appVersion"), str_field(it, "dataCenter"),
                                                   cJSON_IsNumber(up) ? up->valueint : i + 1));
            i++;
        }
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(cluster, "unreachable")) {
            ok &= OK(shardline_state_set_reachable(st, it->valuestring, false));
        }
    } else {
        /* Absent cluster: every region and candidate address is an Up member. */
        int i = 0;
        cJSON_ArrayForEach(it, regions) {
            const char *a = str_field(it, "address");
            if (!names_has(&seen, a)) {
                seen.items[seen.len++] = a;
                ok &= OK(shardline_state_upsert_member(st, a, NULL, NULL, NULL, i + 1));
            }
            i++;
        }
        cJSON_ArrayForEach(it, candidates) {
            if (!names_has(&seen, it->valuestring)) {
                seen.items[seen.len++] = it->valuestring;
                ok &= OK(shardline_state_upsert_member(st, it->valuestring, NULL, NULL, NULL, i + 1));
            }
            i++;
        }
    }
    cJSON_ArrayForEach(it, regions) {
        const char *id = str_field(it, "region");
        ok &= OK(shardline_state_add_region(st, id, str_field(it, "address"),
                                            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "local"))));
        ids.items[ids.len++] = id;
        const cJSON *shard;
        cJSON_ArrayForEach(shard, cJSON_GetObjectItemCaseSensitive(it, "shards")) {
            ok &= OK(shardline_state_add_shard(st, id, shard->valuestring));
        }
    }
    if (candidates != NULL) {
        cJSON_ArrayForEach(it, candidates) {
            if (!names_has(&ids, it->valuestring)) {
                ok &= OK(shardline_state_add_region(st, it->valuestring, it->valuestring, false));
                ids.items[ids.len++] = it->valuestring;
            }
        }
        for (size_t i = 0; i < ids.len; i++) {
            ok &= OK(shardline_state_set_eligible(st, ids.items[i], false));
        }
        cJSON_ArrayForEach(it, candidates) {
            ok &= OK(shardline_state_set_eligible(st, it->valuestring, true));
        }
    }
    free(seen.items);
    free(ids.items);
    if (!ok) {
        shardline_state_free(st);
        return NULL;
    }
    return st;
}

static void typed_allocate(struct shardline_strategy *s, struct shardline_state *st, const cJSON *v, int explain) {
    const cJSON *expect = cJSON_GetObjectItemCaseSensitive(v, "expect");
    const char *want_region = str_field(expect, "region");
    const char *want_error = str_field(expect, "error");
    char *region = NULL;
    bool pending = false;
    char *explanation = NULL;
    shardline_status rc = shardline_allocate(s, st, str_field(v, "requester"), str_field(v, "shardId"), &region,
                                             &pending, explain ? &explanation : NULL);
    if (want_error != NULL) {
        CHECK(strcmp(want_error, "no-candidates") == 0, "unknown expected error %s", want_error);
        EXPECT(rc, SHARDLINE_STATUS_NO_CANDIDATES);
        CHECK(region == NULL && explanation == NULL, "outputs untouched on failure");
    } else if (OK(rc)) {
        if (want_region != NULL) {
            CHECK(!pending && region != NULL && strcmp(region, want_region) == 0, "allocated to %s, expected %s",
                  region ? region : "(pending)", want_region);
        } else {
            CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(expect, "pending")), "expect has no answer");
            CHECK(pending && region == NULL, "expected pending, got %s", region ? region : "NULL");
        }
        if (explain) {
            cJSON *e = cJSON_Parse(explanation);
            CHECK(str_field(e, "strategy") != NULL && str_field(e, "op") != NULL, "explanation: %s",
                  explanation ? explanation : "NULL");
            cJSON_Delete(e);
        }
    }
    /* The copying form decides the same: same region, same pending, same failure. */
    char buf[256];
    memset(buf, 'x', sizeof buf);
    size_t len = 12345;
    bool into_pending = !pending;
    shardline_status into_rc = shardline_allocate_into(s, st, str_field(v, "requester"), str_field(v, "shardId"), buf,
                                                       sizeof buf, &len, &into_pending);
    EXPECT(into_rc, rc);
    if (rc == SHARDLINE_STATUS_OK) {
        const char *want = region != NULL ? region : "";
        CHECK(into_pending == pending && strcmp(buf, want) == 0 && len == strlen(want),
              "allocate_into gave %s (pending %d, len %zu), allocate %s (pending %d)", buf, into_pending, len, want,
              pending);
    } else {
        CHECK(buf[0] == 'x' && len == 12345, "allocate_into left its outputs untouched");
    }
    shardline_string_free(region);
    shardline_string_free(explanation);
}

/* Pekko's afterRebalance: deallocate the picked shards, re-allocate them in String order. */
static void typed_then(struct shardline_strategy *s, struct shardline_state *st, const struct shardline_shard_list *picked,
                       const cJSON *then) {
    size_t n = shardline_shard_list_len(picked);
    const char **order = malloc((n + 1) * sizeof *order);
    for (size_t i = 0; i < n; i++) {
        order[i] = shardline_shard_list_get(picked, i);
        char *from = NULL;
        OK(shardline_state_remove_shard(st, order[i], &from));
        CHECK(from != NULL, "remove_shard names the region");
        shardline_string_free(from);
    }
    qsort(order, n, sizeof *order, cmp_str);
    for (size_t i = 0; i < n; i++) {
        char *region = NULL;
        bool pending = true;
        if (OK(shardline_allocate(s, st, NULL, order[i], &region, &pending, NULL)) &&
            CHECK(!pending, "re-allocating %s: pending", order[i])) {
            OK(shardline_state_add_shard(st, region, order[i]));
        }
        shardline_string_free(region);
    }
    free(order);

    size_t regions = 0;
    OK(shardline_state_region_count(st, &regions));
    const cJSON *expect_counts = cJSON_GetObjectItemCaseSensitive(then, "expectCounts");
    if (!CHECK((size_t)cJSON_GetArraySize(expect_counts) == regions, "region count")) {
        return;
    }
    int sorted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(then, "countsSorted"));
    int *got = calloc(regions + 1, sizeof(int));
    int *want = calloc(regions + 1, sizeof(int));
    for (size_t i = 0; i < regions; i++) {
        size_t c = 0;
        OK(shardline_state_region_shard_count(st, i, &c));
        got[i] = (int)c;
        want[i] = cJSON_GetArrayItem(expect_counts, (int)i)->valueint;
    }
    for (size_t i = 0; sorted && i < regions; i++) {
        for (size_t j = i + 1; j < regions; j++) {
            if (got[j] < got[i]) { int t = got[i]; got[i] = got[j]; got[j] = t; }
            if (want[j] < want[i]) { int t = want[i]; want[i] = want[j]; want[j] = t; }
        }
    }
    CHECK(memcmp(got, want, regions * sizeof(int)) == 0, "then: counts differ");
    free(got);
    free(want);
    const cJSON *expect_regions = cJSON_GetObjectItemCaseSensitive(then, "expectRegions");
    for (size_t i = 0; expect_regions != NULL && i < regions; i++) {
        const cJSON *er = cJSON_GetArrayItem(expect_regions, (int)i);
        char *id = NULL;
        struct shardline_shard_list *shards = NULL;
        OK(shardline_state_region_id(st, i, &id));
        OK(shardline_state_region_shards(st, i, &shards));
        CHECK(id != NULL && strcmp(id, str_field(er, "region")) == 0, "then: region %zu is %s", i, id);
        CHECK(list_equals(shards, cJSON_GetObjectItemCaseSensitive(er, "shards"), 0), "then: shards of %s", id);
        shardline_string_free(id);
        shardline_shard_list_free(shards);
    }
}

static void typed_rebalance(struct shardline_strategy *s, struct shardline_state *st, const cJSON *v, int explain) {
    const cJSON *expect = cJSON_GetObjectItemCaseSensitive(v, "expect");
    const cJSON *in_progress = cJSON_GetObjectItemCaseSensitive(v, "rebalanceInProgress");
    size_t n = (size_t)cJSON_GetArraySize(in_progress);
    const char **ip = n ? malloc(n * sizeof *ip) : NULL;
    for (size_t i = 0; i < n; i++) {
        ip[i] = cJSON_GetArrayItem(in_progress, (int)i)->valuestring;
    }
    struct shardline_shard_list *picked = NULL;
    char *explanation = NULL;
    if (OK(shardline_rebalance(s, st, ip, n, &picked, explain ? &explanation : NULL))) {
        CHECK(list_equals(picked, cJSON_GetObjectItemCaseSensitive(expect, "shards"), 1), "shards differ");
        const cJSON *in_order = cJSON_GetObjectItemCaseSensitive(expect, "shardsInOrder");
        if (in_order != NULL) {
            CHECK(list_equals(picked, in_order, 0), "shardsInOrder differs");
        }
        CHECK(!explain || contains(explanation, "\"op\":\"rebalance\""), "explanation: %s",
              explanation ? explanation : "NULL");
        const cJSON *then = cJSON_GetObjectItemCaseSensitive(v, "then");
        if (then != NULL) {
            typed_then(s, st, picked, then);
        }
    }
    shardline_shard_list_free(picked);
    shardline_string_free(explanation);
    free(ip);
}

static void replay_typed(const cJSON *v, const char *id, int explain) {
    const char *op = str_field(v, "op");
    if (strcmp(op, "rank") == 0) {
        return; /* ranking has no typed entry point; shardline_decide covers it */
    }
    begin("typed %s", id);
    char *config = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(v, "strategy"));
    struct shardline_strategy *s = NULL;
    struct shardline_state *st = NULL;
    if (OK(shardline_strategy_new(config, &s)) && (st = build_state(v)) != NULL) {
        if (strcmp(op, "allocate") == 0) {
            typed_allocate(s, st, v, explain);
        } else {
            typed_rebalance(s, st, v, explain);
        }
    }
    shardline_state_free(st);
    shardline_strategy_free(s);
    cJSON_free(config);
    end();
}

static void replay_file(const char *dir, const char *file) {
    cJSON *vectors = parse_file(dir, file);
    replay_decide_file(vectors, file);
    const cJSON *v;
    int i = 0;
    cJSON_ArrayForEach(v, vectors) {
        replay_typed(v, str_field(v, "id"), i++ % 2);
    }
    cJSON_Delete(vectors);
}

/* ---- entity -> shard vectors ---------------------------------------------------------------- */

static void hashing_vectors(const char *dir) {
    cJSON *doc = parse_file(dir, "hashing.json");
    const cJSON *e;
    begin("hashing.json actorTsHashShardId");
    int n = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "actorTsHashShardId"), "values")) {
        uint32_t shard = 0;
        const char *entity = str_field(e, "entityId");
        uint32_t num = (uint32_t)cJSON_GetObjectItemCaseSensitive(e, "numShards")->valueint;
        int want = cJSON_GetObjectItemCaseSensitive(e, "shard")->valueint;
        if (OK(shardline_actor_ts_shard_id(entity, num, &shard))) {
            CHECK((int)shard == want, "hashShardId(%s, %u) = %u, expected %d", entity, num, shard, want);
        }
        n++;
    }
    CHECK(n > 0, "no actorTsHashShardId values");
    end();
    begin("hashing.json pekkoHashCodeExtractor");
    n = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "pekkoHashCodeExtractor"), "values")) {
        char *shard = NULL;
        const char *entity = str_field(e, "entityId");
        int32_t num = (int32_t)cJSON_GetObjectItemCaseSensitive(e, "numShards")->valueint;
        const char *want = str_field(e, "shard");
        if (OK(shardline_pekko_shard_id(entity, num, &shard))) {
            CHECK(strcmp(shard, want) == 0, "shardId(%s, %d) = %s, expected %s", entity, num, shard, want);
        }
        shardline_string_free(shard);
        n++;
    }
    CHECK(n > 0, "no pekkoHashCodeExtractor values");
    end();
    cJSON_Delete(doc);
}

/* ---- error paths ---------------------------------------------------------------------------- */

static const char BAD_UTF8[] = "bad\xff\xfe";
static const char *const LEAST_SHARD = "{\"kind\":\"least-shard\",\"absoluteLimit\":1,\"relativeLimit\":1.0}";

/* Two Up members, each with a region; r1 holds s1 and s2. */
static struct shardline_state *small_state(void) {
    struct shardline_state *st = NULL;
    OK(shardline_state_new("pekko://app@10.0.0.1:2552", &st));
    OK(shardline_state_upsert_member(st, "pekko://app@10.0.0.1:2552", "Up", "1.0.0", "default", 1));
    OK(shardline_state_upsert_member(st, "pekko://app@10.0.0.2:2552", NULL, "1.0.0", NULL, 2));
    OK(shardline_state_add_region(st, "r1", "pekko://app@10.0.0.1:2552", true));
    OK(shardline_state_add_region(st, "r2", "pekko://app@10.0.0.2:2552", false));
    OK(shardline_state_add_shard(st, "r1", "s1"));
    OK(shardline_state_add_shard(st, "r1", "s2"));
    return st;
}

static void test_versions(void) {
    begin("version and ABI");
    char want[64];
    snprintf(want, sizeof want, "shardline/%d.%d.%d", SHARDLINE_VERSION_MAJOR, SHARDLINE_VERSION_MINOR,
             SHARDLINE_VERSION_PATCH);
    CHECK(strcmp(shardline_version(), want) == 0, "version %s, expected %s", shardline_version(), want);
    CHECK(shardline_abi_version() == SHARDLINE_ABI_VERSION, "ABI %u", shardline_abi_version());
    end();
}

static void test_status_names(void) {
    static const char *const names[] = {
        "SHARDLINE_STATUS_OK",           "SHARDLINE_STATUS_INVALID_ARGUMENT", "SHARDLINE_STATUS_NULL_POINTER",
        "SHARDLINE_STATUS_INVALID_STATE", "SHARDLINE_STATUS_NO_CANDIDATES",   "SHARDLINE_STATUS_CALLBACK_FAILED",
        "SHARDLINE_STATUS_REENTRANT_CALL", "SHARDLINE_STATUS_PANIC",          "SHARDLINE_STATUS_INTERNAL",
    };
    static const shardline_status codes[] = {
        SHARDLINE_STATUS_OK,           SHARDLINE_STATUS_INVALID_ARGUMENT, SHARDLINE_STATUS_NULL_POINTER,
        SHARDLINE_STATUS_INVALID_STATE, SHARDLINE_STATUS_NO_CANDIDATES,   SHARDLINE_STATUS_CALLBACK_FAILED,
        SHARDLINE_STATUS_REENTRANT_CALL, SHARDLINE_STATUS_PANIC,          SHARDLINE_STATUS_INTERNAL,
    };
    begin("status_str names every code");
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        CHECK(codes[i] == i, "codes are dense from 0");
        CHECK(strcmp(shardline_status_str(codes[i]), names[i]) == 0, "%s", shardline_status_str(codes[i]));
    }
    CHECK(strcmp(shardline_status_str(9), "SHARDLINE_STATUS_UNKNOWN") == 0, "unknown code");
    CHECK(strcmp(shardline_status_str(0xFFFFFFFFu), "SHARDLINE_STATUS_UNKNOWN") == 0, "unknown code");
    end();
}

static void test_last_error(void) {
    begin("last error: set, cleared, truncated");
    struct shardline_strategy *s = NULL;
    EXPECT(shardline_strategy_new(NULL, &s), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(strcmp(last_error(), "config_json is NULL") == 0, "%s", last_error());

    EXPECT(shardline_strategy_new("{\"kind\":\"least-shard\",\"relativeLimit\":1.5}", &s),
           SHARDLINE_STATUS_INVALID_ARGUMENT);
    char full[1024];
    size_t n = 0;
    OK(shardline_last_error_message(full, sizeof full, &n));
    CHECK(n == strlen(full) && n > 10, "out_n is the message length");
    size_t query = 0;
    OK(shardline_last_error_message(NULL, 0, &query));
    CHECK(query == n, "length query");
    char small[6];
    memset(small, 'x', sizeof small);
    OK(shardline_last_error_message(small, sizeof small, &query));
    CHECK(small[5] == '\0' && strncmp(small, full, 5) == 0 && query == n, "truncated to 5 bytes + NUL");
    char one[1] = {'x'};
    OK(shardline_last_error_message(one, 1, NULL));
    CHECK(one[0] == '\0', "a 1-byte buffer gets just the NUL");
    EXPECT(shardline_last_error_message(NULL, 8, &query), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(strcmp(last_error(), full) == 0, "reading never clears the message");

    /* A two-byte character is never split. */
    EXPECT(shardline_strategy_new("{\"kind\":\"\xc3\xbc\"}", &s), SHARDLINE_STATUS_INVALID_ARGUMENT);
    OK(shardline_last_error_message(full, sizeof full, &n));
    const char *u = strstr(full, "\xc3\xbc");
    if (CHECK(u != NULL, "message quotes the kind: %s", full)) {
        size_t cut = (size_t)(u - full) + 1; /* room for the first byte of the character only */
        char *buf = malloc(cut + 1);
        OK(shardline_last_error_message(buf, cut + 1, NULL));
        CHECK(strlen(buf) == cut - 1, "cut before the character");
        free(buf);
    }
    uint32_t shard = 0;
    OK(shardline_actor_ts_shard_id("x", 3, &shard));
    CHECK(strcmp(last_error(), "") == 0, "a successful call clears it");
    end();
}

static void test_strategy_errors(void) {
    static const struct {
        const char *json;
        const char *mentions;
    } invalid[] = {
        {"{", "not valid JSON"},
        {"[]", "strategy"},
        {"{\"kind\":\"least-shard\",\"relativeLimit\":0}", "relativeLimit"},
        {"{\"kind\":\"least-shard\",\"absoluteLimit\":-1}", "absoluteLimit"},
        {"{\"kind\":\"least-shard-legacy\",\"rebalanceThreshold\":-1}", "rebalanceThreshold"},
        {"{\"kind\":\"consistent-hashing\",\"virtualNodesFactor\":0}", "virtualNodesFactor"},
        {"{\"kind\":\"external\",\"lookup\":\"sometimes\"}", "lookup"},
        {"{\"kind\":\"external\",\"locations\":{\"s1\":\"://x\"}}", "locations.s1"},
        {"{\"kind\":\"actor-ts-least-shard\",\"rebalanceThreshold\":0}", "rebalanceThreshold"},
        {"{\"kind\":\"round-robin\"}", "round-robin"},
        {"{\"kind\":\"least-shard\",\"absolutLimit\":3}", "absolutLimit"},
    };
    begin("strategy_new rejects bad input");
    struct shardline_strategy *s = NULL;
    EXPECT(shardline_strategy_new(LEAST_SHARD, NULL), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(strcmp(last_error(), "out is NULL") == 0, "%s", last_error());
    EXPECT(shardline_strategy_new(BAD_UTF8, &s), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "config_json is not valid UTF-8"), "%s", last_error());
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        EXPECT(shardline_strategy_new(invalid[i].json, &s), SHARDLINE_STATUS_INVALID_ARGUMENT);
        CHECK(contains(last_error(), invalid[i].mentions), "%s: %s", invalid[i].json, last_error());
    }
    CHECK(s == NULL, "out untouched by every failure");
    shardline_strategy_free(NULL);
    end();
}

static void test_state_errors(void) {
    begin("state functions reject bad input");
    struct shardline_state *st = NULL;
    EXPECT(shardline_state_new(NULL, &st), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_state_new("pekko://app@h:1", NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_state_new("no address", &st), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "self_address"), "%s", last_error());
    EXPECT(shardline_state_new(BAD_UTF8, &st), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "self_address is not valid UTF-8"), "%s", last_error());
    CHECK(st == NULL, "out untouched");

    st = small_state();
    /* NULL handles */
    EXPECT(shardline_state_add_region(NULL, "r", "pekko://app@h:1", false), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(strcmp(last_error(), "state is NULL") == 0, "%s", last_error());
    EXPECT(shardline_state_add_shard(NULL, "r1", "s9"), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_state_upsert_member(NULL, "pekko://app@h:1", NULL, NULL, NULL, 1), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_state_remove_member(NULL, "pekko://app@h:1"), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_state_set_reachable(NULL, "pekko://app@h:1", false), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_state_remove_region(NULL, "r1", NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_state_set_eligible(NULL, "r1", true), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_state_remove_shard(NULL, "s1", NULL), SHARDLINE_STATUS_NULL_POINTER);
    /* NULL strings and out-pointers */
    EXPECT(shardline_state_add_region(st, NULL, "pekko://app@h:1", false), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(strcmp(last_error(), "id is NULL") == 0, "%s", last_error());
    EXPECT(shardline_state_add_shard(st, "r1", NULL), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(strcmp(last_error(), "shard is NULL") == 0, "%s", last_error());
    char *home = (char *)"untouched";
    EXPECT(shardline_state_home_of(st, "s1", NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_state_home_of(NULL, "s1", &home), SHARDLINE_STATUS_NULL_POINTER);
    size_t count = 0;
    EXPECT(shardline_state_region_count(st, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_state_region_count(NULL, &count), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_state_region_id(st, 0, NULL), SHARDLINE_STATUS_NULL_POINTER);
    /* bad UTF-8 */
    EXPECT(shardline_state_add_shard(st, "r1", BAD_UTF8), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "shard is not valid UTF-8"), "%s", last_error());
    EXPECT(shardline_state_upsert_member(st, "pekko://app@h:1", NULL, BAD_UTF8, NULL, 1),
           SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "app_version is not valid UTF-8"), "%s", last_error());
    /* malformed values */
    EXPECT(shardline_state_upsert_member(st, "pekko://app@h:1", "Sleeping", NULL, NULL, 1),
           SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "status_name"), "%s", last_error());
    EXPECT(shardline_state_add_region(st, "r3", "::", false), SHARDLINE_STATUS_INVALID_ARGUMENT);
    EXPECT(shardline_state_add_region(st, "", "pekko://app@h:1", false), SHARDLINE_STATUS_INVALID_ARGUMENT);
    /* unknown or duplicate things */
    EXPECT(shardline_state_add_shard(st, "nowhere", "s9"), SHARDLINE_STATUS_INVALID_STATE);
    CHECK(contains(last_error(), "\"nowhere\" is not registered"), "%s", last_error());
    EXPECT(shardline_state_add_shard(st, "r2", "s1"), SHARDLINE_STATUS_INVALID_STATE);
    CHECK(contains(last_error(), "already allocated"), "%s", last_error());
    EXPECT(shardline_state_add_region(st, "r1", "pekko://app@h:1", false), SHARDLINE_STATUS_INVALID_STATE);
    EXPECT(shardline_state_set_eligible(st, "nowhere", true), SHARDLINE_STATUS_INVALID_STATE);
    EXPECT(shardline_state_remove_region(st, "nowhere", NULL), SHARDLINE_STATUS_INVALID_STATE);
    EXPECT(shardline_state_remove_shard(st, "s9", NULL), SHARDLINE_STATUS_INVALID_STATE);
    EXPECT(shardline_state_remove_member(st, "pekko://app@10.0.0.9:2552"), SHARDLINE_STATUS_INVALID_STATE);
    EXPECT(shardline_state_region_id(st, 2, &home), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "out of range"), "%s", last_error());
    CHECK(strcmp(home, "untouched") == 0, "out untouched");

    /* and the successful paths of what the vectors do not exercise */
    OK(shardline_state_home_of(st, "s2", &home));
    CHECK(home != NULL && strcmp(home, "r1") == 0, "home of s2");
    shardline_string_free(home);
    OK(shardline_state_home_of(st, "s9", &home));
    CHECK(home == NULL, "an unallocated shard has no home");
    char *address = NULL;
    OK(shardline_state_region_address(st, 1, &address));
    CHECK(address != NULL && strcmp(address, "pekko://app@10.0.0.2:2552") == 0, "address %s", address);
    shardline_string_free(address);
    bool eligible = false;
    OK(shardline_state_set_eligible(st, "r2", false));
    OK(shardline_state_region_is_eligible(st, 1, &eligible));
    CHECK(!eligible, "r2 is not eligible");
    OK(shardline_state_set_eligible(st, "r2", true));
    char *from = NULL;
    OK(shardline_state_remove_shard(st, "s2", &from));
    CHECK(from != NULL && strcmp(from, "r1") == 0, "s2 came from r1");
    shardline_string_free(from);
    struct shardline_shard_list *orphans = NULL;
    OK(shardline_state_remove_region(st, "r1", &orphans));
    CHECK(shardline_shard_list_len(orphans) == 1 && strcmp(shardline_shard_list_get(orphans, 0), "s1") == 0,
          "r1's shards");
    CHECK(shardline_shard_list_get(orphans, 1) == NULL, "out of range");
    shardline_shard_list_free(orphans);
    OK(shardline_state_set_reachable(st, "pekko://app@10.0.0.2:2552", false));
    OK(shardline_state_set_reachable(st, "pekko://app@10.0.0.2:2552", true));
    OK(shardline_state_remove_member(st, "pekko://app@10.0.0.2:2552"));
    OK(shardline_state_region_count(st, &count));
    CHECK(count == 1, "one region left");
    CHECK(shardline_shard_list_len(NULL) == 0 && shardline_shard_list_get(NULL, 0) == NULL, "NULL lists");
    shardline_shard_list_free(NULL);
    shardline_string_free(NULL);
    shardline_state_free(NULL);
    shardline_state_free(st);
    end();
}

static void test_decision_errors(void) {
    begin("allocate and rebalance reject bad input");
    struct shardline_state *st = small_state();
    struct shardline_strategy *s = NULL;
    OK(shardline_strategy_new(LEAST_SHARD, &s));
    char *region = (char *)"untouched";
    bool pending = true;
    char *explanation = (char *)"untouched";
    EXPECT(shardline_allocate(NULL, st, NULL, "s3", &region, &pending, NULL), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(strcmp(last_error(), "strategy is NULL") == 0, "%s", last_error());
    EXPECT(shardline_allocate(s, NULL, NULL, "s3", &region, &pending, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_allocate(s, st, NULL, NULL, &region, &pending, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_allocate(s, st, NULL, "s3", NULL, &pending, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_allocate(s, st, NULL, "s3", &region, NULL, &explanation), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(strcmp(last_error(), "out_pending is NULL") == 0, "%s", last_error());
    EXPECT(shardline_allocate(s, st, BAD_UTF8, "s3", &region, &pending, NULL), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "requester is not valid UTF-8"), "%s", last_error());
    EXPECT(shardline_allocate(s, st, NULL, BAD_UTF8, &region, &pending, NULL), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(strcmp(region, "untouched") == 0 && pending && strcmp(explanation, "untouched") == 0,
          "outputs untouched by failures");
    OK(shardline_allocate(s, st, "r1", "s3", &region, &pending, &explanation));
    CHECK(!pending && strcmp(region, "r2") == 0, "least-shard picks r2");
    CHECK(contains(explanation, "\"strategy\":\"least-shard\""), "%s", explanation);
    shardline_string_free(region);
    shardline_string_free(explanation);

    /* The copying form: the caller's buffer must hold the id and its NUL. */
    char buf[3] = {'u', 'u', 'u'};
    size_t len = 99;
    pending = true;
    EXPECT(shardline_allocate_into(NULL, st, NULL, "s3", buf, sizeof buf, &len, &pending),
           SHARDLINE_STATUS_NULL_POINTER);
    CHECK(strcmp(last_error(), "strategy is NULL") == 0, "%s", last_error());
    EXPECT(shardline_allocate_into(s, st, NULL, "s3", NULL, sizeof buf, &len, &pending), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(strcmp(last_error(), "buf is NULL") == 0, "%s", last_error());
    EXPECT(shardline_allocate_into(s, st, NULL, "s3", buf, sizeof buf, &len, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_allocate_into(s, st, NULL, BAD_UTF8, buf, sizeof buf, &len, &pending),
           SHARDLINE_STATUS_INVALID_ARGUMENT);
    EXPECT(shardline_allocate_into(s, st, NULL, "s3", buf, 2, &len, &pending), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "buf holds 2 bytes; region id \"r2\" needs 3"), "%s", last_error());
    EXPECT(shardline_allocate_into(s, st, NULL, "s3", buf, 0, &len, &pending), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(buf[0] == 'u' && buf[2] == 'u' && len == 99 && pending, "outputs untouched by failures");
    OK(shardline_allocate_into(s, st, "r1", "s3", buf, sizeof buf, NULL, &pending));
    CHECK(!pending && strcmp(buf, "r2") == 0, "least-shard picks r2, got %s", buf);
    OK(shardline_allocate_into(s, st, "r1", "s3", buf, sizeof buf, &len, &pending));
    CHECK(len == 2, "len %zu", len);

    struct shardline_shard_list *list = NULL;
    const char *holes[] = {"s1", NULL};
    EXPECT(shardline_rebalance(s, st, NULL, 0, NULL, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_rebalance(NULL, st, NULL, 0, &list, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_rebalance(s, st, NULL, 2, &list, NULL), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(strcmp(last_error(), "in_progress is NULL") == 0, "%s", last_error());
    EXPECT(shardline_rebalance(s, st, holes, 2, &list, NULL), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(strcmp(last_error(), "in_progress[1] is NULL") == 0, "%s", last_error());
    holes[1] = BAD_UTF8;
    EXPECT(shardline_rebalance(s, st, holes, 2, &list, NULL), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "in_progress[1] is not valid UTF-8"), "%s", last_error());
    CHECK(list == NULL, "out untouched");
    OK(shardline_rebalance(s, st, NULL, 0, &list, NULL));
    CHECK(shardline_shard_list_len(list) == 1 && strcmp(shardline_shard_list_get(list, 0), "s1") == 0,
          "least-shard hands off s1");
    shardline_shard_list_free(list);
    shardline_strategy_free(s);

    /* actor-ts strategies need numeric shard ids and candidates */
    OK(shardline_strategy_new("{\"kind\":\"actor-ts-hash\"}", &s));
    EXPECT(shardline_allocate(s, st, NULL, "s3", &region, &pending, NULL), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "integer shard ids"), "%s", last_error());
    struct shardline_state *empty = NULL;
    OK(shardline_state_new("sys@h:1", &empty));
    EXPECT(shardline_allocate(s, empty, NULL, "7", &region, &pending, NULL), SHARDLINE_STATUS_NO_CANDIDATES);
    shardline_state_free(empty);
    shardline_strategy_free(s);
    shardline_state_free(st);
    end();

    begin("decide and entity functions reject bad input");
    char *out = (char *)"untouched";
    EXPECT(shardline_decide(NULL, false, &out), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_decide("[]", false, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_decide(BAD_UTF8, false, &out), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "vectors_json is not valid UTF-8"), "%s", last_error());
    EXPECT(shardline_decide("{\"op\":", false, &out), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "not valid JSON"), "%s", last_error());
    EXPECT(shardline_decide("[{\"id\":\"mine\",\"strategy\":{\"kind\":\"actor-ts-hash\"},\"op\":\"allocate\","
                            "\"regions\":[{\"region\":\"a\",\"address\":\"not an address\"}]}]",
                            false, &out),
           SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "mine") && contains(last_error(), "regions[0].address"), "%s", last_error());
    EXPECT(shardline_decide("42", true, &out), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(strcmp(out, "untouched") == 0, "out untouched");
    uint32_t n = 7;
    EXPECT(shardline_actor_ts_shard_id("x", 0, &n), SHARDLINE_STATUS_INVALID_ARGUMENT);
    EXPECT(shardline_actor_ts_shard_id(NULL, 4, &n), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_actor_ts_shard_id("x", 4, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_actor_ts_shard_id(BAD_UTF8, 4, &n), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "entity is not valid UTF-8"), "%s", last_error());
    CHECK(n == 7, "out untouched");
    EXPECT(shardline_pekko_shard_id("x", 0, &out), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "numberOfShards"), "%s", last_error());
    EXPECT(shardline_pekko_shard_id("x", -3, &out), SHARDLINE_STATUS_INVALID_ARGUMENT);
    EXPECT(shardline_pekko_shard_id("x", 4, NULL), SHARDLINE_STATUS_NULL_POINTER);
    end();
}

/* ---- custom strategies ---------------------------------------------------------------------- */

enum host_mode { LEAST_LOADED, FAIL, UNKNOWN_REGION, NO_ANSWER, PENDING, REENTER };

struct host {
    enum host_mode mode;
    int frees;
    int allocations;
    int rebalances;
    struct shardline_strategy *self;
    struct shardline_state *owned;
    shardline_status reentry;
    shardline_status owned_mutation;
    shardline_status view_mutation;
    size_t in_progress_seen;
    int in_progress_sorted;
    int saw_requester;
};

/* The eligible region with the fewest shards, first in map order on ties. */
static int least_loaded(const struct shardline_state *st, char **out_id) {
    size_t n = 0;
    if (shardline_state_region_count(st, &n) != SHARDLINE_STATUS_OK) {
        return 0;
    }
    size_t best = n, best_count = 0;
    for (size_t i = 0; i < n; i++) {
        bool eligible = false;
        size_t c = 0;
        if (shardline_state_region_is_eligible(st, i, &eligible) != SHARDLINE_STATUS_OK ||
            shardline_state_region_shard_count(st, i, &c) != SHARDLINE_STATUS_OK) {
            return 0;
        }
        if (eligible && (best == n || c < best_count)) {
            best = i;
            best_count = c;
        }
    }
    return best < n && shardline_state_region_id(st, best, out_id) == SHARDLINE_STATUS_OK;
}

static shardline_status host_allocate(void *userdata, const struct shardline_state *state, const char *requester,
                                      const char *shard, struct shardline_decision *out) {
    struct host *h = userdata;
    h->allocations++;
    h->saw_requester = requester != NULL;
    switch (h->mode) {
    case FAIL:
        return SHARDLINE_STATUS_INTERNAL;
    case UNKNOWN_REGION:
        return shardline_decision_set_region(out, "nowhere");
    case NO_ANSWER:
        return SHARDLINE_STATUS_OK;
    case PENDING:
        return shardline_decision_set_pending(out);
    case REENTER: {
        char *r = NULL;
        bool p = false;
        h->reentry = shardline_allocate(h->self, state, NULL, shard, &r, &p, NULL);
        shardline_string_free(r);
        h->owned_mutation = shardline_state_add_shard(h->owned, "r1", shard);
        h->view_mutation = shardline_state_add_shard((struct shardline_state *)state, "r1", shard);
        break;
    }
    case LEAST_LOADED:
        break;
    }
    /* Rebalance answers are refused in an allocate decision. */
    if (shardline_decision_add_shard(out, shard) != SHARDLINE_STATUS_INVALID_STATE) {
        return SHARDLINE_STATUS_INTERNAL;
    }
    char *home = NULL;
    if (shardline_state_home_of(state, "s1", &home) != SHARDLINE_STATUS_OK || home == NULL) {
        return SHARDLINE_STATUS_INTERNAL;
    }
    shardline_string_free(home);
    char *id = NULL;
    if (!least_loaded(state, &id)) {
        return SHARDLINE_STATUS_INTERNAL;
    }
    shardline_status rc = shardline_decision_set_region(out, id);
    shardline_string_free(id);
    if (rc == SHARDLINE_STATUS_OK && shardline_decision_set_pending(out) != SHARDLINE_STATUS_INVALID_STATE) {
        return SHARDLINE_STATUS_INTERNAL; /* a decision is made once */
    }
    return rc;
}

/* Hands off the oldest shard of the most loaded region when it has 2+ more than the least. */
static shardline_status host_rebalance(void *userdata, const struct shardline_state *state,
                                       const char *const *in_progress, size_t n_in_progress,
                                       struct shardline_decision *out) {
    struct host *h = userdata;
    h->rebalances++;
    h->in_progress_seen = n_in_progress;
    h->in_progress_sorted = 1;
    for (size_t i = 1; i < n_in_progress; i++) {
        h->in_progress_sorted &= strcmp(in_progress[i - 1], in_progress[i]) < 0;
    }
    if (h->mode == FAIL) {
        return 77;
    }
    if (h->mode == UNKNOWN_REGION) {
        return shardline_decision_add_shard(out, "never-allocated");
    }
    size_t n = 0, most = 0, most_count = 0, least_count = (size_t)-1;
    shardline_state_region_count(state, &n);
    for (size_t i = 0; i < n; i++) {
        size_t c = 0;
        shardline_state_region_shard_count(state, i, &c);
        if (c > most_count) { most = i; most_count = c; }
        if (c < least_count) { least_count = c; }
    }
    if (n == 0 || most_count < least_count + 2) {
        return SHARDLINE_STATUS_OK;
    }
    struct shardline_shard_list *shards = NULL;
    shardline_status rc = shardline_state_region_shards(state, most, &shards);
    if (rc == SHARDLINE_STATUS_OK) {
        rc = shardline_decision_add_shard(out, shardline_shard_list_get(shards, 0));
    }
    if (rc == SHARDLINE_STATUS_OK &&
        shardline_decision_add_shard(out, shardline_shard_list_get(shards, 0)) != SHARDLINE_STATUS_INVALID_STATE) {
        rc = SHARDLINE_STATUS_INTERNAL; /* duplicates are refused */
    }
    if (rc == SHARDLINE_STATUS_OK && shardline_decision_set_region(out, "r1") != SHARDLINE_STATUS_INVALID_STATE) {
        rc = SHARDLINE_STATUS_INTERNAL; /* allocate answers are refused */
    }
    shardline_shard_list_free(shards);
    return rc;
}

static void host_free(void *userdata) {
    ((struct host *)userdata)->frees++;
}

static struct shardline_custom_strategy host_vtable(struct host *h) {
    struct shardline_custom_strategy c;
    memset(&c, 0, sizeof c);
    c.struct_size = (uint32_t)sizeof c;
    c.userdata = h;
    c.allocate = host_allocate;
    c.rebalance = host_rebalance;
    c.userdata_free = host_free;
    return c;
}

static void test_custom_strategy(void) {
    struct host h;
    memset(&h, 0, sizeof h);
    begin("custom strategy: construction is checked");
    struct shardline_custom_strategy c = host_vtable(&h);
    struct shardline_strategy *s = NULL;
    c.struct_size = 4;
    EXPECT(shardline_strategy_new_custom(&c, "mine", &s), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "struct_size"), "%s", last_error());
    c = host_vtable(&h);
    c.allocate = NULL;
    EXPECT(shardline_strategy_new_custom(&c, "mine", &s), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "custom.allocate is NULL"), "%s", last_error());
    c = host_vtable(&h);
    EXPECT(shardline_strategy_new_custom(NULL, "mine", &s), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_strategy_new_custom(&c, "mine", NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_strategy_new_custom(&c, BAD_UTF8, &s), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "name is not valid UTF-8"), "%s", last_error());
    CHECK(s == NULL && h.frees == 0, "failed constructions keep the userdata the caller's");
    end();

    begin("custom strategy: decisions through callbacks");
    OK(shardline_strategy_new_custom(&c, "mine", &s));
    struct shardline_state *st = small_state();
    char *region = NULL;
    bool pending = true;
    char *explanation = NULL;
    OK(shardline_allocate(s, st, "r1", "s3", &region, &pending, &explanation));
    CHECK(!pending && region != NULL && strcmp(region, "r2") == 0, "least loaded is r2, got %s", region);
    CHECK(h.saw_requester, "requester passed through");
    CHECK(contains(explanation, "\"strategy\":\"mine\""), "%s", explanation);
    shardline_string_free(explanation);
    OK(shardline_state_add_shard(st, region, "s3"));
    shardline_string_free(region);
    region = NULL;
    OK(shardline_allocate(s, st, NULL, "s4", &region, &pending, NULL));
    CHECK(!h.saw_requester, "NULL requester passed through");
    CHECK(region != NULL && strcmp(region, "r2") == 0, "r2 again (1 vs 2 shards)");
    OK(shardline_state_add_shard(st, region, "s4"));
    shardline_string_free(region);
    h.mode = PENDING;
    OK(shardline_allocate(s, st, NULL, "s5", &region, &pending, NULL));
    CHECK(pending && region == NULL, "pending");
    h.mode = LEAST_LOADED;

    struct shardline_shard_list *list = NULL;
    OK(shardline_rebalance(s, st, NULL, 0, &list, NULL));
    CHECK(shardline_shard_list_len(list) == 0, "balanced: nothing to hand off");
    shardline_shard_list_free(list);
    OK(shardline_state_add_shard(st, "r1", "s5"));
    OK(shardline_state_add_shard(st, "r1", "s6"));
    const char *ip[] = {"s6", "s5"};
    list = NULL;
    OK(shardline_rebalance(s, st, ip, 2, &list, &explanation));
    CHECK(h.in_progress_seen == 2 && h.in_progress_sorted, "in-progress shards passed, sorted");
    CHECK(shardline_shard_list_len(list) == 1 && strcmp(shardline_shard_list_get(list, 0), "s1") == 0,
          "hands off r1's oldest shard");
    CHECK(contains(explanation, "\"op\":\"rebalance\""), "%s", explanation);
    shardline_string_free(explanation);
    shardline_shard_list_free(list);
    end();

    begin("custom strategy: failing and invalid callbacks");
    region = (char *)"untouched";
    h.mode = FAIL;
    EXPECT(shardline_allocate(s, st, NULL, "s7", &region, &pending, NULL), SHARDLINE_STATUS_CALLBACK_FAILED);
    CHECK(contains(last_error(), "SHARDLINE_STATUS_INTERNAL") && contains(last_error(), "mine"), "%s",
          last_error());
    list = NULL;
    EXPECT(shardline_rebalance(s, st, NULL, 0, &list, NULL), SHARDLINE_STATUS_CALLBACK_FAILED);
    CHECK(contains(last_error(), "unknown status 77"), "%s", last_error());
    h.mode = UNKNOWN_REGION;
    EXPECT(shardline_allocate(s, st, NULL, "s7", &region, &pending, NULL), SHARDLINE_STATUS_INVALID_STATE);
    CHECK(contains(last_error(), "\"nowhere\", which is not registered"), "%s", last_error());
    EXPECT(shardline_rebalance(s, st, NULL, 0, &list, NULL), SHARDLINE_STATUS_INVALID_STATE);
    CHECK(contains(last_error(), "not allocated"), "%s", last_error());
    h.mode = NO_ANSWER;
    EXPECT(shardline_allocate(s, st, NULL, "s7", &region, &pending, NULL), SHARDLINE_STATUS_CALLBACK_FAILED);
    CHECK(contains(last_error(), "without deciding"), "%s", last_error());
    CHECK(strcmp(region, "untouched") == 0 && list == NULL, "outputs untouched by failures");
    end();

    begin("custom strategy: re-entrant calls are refused");
    h.mode = REENTER;
    h.self = s;
    h.owned = st;
    region = NULL;
    OK(shardline_allocate(s, st, NULL, "s7", &region, &pending, NULL));
    EXPECT(h.reentry, SHARDLINE_STATUS_REENTRANT_CALL);
    EXPECT(h.owned_mutation, SHARDLINE_STATUS_REENTRANT_CALL);
    EXPECT(h.view_mutation, SHARDLINE_STATUS_REENTRANT_CALL);
    CHECK(strcmp(last_error(), "") == 0, "the outer call succeeded, so no error is left");
    CHECK(region != NULL && strcmp(region, "r2") == 0, "still decides");
    shardline_string_free(region);
    char *home = NULL;
    OK(shardline_state_home_of(st, "s7", &home));
    CHECK(home == NULL, "the callback could not change the state");
    /* A built-in strategy may be used from inside a callback, on the same state. */
    end();

    begin("custom strategy: userdata_free runs once");
    CHECK(h.frees == 0, "not before free");
    shardline_strategy_free(s);
    CHECK(h.frees == 1, "once on free, got %d", h.frees);
    shardline_state_free(st);
    end();
}

/* A custom strategy that delegates to a built-in one from inside its callback. */
struct delegate {
    struct shardline_strategy *inner;
    int frees;
};

static shardline_status delegate_allocate(void *userdata, const struct shardline_state *state, const char *requester,
                                          const char *shard, struct shardline_decision *out) {
    struct delegate *d = userdata;
    char *region = NULL;
    bool pending = false;
    shardline_status rc = shardline_allocate(d->inner, state, requester, shard, &region, &pending, NULL);
    if (rc == SHARDLINE_STATUS_OK) {
        rc = pending ? shardline_decision_set_pending(out) : shardline_decision_set_region(out, region);
    }
    shardline_string_free(region);
    return rc;
}

static void delegate_free(void *userdata) {
    struct delegate *d = userdata;
    shardline_strategy_free(d->inner);
    d->frees++;
}

static void test_delegating_strategy(void) {
    begin("custom strategy delegating to a built-in one");
    struct delegate d = {NULL, 0};
    OK(shardline_strategy_new(LEAST_SHARD, &d.inner));
    struct shardline_custom_strategy c;
    memset(&c, 0, sizeof c);
    c.struct_size = (uint32_t)sizeof c;
    c.userdata = &d;
    c.allocate = delegate_allocate;
    c.userdata_free = delegate_free;
    struct shardline_strategy *s = NULL;
    OK(shardline_strategy_new_custom(&c, NULL, &s));
    struct shardline_state *st = small_state();
    char *region = NULL;
    bool pending = true;
    char *explanation = NULL;
    OK(shardline_allocate(s, st, NULL, "s3", &region, &pending, &explanation));
    CHECK(region != NULL && strcmp(region, "r2") == 0, "delegated decision");
    CHECK(contains(explanation, "\"strategy\":\"custom\""), "default name: %s", explanation);
    shardline_string_free(region);
    shardline_string_free(explanation);
    struct shardline_shard_list *list = NULL;
    OK(shardline_rebalance(s, st, NULL, 0, &list, NULL));
    CHECK(shardline_shard_list_len(list) == 0, "no rebalance callback: nothing handed off");
    shardline_shard_list_free(list);
    shardline_strategy_free(s);
    CHECK(d.frees == 1, "userdata_free once");
    shardline_state_free(st);
    end();
}

/* ---- the coordinator and region step machines, driven with JSON ----------------------------- */

#define NODE(i) "pekko://sys@10.0.0." #i ":2552"
#define FAR_MS 9223372036854775808ULL /* 2^63: a lease that never runs out in these tests */

/* Drains one machine's outputs as a parsed JSON array (never NULL; the caller deletes it). */
static cJSON *parse_outputs(shardline_status rc, char *json) {
    cJSON *arr = NULL;
    if (CHECK(rc == SHARDLINE_STATUS_OK && json != NULL, "drain failed: %s", last_error())) {
        arr = cJSON_Parse(json);
        CHECK(cJSON_IsArray(arr), "outputs are a JSON array: %s", json);
    }
    shardline_string_free(json);
    return arr != NULL ? arr : cJSON_CreateArray();
}

static cJSON *drain_coordinator(struct shardline_coordinator *c) {
    char *json = NULL;
    shardline_status rc = shardline_coordinator_drain_outputs(c, &json);
    return parse_outputs(rc, json);
}

static cJSON *drain_region(struct shardline_region *r) {
    char *json = NULL;
    shardline_status rc = shardline_region_drain_outputs(r, &json);
    return parse_outputs(rc, json);
}

static const char *out_type(const cJSON *o) { return str_field(o, "type"); }

/* The "type" of an output's notice, or NULL. */
static const char *notice_type(const cJSON *o) {
    const char *t = out_type(o);
    return t != NULL && strcmp(t, "notice") == 0 ? str_field(cJSON_GetObjectItemCaseSensitive(o, "notice"), "type")
                                                 : NULL;
}

/* Formats an input document into a buffer the caller frees. */
static char *doc(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = malloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

static shardline_status coordinator_input(struct shardline_coordinator *c, uint64_t now, const char *json) {
    return shardline_coordinator_handle(c, now, json);
}

/* A little cluster: one coordinator, a few regions, and a network that delivers every "send"
 * at once. Outputs other than sends are kept for the test, in order. */
struct cluster {
    struct shardline_coordinator *c;
    struct shardline_region *r[3];
    const char *ids[3];
    int n;
    uint64_t now;
    cJSON *c_outs;
    cJSON *r_outs[3];
    int stopped_shards;
};

static void deliver(struct cluster *k, const cJSON *envelope) {
    char *env = cJSON_PrintUnformatted(envelope);
    char *input = doc("{\"type\":\"receive\",\"envelope\":%s}", env);
    const cJSON *to = cJSON_GetObjectItemCaseSensitive(envelope, "to");
    if (cJSON_IsString(to) && strcmp(to->valuestring, "coordinator") == 0) {
        OK(coordinator_input(k->c, k->now, input));
    } else {
        const char *id = str_field(to, "region");
        int found = 0;
        for (int i = 0; i < k->n; i++) {
            if (id != NULL && strcmp(id, k->ids[i]) == 0) {
                OK(shardline_region_handle(k->r[i], k->now, input));
                found = 1;
            }
        }
        CHECK(found, "a send to an unknown endpoint: %s", env);
    }
    free(input);
    free(env);
}

/* Delivers sends until the network is quiet; the region host stops shards at once. */
static void pump(struct cluster *k) {
    for (int round = 0; round < 100; round++) {
        int moved = 0;
        cJSON *outs = drain_coordinator(k->c);
        cJSON *o;
        while ((o = cJSON_DetachItemFromArray(outs, 0)) != NULL) {
            moved = 1;
            if (strcmp(out_type(o), "send") == 0) {
                deliver(k, cJSON_GetObjectItemCaseSensitive(o, "envelope"));
                cJSON_Delete(o);
            } else {
                cJSON_AddItemToArray(k->c_outs, o);
            }
        }
        cJSON_Delete(outs);
        for (int i = 0; i < k->n; i++) {
            outs = drain_region(k->r[i]);
            while ((o = cJSON_DetachItemFromArray(outs, 0)) != NULL) {
                moved = 1;
                const char *t = out_type(o);
                if (strcmp(t, "send") == 0) {
                    deliver(k, cJSON_GetObjectItemCaseSensitive(o, "envelope"));
                    cJSON_Delete(o);
                    continue;
                }
                if (strcmp(t, "stopShard") == 0) {
                    char *in = doc("{\"type\":\"shardStopped\",\"shard\":\"%s\"}", str_field(o, "shard"));
                    OK(shardline_region_handle(k->r[i], k->now, in));
                    free(in);
                    k->stopped_shards++;
                }
                cJSON_AddItemToArray(k->r_outs[i], o);
            }
            cJSON_Delete(outs);
        }
        if (!moved) {
            return;
        }
    }
    CHECK(0, "the network never went quiet");
}

/* Runs every machine's timers at `now`, then pumps. */
static void advance(struct cluster *k, uint64_t now) {
    k->now = now;
    OK(shardline_coordinator_on_timeout(k->c, now));
    for (int i = 0; i < k->n; i++) {
        OK(shardline_region_on_timeout(k->r[i], now));
    }
    pump(k);
}

static int count_type(const cJSON *outs, const char *type, const char *shard) {
    int n = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, outs) {
        const char *s = str_field(o, "shard");
        if (strcmp(out_type(o), type) == 0 && (shard == NULL || (s != NULL && strcmp(s, shard) == 0))) {
            n++;
        }
    }
    return n;
}

static int count_notice(const cJSON *outs, const char *type) {
    int n = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, outs) {
        const char *t = notice_type(o);
        n += t != NULL && strcmp(t, type) == 0;
    }
    return n;
}

static char *home_in_coordinator(struct shardline_coordinator *c, const char *shard) {
    char *home = NULL;
    OK(shardline_coordinator_home_of(c, shard, &home));
    return home;
}


static struct shardline_region *new_region(const char *id, const char *node) {
    struct shardline_region *r = NULL;
    OK(shardline_region_new(id, node, "{\"kind\":\"pekko\",\"numberOfShards\":10}", NULL, &r));
    return r;
}

/* A coordinator on 10.0.0.0 with least-shard, started, granted token 1 and restored empty. */
static struct shardline_coordinator *active_coordinator(const char *config) {
    struct shardline_strategy *s = NULL;
    OK(shardline_strategy_new(LEAST_SHARD, &s));
    struct shardline_coordinator *c = NULL;
    if (!OK(shardline_coordinator_new(s, NODE(0), config, &c))) {
        shardline_strategy_free(s);
        return NULL;
    }
    OK(shardline_coordinator_start(c, 0));
    OK(coordinator_input(c, 0, "{\"type\":\"leaseGranted\",\"token\":1,\"validUntilMs\":9223372036854775808}"));
    OK(coordinator_input(c, 0, "{\"type\":\"stateLoaded\",\"state\":{\"snapshot\":null,\"events\":[]}}"));
    cJSON_Delete(drain_coordinator(c));
    return c;
}

static void test_coordinator_lifecycle(void) {
    begin("coordinator: lease, load, activate, step down");
    struct shardline_strategy *s = NULL;
    OK(shardline_strategy_new(LEAST_SHARD, &s));
    struct shardline_coordinator *c = NULL;
    OK(shardline_coordinator_new(s, NODE(0), NULL, &c)); /* takes the strategy over */
    const char *phase = NULL;
    OK(shardline_coordinator_phase(c, &phase));
    CHECK(str_is(phase, "idle"), "phase %s", phase);
    bool has = true;
    uint64_t value = 99;
    OK(shardline_coordinator_token(c, &has, &value));
    CHECK(!has && value == 0, "no token before the grant");
    OK(shardline_coordinator_next_deadline(c, &has, &value));
    CHECK(!has, "no timer before start");
    char *one = (char *)"untouched";
    OK(shardline_coordinator_poll_output(c, &one));
    CHECK(one == NULL, "an empty queue polls NULL");

    OK(shardline_coordinator_start(c, 10));
    OK(shardline_coordinator_phase(c, &phase));
    CHECK(str_is(phase, "acquiringLease"), "phase %s", phase);
    OK(shardline_coordinator_poll_output(c, &one));
    CHECK(str_is(one, "{\"type\":\"lease\",\"request\":{\"type\":\"acquire\"}}"), "first output %s", one);
    shardline_string_free(one);

    OK(coordinator_input(c, 20, "{\"type\":\"leaseGranted\",\"token\":1,\"validUntilMs\":100000}"));
    cJSON *outs = drain_coordinator(c);
    CHECK(cJSON_GetArraySize(outs) == 1 && str_is(out_type(cJSON_GetArrayItem(outs, 0)), "loadState"),
          "a grant asks to load the state");
    cJSON_Delete(outs);
    OK(shardline_coordinator_phase(c, &phase));
    CHECK(str_is(phase, "loading"), "phase %s", phase);
    OK(coordinator_input(c, 30, "{\"state\":{\"snapshot\":null,\"events\":[]},\"type\":\"stateLoaded\"}"));
    outs = drain_coordinator(c);
    CHECK(count_notice(outs, "active") == 1, "an active notice");
    cJSON_Delete(outs);
    bool active = false;
    OK(shardline_coordinator_is_active(c, &active));
    OK(shardline_coordinator_token(c, &has, &value));
    CHECK(active && has && value == 1, "active with token 1");
    OK(shardline_coordinator_next_deadline(c, &has, &value));
    CHECK(has && value > 30 && value <= 100000, "a timer is set (lease renewal): %llu", (unsigned long long)value);

    /* Losing the lease steps down. */
    OK(coordinator_input(c, 50, "{\"type\":\"leaseLost\",\"token\":1}"));
    outs = drain_coordinator(c);
    CHECK(count_notice(outs, "steppedDown") == 1, "a steppedDown notice");
    cJSON_Delete(outs);
    OK(shardline_coordinator_is_active(c, &active));
    CHECK(!active, "not active after the loss");

    /* It contends again after the retry interval; a token that does not grow is a host
     * mistake, refused as such, and a larger one is taken. */
    for (uint64_t t = 1000; t <= 20000 && !str_is(phase, "acquiringLease"); t += 1000) {
        OK(shardline_coordinator_on_timeout(c, t));
        OK(shardline_coordinator_phase(c, &phase));
    }
    CHECK(str_is(phase, "acquiringLease"), "phase %s", phase);
    cJSON_Delete(drain_coordinator(c));
    EXPECT(coordinator_input(c, 20000, "{\"type\":\"leaseGranted\",\"token\":1,\"validUntilMs\":900000}"),
           SHARDLINE_STATUS_INVALID_STATE);
    CHECK(contains(last_error(), "does not exceed"), "%s", last_error());
    OK(coordinator_input(c, 20000, "{\"type\":\"leaseGranted\",\"token\":2,\"validUntilMs\":900000}"));
    OK(shardline_coordinator_token(c, &has, &value));
    CHECK(has && value == 2, "token 2 taken");
    shardline_coordinator_free(c);
    shardline_coordinator_free(NULL);
    end();
}

static void test_coordinator_get_shard_home(void) {
    begin("coordinator: register, GetShardHome -> HostShard, then ShardHome");
    struct shardline_coordinator *c = active_coordinator(NULL);
    if (c == NULL) {
        end();
        return;
    }
    OK(coordinator_input(c, 1, "{\"type\":\"member\",\"member\":{\"address\":\"" NODE(1) "\"}}"));
    const char *reg = "{\"type\":\"receive\",\"envelope\":{\"from\":{\"region\":\"r1\"},\"to\":\"coordinator\","
                      "\"message\":{\"command\":{\"type\":\"register\",\"node\":\"" NODE(1) "\"}}}}";
    OK(coordinator_input(c, 1, reg));
    cJSON *outs = drain_coordinator(c);
    char *text = cJSON_PrintUnformatted(outs);
    CHECK(contains(text, "\"registerAck\""), "a registerAck: %s", text);
    free(text);
    cJSON_Delete(outs);

    const char *ask = "{\"type\":\"receive\",\"envelope\":{\"from\":{\"region\":\"r1\"},\"to\":\"coordinator\","
                      "\"message\":{\"command\":{\"type\":\"getShardHome\",\"shard\":\"7\"}}}}";
    OK(coordinator_input(c, 2, ask));
    outs = drain_coordinator(c);
    text = cJSON_PrintUnformatted(outs);
    CHECK(count_type(outs, "persist", NULL) == 1, "the allocation is persisted first: %s", text);
    CHECK(contains(text, "\"hostShard\"") && contains(text, "\"shard\":\"7\""), "HostShard 7 to r1: %s", text);
    free(text);
    cJSON_Delete(outs);
    char *home = home_in_coordinator(c, "7");
    CHECK(str_is(home, "r1"), "home of 7 is %s", home);
    shardline_string_free(home);
    home = home_in_coordinator(c, "8");
    CHECK(home == NULL, "8 is not allocated");

    /* Asked again: exactly one ShardHome for 7 at r1, nothing else. */
    OK(coordinator_input(c, 3, ask));
    char *json = NULL;
    OK(shardline_coordinator_drain_outputs(c, &json));
    CHECK(str_is(json, "[{\"type\":\"send\",\"envelope\":{\"from\":\"coordinator\",\"to\":{\"region\":\"r1\"},"
                       "\"message\":{\"directive\":{\"type\":\"shardHome\",\"shard\":\"7\",\"region\":\"r1\","
                       "\"stamp\":{\"token\":1,\"version\":1}}}}}]"),
          "one ShardHome: %s", json);
    shardline_string_free(json);
    OK(shardline_coordinator_drain_outputs(c, &json));
    CHECK(str_is(json, "[]"), "the queue is empty: %s", json);
    shardline_string_free(json);
    shardline_coordinator_free(c);
    end();
}

/* The value of the metric `name` (about region `region`, or none), or -1 when absent. */
static double metric_value(const cJSON *metrics, const char *name, const char *region) {
    const cJSON *m;
    cJSON_ArrayForEach(m, metrics) {
        const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(m, "attributes");
        const char *about = attrs == NULL ? NULL : str_field(attrs, "shardline.region");
        if (str_is(str_field(m, "name"), name) &&
            ((region == NULL && about == NULL) || (region != NULL && str_is(about, region)))) {
            return cJSON_GetObjectItemCaseSensitive(m, "value")->valuedouble;
        }
    }
    return -1;
}

static void test_decision_events_and_metrics(void) {
    begin("coordinator: decisionEvents explain an allocation; metrics count it");
    struct shardline_coordinator *c = active_coordinator("{\"decisionEvents\":true}");
    if (c == NULL) {
        end();
        return;
    }
    OK(coordinator_input(c, 1, "{\"type\":\"member\",\"member\":{\"address\":\"" NODE(1) "\"}}"));
    OK(coordinator_input(c, 1, "{\"type\":\"receive\",\"envelope\":{\"from\":{\"region\":\"r1\"},\"to\":"
                               "\"coordinator\",\"message\":{\"command\":{\"type\":\"register\",\"node\":\""
                               NODE(1) "\"}}}}"));
    OK(coordinator_input(c, 2, "{\"type\":\"receive\",\"envelope\":{\"from\":{\"region\":\"r1\"},\"to\":"
                               "\"coordinator\",\"message\":{\"command\":{\"type\":\"getShardHome\",\"shard\":\"7\"}}}}"));
    cJSON *outs = drain_coordinator(c);
    char *text = cJSON_PrintUnformatted(outs);
    CHECK(count_notice(outs, "allocated") == 1, "one allocated notice: %s", text);
    CHECK(contains(text, "\"explanation\"") && contains(text, "\"op\":\"allocate\""), "explained: %s", text);
    free(text);
    cJSON_Delete(outs);

    char *json = NULL;
    OK(shardline_coordinator_metrics(c, &json));
    cJSON *metrics = cJSON_Parse(json);
    CHECK(metric_value(metrics, "shardline.coordinator.allocations", NULL) == 1, "allocations: %s", json);
    CHECK(metric_value(metrics, "shardline.coordinator.shards", "r1") == 1, "shards of r1: %s", json);
    CHECK(metric_value(metrics, "shardline.coordinator.active", NULL) == 1, "active: %s", json);
    cJSON_Delete(metrics);
    shardline_string_free(json);
    EXPECT(shardline_coordinator_metrics(c, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_coordinator_metrics(NULL, &json), SHARDLINE_STATUS_NULL_POINTER);
    shardline_coordinator_free(c);

    struct shardline_region *r = new_region("x", NODE(1));
    OK(shardline_region_metrics(r, &json));
    metrics = cJSON_Parse(json);
    CHECK(metric_value(metrics, "shardline.region.registered", "x") == 0, "not registered: %s", json);
    CHECK(metric_value(metrics, "shardline.region.buffered", "x") == 0, "nothing buffered: %s", json);
    cJSON_Delete(metrics);
    shardline_string_free(json);
    EXPECT(shardline_region_metrics(r, NULL), SHARDLINE_STATUS_NULL_POINTER);
    shardline_region_free(r);
    end();
}

static void test_cluster_exchange(void) {
    begin("coordinator + regions: hosting, routing, a rebalance hand-off, lease loss");
    struct cluster k;
    memset(&k, 0, sizeof k);
    k.c = active_coordinator("{\"rebalanceIntervalMs\":1000}");
    if (k.c == NULL) {
        end();
        return;
    }
    k.c_outs = cJSON_CreateArray();
    for (int i = 0; i < 3; i++) {
        k.r_outs[i] = cJSON_CreateArray();
    }
    OK(coordinator_input(k.c, 0, "{\"type\":\"member\",\"member\":{\"address\":\"" NODE(1) "\",\"upNumber\":1}}"));
    OK(coordinator_input(k.c, 0, "{\"type\":\"member\",\"member\":{\"address\":\"" NODE(2) "\",\"upNumber\":2}}"));

    k.ids[0] = "r1";
    k.r[0] = new_region("r1", NODE(1));
    k.n = 1;
    OK(shardline_region_start(k.r[0], 0));
    pump(&k);
    bool registered = false;
    OK(shardline_region_is_registered(k.r[0], &registered));
    CHECK(registered, "r1 registered");

    /* Four shards, all to r1 (the only region); buffered messages are delivered once hosted. */
    const char *shards[] = {"1", "2", "3", "4"};
    for (int i = 0; i < 4; i++) {
        OK(shardline_region_route_to_shard(k.r[0], 0, shards[i], "e", (const uint8_t *)"hi", 2));
    }
    size_t buffered = 0;
    OK(shardline_region_buffered(k.r[0], &buffered));
    CHECK(buffered == 4, "4 messages wait for homes, got %zu", buffered);
    pump(&k);
    OK(shardline_region_buffered(k.r[0], &buffered));
    CHECK(buffered == 0, "nothing buffered once the homes are known, got %zu", buffered);
    CHECK(count_type(k.r_outs[0], "startShard", NULL) == 4, "r1 started 4 shards");
    CHECK(count_type(k.r_outs[0], "deliver", NULL) == 4, "r1 delivered 4 messages");
    char *text = cJSON_PrintUnformatted(k.r_outs[0]);
    CHECK(contains(text, "{\"type\":\"deliver\",\"shard\":\"1\",\"entity\":\"e\",\"payload\":\"aGk=\"}"),
          "payloads are base64 text: %s", text);
    free(text);
    for (int i = 0; i < 4; i++) {
        char *home = home_in_coordinator(k.c, shards[i]);
        CHECK(str_is(home, "r1"), "shard %s at %s", shards[i], home);
        shardline_string_free(home);
    }
    /* The extractor routes too: a message for any entity lands somewhere, buffered or not. */
    OK(shardline_region_route(k.r[0], 0, "entity-42", NULL, 0));
    pump(&k);

    /* r2 joins; the next rebalance hands one of r1's shards off through the outputs. */
    k.ids[1] = "r2";
    k.r[1] = new_region("r2", NODE(2));
    k.n = 2;
    OK(shardline_region_start(k.r[1], 0));
    pump(&k);
    OK(shardline_region_is_registered(k.r[1], &registered));
    CHECK(registered, "r2 registered");
    int stopped_before = k.stopped_shards;
    for (uint64_t t = 1000; t <= 5000 && count_notice(k.c_outs, "handOffCompleted") == 0; t += 1000) {
        advance(&k, t);
    }
    CHECK(count_notice(k.c_outs, "handOffStarted") >= 1, "a hand-off started");
    CHECK(count_notice(k.c_outs, "handOffCompleted") >= 1, "a hand-off completed");
    CHECK(k.stopped_shards > stopped_before, "r1 stopped the shard it handed off");

    /* The moved shard left r1; r1 routing to it gets it to its new home, r2. */
    const char *moved = NULL;
    for (int i = 0; i < 4; i++) {
        char *home = home_in_coordinator(k.c, shards[i]);
        if (!str_is(home, "r1")) {
            moved = shards[i];
        }
        shardline_string_free(home);
    }
    if (CHECK(moved != NULL, "one shard left r1 in the hand-off")) {
        OK(shardline_region_route_to_shard(k.r[0], k.now, moved, "e2", (const uint8_t *)"yo", 2));
        pump(&k);
        char *home = home_in_coordinator(k.c, moved);
        CHECK(str_is(home, "r2"), "shard %s now at %s", moved, home);
        shardline_string_free(home);
        CHECK(count_type(k.r_outs[1], "startShard", moved) == 1, "r2 started shard %s", moved);
        CHECK(count_type(k.r_outs[1], "deliver", moved) == 1, "the message was forwarded to r2");
        OK(shardline_region_home_of(k.r[0], moved, &home));
        CHECK(str_is(home, "r2"), "r1 knows the new home: %s", home);
        shardline_string_free(home);
    }

    /* Lease lost: the coordinator steps down and stops answering. */
    OK(coordinator_input(k.c, k.now, "{\"type\":\"leaseLost\",\"token\":1}"));
    pump(&k);
    CHECK(count_notice(k.c_outs, "steppedDown") == 1, "stepped down");
    bool active = true;
    OK(shardline_coordinator_is_active(k.c, &active));
    CHECK(!active, "inactive");

    for (int i = 0; i < k.n; i++) {
        shardline_region_free(k.r[i]);
        cJSON_Delete(k.r_outs[i]);
    }
    cJSON_Delete(k.r_outs[2]);
    cJSON_Delete(k.c_outs);
    shardline_coordinator_free(k.c);
    end();
}

static void test_step_errors(void) {
    begin("coordinator and region reject bad input, naming it");
    struct shardline_strategy *s = NULL;
    OK(shardline_strategy_new(LEAST_SHARD, &s));
    struct shardline_coordinator *c = NULL;
    EXPECT(shardline_coordinator_new(NULL, NODE(0), NULL, &c), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "strategy is NULL"), "%s", last_error());
    EXPECT(shardline_coordinator_new(s, NULL, NULL, &c), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_coordinator_new(s, NODE(0), NULL, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_coordinator_new(s, "no address", NULL, &c), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "self_address"), "%s", last_error());
    EXPECT(shardline_coordinator_new(s, BAD_UTF8, NULL, &c), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "self_address is not valid UTF-8"), "%s", last_error());
    EXPECT(shardline_coordinator_new(s, NODE(0), "{\"rebalanceIntervalMs\":\"soon\"}", &c),
           SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "config_json.rebalanceIntervalMs: invalid type"), "%s", last_error());
    EXPECT(shardline_coordinator_new(s, NODE(0), "{\"rebalanceInterval\":5}", &c), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "unknown field `rebalanceInterval`"), "%s", last_error());
    EXPECT(shardline_coordinator_new(s, NODE(0), "{\"handoffTimeoutMs\":0}", &c), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "handoffTimeoutMs"), "%s", last_error());
    CHECK(c == NULL, "out untouched by every failure");
    /* Every failure left the strategy the caller's: it still works, and is freed below. */
    OK(shardline_coordinator_new(s, NODE(0), "{}", &c));

    static const struct {
        const char *json;
        shardline_status want;
        const char *mentions;
    } bad[] = {
        {"{\"type\":", SHARDLINE_STATUS_INVALID_ARGUMENT, "input_json.type: EOF while parsing"},
        {"not json", SHARDLINE_STATUS_INVALID_ARGUMENT, "input_json: expected a JSON object"},
        {"{\"type\":\"leaseGrant\"}", SHARDLINE_STATUS_INVALID_ARGUMENT, "input_json.type: unknown variant `leaseGrant`"},
        {"{\"kind\":\"stop\"}", SHARDLINE_STATUS_INVALID_ARGUMENT, "unknown field `kind`"},
        {"{}", SHARDLINE_STATUS_INVALID_ARGUMENT, "input_json: missing field `type`"},
        {"{\"type\":\"leaseGranted\",\"token\":\"one\",\"validUntilMs\":1}", SHARDLINE_STATUS_INVALID_ARGUMENT,
         "input_json.token: invalid type: string \"one\""},
        {"{\"type\":\"leaseGranted\",\"token\":1}", SHARDLINE_STATUS_INVALID_ARGUMENT,
         "type \"leaseGranted\" needs field `validUntilMs`"},
        {"{\"type\":\"stop\",\"token\":1}", SHARDLINE_STATUS_INVALID_ARGUMENT,
         "field `token` does not belong to type \"stop\""},
        {"{\"type\":\"member\",\"member\":{\"address\":\"pekko://sys@h:1\",\"status\":\"Upp\"}}",
         SHARDLINE_STATUS_INVALID_ARGUMENT, "input_json.member.status: member status \"Upp\""},
        {"{\"type\":\"memberRemoved\",\"address\":\"://\"}", SHARDLINE_STATUS_INVALID_ARGUMENT, "input_json.address"},
        {"{\"type\":\"receive\",\"envelope\":{\"from\":{\"region\":\"r1\"},\"to\":\"coordinator\",\"message\":"
         "{\"comand\":{}}}}",
         SHARDLINE_STATUS_INVALID_ARGUMENT, "input_json.envelope.message: unknown variant `comand`"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        EXPECT(coordinator_input(c, 0, bad[i].json), bad[i].want);
        CHECK(contains(last_error(), bad[i].mentions), "%s: %s", bad[i].json, last_error());
    }
    EXPECT(coordinator_input(NULL, 0, "{\"type\":\"stop\"}"), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "coordinator is NULL"), "%s", last_error());
    EXPECT(coordinator_input(c, 0, NULL), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "input_json is NULL"), "%s", last_error());
    EXPECT(coordinator_input(c, 0, BAD_UTF8), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "input_json is not valid UTF-8"), "%s", last_error());
    const char *phase = NULL;
    OK(shardline_coordinator_phase(c, &phase));
    CHECK(str_is(phase, "idle"), "refused inputs changed nothing: %s", phase);
    char *json = (char *)"untouched";
    EXPECT(shardline_coordinator_poll_output(NULL, &json), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_coordinator_drain_outputs(c, NULL), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "out_json_array is NULL"), "%s", last_error());
    CHECK(str_is(json, "untouched"), "out untouched by failures");
    bool has = false;
    EXPECT(shardline_coordinator_next_deadline(c, &has, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_coordinator_token(c, NULL, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_coordinator_is_active(NULL, &has), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_coordinator_phase(c, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_coordinator_home_of(c, NULL, &json), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_coordinator_home_of(c, BAD_UTF8, &json), SHARDLINE_STATUS_INVALID_ARGUMENT);
    EXPECT(shardline_coordinator_start(NULL, 0), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_coordinator_on_timeout(NULL, 0), SHARDLINE_STATUS_NULL_POINTER);
    shardline_coordinator_free(c);

    struct shardline_region *r = NULL;
    EXPECT(shardline_region_new("", NODE(1), NULL, NULL, &r), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "region id is empty"), "%s", last_error());
    EXPECT(shardline_region_new(NULL, NODE(1), NULL, NULL, &r), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_region_new("r", "nowhere", NULL, NULL, &r), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "node"), "%s", last_error());
    EXPECT(shardline_region_new("r", NODE(1), "{\"kind\":\"modulo\"}", NULL, &r), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "extractor_json") && contains(last_error(), "modulo"), "%s", last_error());
    EXPECT(shardline_region_new("r", NODE(1), "{\"kind\":\"pekko\",\"numberOfShards\":0}", NULL, &r),
           SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "extractor_json: numberOfShards must be >= 1"), "%s", last_error());
    EXPECT(shardline_region_new("r", NODE(1), NULL, "{\"bufferCapacity\":-1}", &r), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "config_json.bufferCapacity"), "%s", last_error());
    EXPECT(shardline_region_new("r", NODE(1), NULL, "{\"bufferCapacity\":0}", &r), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "bufferCapacity"), "%s", last_error());
    CHECK(r == NULL, "out untouched by every failure");

    OK(shardline_region_new("r", NODE(1), NULL, "{\"bufferCapacity\":1}", &r));
    EXPECT(shardline_region_route(r, 0, "e", NULL, 0), SHARDLINE_STATUS_INVALID_STATE);
    CHECK(contains(last_error(), "without an extractor"), "%s", last_error());
    OK(shardline_region_route_to_shard(r, 0, "1", "e", NULL, 0));
    EXPECT(shardline_region_route_to_shard(r, 0, "1", "e", (const uint8_t *)"x", 1), SHARDLINE_STATUS_INVALID_STATE);
    CHECK(contains(last_error(), "buffer is full"), "%s", last_error());
    EXPECT(shardline_region_route_to_shard(r, 0, "1", "e", NULL, 3), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "payload is NULL"), "%s", last_error());
    EXPECT(shardline_region_handle(r, 0, "{\"type\":\"shardStopped\"}"), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "input_json: type \"shardStopped\" needs field `shard`"), "%s", last_error());
    EXPECT(shardline_region_handle(r, 0, "{\"type\":\"leaseLost\",\"token\":1}"), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "input_json.type: unknown variant `leaseLost`"), "%s", last_error());
    EXPECT(shardline_region_handle(r, 0, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_region_handle(r, 0, BAD_UTF8), SHARDLINE_STATUS_INVALID_ARGUMENT);
    EXPECT(shardline_region_handle(NULL, 0, "{\"type\":\"gracefulShutdown\"}"), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "region is NULL"), "%s", last_error());
    OK(shardline_region_handle(r, 0, "{\"type\":\"coordinatorChanged\"}"));
    OK(shardline_region_drain_outputs(r, &json));
    CHECK(contains(json, "\"register\""), "registers again: %s", json);
    shardline_string_free(json);
    EXPECT(shardline_region_next_deadline(r, NULL, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_region_is_registered(r, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_region_buffered(NULL, NULL), SHARDLINE_STATUS_NULL_POINTER);
    shardline_region_free(r);
    shardline_region_free(NULL);
    end();
}

/* A custom strategy that tries to call back into the coordinator running it. */
struct reentry {
    struct shardline_coordinator *c;
    shardline_status query;
    shardline_status handle;
    int frees;
};

static shardline_status reenter_allocate(void *userdata, const struct shardline_state *state, const char *requester,
                                         const char *shard, struct shardline_decision *out) {
    (void)state;
    (void)shard;
    struct reentry *r = userdata;
    bool active = false;
    r->query = shardline_coordinator_is_active(r->c, &active);
    r->handle = shardline_coordinator_handle(r->c, 0, "{\"type\":\"stop\"}");
    shardline_coordinator_free(r->c); /* refused while running: nothing happens */
    return requester != NULL ? shardline_decision_set_region(out, requester) : shardline_decision_set_pending(out);
}

static void reentry_free(void *userdata) { ((struct reentry *)userdata)->frees++; }

static void test_coordinator_custom_strategy(void) {
    begin("coordinator with a custom strategy: callbacks, re-entry, ownership");
    struct reentry re;
    memset(&re, 0, sizeof re);
    struct shardline_custom_strategy cs;
    memset(&cs, 0, sizeof cs);
    cs.struct_size = (uint32_t)sizeof cs;
    cs.userdata = &re;
    cs.allocate = reenter_allocate;
    cs.userdata_free = reentry_free;
    struct shardline_strategy *s = NULL;
    OK(shardline_strategy_new_custom(&cs, "reenter", &s));
    EXPECT(shardline_coordinator_new(s, "bad", NULL, &re.c), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(re.frees == 0, "a failed construction keeps the strategy the caller's");
    OK(shardline_coordinator_new(s, NODE(0), NULL, &re.c));
    OK(shardline_coordinator_start(re.c, 0));
    OK(coordinator_input(re.c, 0, "{\"type\":\"leaseGranted\",\"token\":5,\"validUntilMs\":9223372036854775808}"));
    OK(coordinator_input(re.c, 0, "{\"type\":\"stateLoaded\",\"state\":{\"snapshot\":null,\"events\":[]}}"));
    OK(coordinator_input(re.c, 0, "{\"type\":\"member\",\"member\":{\"address\":\"" NODE(1) "\"}}"));
    OK(coordinator_input(re.c, 0, "{\"type\":\"receive\",\"envelope\":{\"from\":{\"region\":\"rx\"},\"to\":"
                                   "\"coordinator\",\"message\":{\"command\":{\"type\":\"register\",\"node\":\"" NODE(1)
                                   "\"}}}}"));
    OK(coordinator_input(re.c, 0, "{\"type\":\"receive\",\"envelope\":{\"from\":{\"region\":\"rx\"},\"to\":"
                                   "\"coordinator\",\"message\":{\"command\":{\"type\":\"getShardHome\",\"shard\":\"9\"}}}}"));
    CHECK(re.query == SHARDLINE_STATUS_REENTRANT_CALL, "a query from the callback: %s", shardline_status_str(re.query));
    CHECK(re.handle == SHARDLINE_STATUS_REENTRANT_CALL, "an input from the callback: %s",
          shardline_status_str(re.handle));
    char *home = home_in_coordinator(re.c, "9");
    CHECK(str_is(home, "rx"), "the callback's answer was used: %s", home);
    shardline_string_free(home);
    bool active = false;
    OK(shardline_coordinator_is_active(re.c, &active));
    CHECK(active, "the refused stop from the callback did nothing");
    CHECK(re.frees == 0, "the strategy lives as long as the coordinator");
    shardline_coordinator_free(re.c);
    CHECK(re.frees == 1, "freeing the coordinator frees the strategy it took over");
    end();
}

/* ---- the typed step API: the step loop with no JSON ----------------------------------------- */

static int sv_is(struct shardline_str s, const char *want) {
    return s.data != NULL && s.len == strlen(want) && memcmp(s.data, want, s.len) == 0;
}

/* Whether `s` contains `needle` (for JSON documents such as notices, without parsing them). */
static int sv_contains(struct shardline_str s, const char *needle) {
    size_t n = strlen(needle);
    for (size_t i = 0; s.data != NULL && i + n <= s.len; i++) {
        if (memcmp(s.data + i, needle, n) == 0) {
            return 1;
        }
    }
    return 0;
}

static struct shardline_region_input r_input(shardline_region_input_kind kind) {
    struct shardline_region_input in;
    memset(&in, 0, sizeof in);
    in.struct_size = (uint32_t)sizeof in;
    in.kind = kind;
    return in;
}

static shardline_status feed_member(struct shardline_coordinator *c, const char *address, int32_t up_number) {
    struct shardline_coordinator_input in = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_MEMBER);
    in.address = S(address);
    in.up_number = up_number;
    return shardline_coordinator_feed(c, 0, &in);
}

/* A coordinator on 10.0.0.0 with least-shard, taken to active through typed inputs only. */
static struct shardline_coordinator *typed_coordinator(const char *config) {
    struct shardline_strategy *s = NULL;
    OK(shardline_strategy_new(LEAST_SHARD, &s));
    struct shardline_coordinator *c = NULL;
    if (!OK(shardline_coordinator_new(s, NODE(0), config, &c))) {
        shardline_strategy_free(s);
        return NULL;
    }
    const struct shardline_coordinator_output *o = NULL;
    OK(shardline_coordinator_start(c, 0));
    OK(shardline_coordinator_next_output(c, &o));
    CHECK(o != NULL && o->kind == SHARDLINE_COORDINATOR_OUTPUT_KIND_LEASE_ACQUIRE, "start asks for the lease");
    struct shardline_coordinator_input in = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_LEASE_GRANTED);
    in.token = 1;
    in.valid_until_ms = FAR_MS;
    OK(shardline_coordinator_feed(c, 0, &in));
    OK(shardline_coordinator_next_output(c, &o));
    CHECK(o != NULL && o->kind == SHARDLINE_COORDINATOR_OUTPUT_KIND_LOAD_STATE && o->token == 1,
          "a grant asks to load the state with token 1");
    in = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_STATE_LOADED);
    in.state_json = S("{\"snapshot\":null,\"events\":[]}");
    OK(shardline_coordinator_feed(c, 0, &in));
    int active = 0;
    while (OK(shardline_coordinator_next_output(c, &o)) && o != NULL) {
        active |= o->kind == SHARDLINE_COORDINATOR_OUTPUT_KIND_NOTICE && sv_contains(o->document, "\"active\"");
    }
    CHECK(active, "an active notice");
    return c;
}

static void test_typed_get_shard_home(void) {
    begin("typed step: GetShardHome -> HostShard, then exactly one ShardHome");
    struct shardline_coordinator *c = typed_coordinator(NULL);
    if (c == NULL) {
        end();
        return;
    }
    OK(feed_member(c, NODE(1), INT32_MAX));
    struct shardline_coordinator_input reg = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_RECEIVE);
    reg.envelope.from = S("r1");
    reg.envelope.kind = SHARDLINE_MESSAGE_KIND_REGISTER;
    reg.envelope.node = S(NODE(1));
    OK(shardline_coordinator_feed(c, 1, &reg));
    const struct shardline_coordinator_output *o = NULL;
    OK(shardline_coordinator_next_output(c, &o));
    CHECK(o != NULL && o->kind == SHARDLINE_COORDINATOR_OUTPUT_KIND_PERSIST && sv_contains(o->document, "r1"),
          "the registration is persisted first, as JSON");
    int acked = 0;
    while (OK(shardline_coordinator_next_output(c, &o)) && o != NULL) {
        acked |= o->kind == SHARDLINE_COORDINATOR_OUTPUT_KIND_SEND &&
                 o->envelope.kind == SHARDLINE_MESSAGE_KIND_REGISTER_ACK && o->envelope.token == 1 &&
                 sv_is(o->envelope.to, "r1") && o->envelope.from.len == 0;
    }
    CHECK(acked, "a RegisterAck with token 1 to r1 from the coordinator");

    struct shardline_coordinator_input ask = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_RECEIVE);
    ask.envelope.from = S("r1");
    ask.envelope.kind = SHARDLINE_MESSAGE_KIND_GET_SHARD_HOME;
    ask.envelope.shard = S("7");
    OK(shardline_coordinator_feed(c, 2, &ask));
    int hosted = 0;
    while (OK(shardline_coordinator_next_output(c, &o)) && o != NULL) {
        if (o->kind == SHARDLINE_COORDINATOR_OUTPUT_KIND_SEND && o->envelope.kind == SHARDLINE_MESSAGE_KIND_HOST_SHARD) {
            hosted++;
            CHECK(sv_is(o->envelope.shard, "7") && o->envelope.token == 1 && o->envelope.version == 1 &&
                      o->envelope.entities == NULL && o->envelope.entities_len == 0,
                  "HostShard 7 with stamp 1/1 and no entities");
        }
    }
    CHECK(hosted == 1, "one HostShard, got %d", hosted);

    /* The hot path: asked again, exactly one ShardHome, read without any JSON. */
    OK(shardline_coordinator_feed(c, 3, &ask));
    OK(shardline_coordinator_next_output(c, &o));
    if (CHECK(o != NULL && o->kind == SHARDLINE_COORDINATOR_OUTPUT_KIND_SEND, "a send")) {
        const struct shardline_envelope *e = &o->envelope;
        CHECK(e->kind == SHARDLINE_MESSAGE_KIND_SHARD_HOME && e->from.len == 0 && sv_is(e->to, "r1") &&
                  sv_is(e->shard, "7") && sv_is(e->region, "r1") && e->token == 1 && e->version == 1,
              "ShardHome 7 at r1, stamp 1/1: kind %u to %.*s", (unsigned)e->kind, (int)e->to.len, e->to.data);
        /* The view stays valid across other calls on the coordinator, until the next poll. */
        struct shardline_coordinator_input reach = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_REACHABILITY);
        reach.address = S(NODE(1));
        reach.reachable = true;
        OK(shardline_coordinator_feed(c, 3, &reach));
        CHECK(sv_is(e->shard, "7") && sv_is(e->region, "r1"), "the view outlives a feed");
        /* ... and may be fed straight back as an input (a ShardHome is no command, so the
         * coordinator ignores it, but reads it). */
        struct shardline_coordinator_input back = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_RECEIVE);
        back.envelope = *e;
        OK(shardline_coordinator_feed(c, 3, &back));
    }
    OK(shardline_coordinator_next_output(c, &o));
    CHECK(o == NULL, "nothing else queued");
    char *json = NULL;
    OK(shardline_coordinator_drain_outputs(c, &json));
    CHECK(str_is(json, "[]"), "the JSON form reads the same queue: %s", json);
    shardline_string_free(json);
    shardline_coordinator_free(c);
    end();
}

/* One coordinator and regions driven through the typed API; a send is fed to its addressee
 * straight from the view, so nothing is copied or parsed on the host side. */
struct typed_cluster {
    struct shardline_coordinator *c;
    struct shardline_region *r[2];
    const char *ids[2];
    int n;
    uint64_t now;
    int started[2];
    int delivered[2];
    int stopped[2];
    char last[2][64];
    int persisted;
    int handoff_started;
    int handoff_completed;
    int sent[SHARDLINE_MESSAGE_KIND_FORWARD + 1];
};

static void typed_deliver(struct typed_cluster *k, const struct shardline_envelope *e) {
    if (CHECK(e->kind >= 1 && e->kind <= SHARDLINE_MESSAGE_KIND_FORWARD, "message kind %u", (unsigned)e->kind)) {
        k->sent[e->kind]++;
    }
    if (e->to.len == 0) {
        struct shardline_coordinator_input in = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_RECEIVE);
        in.envelope = *e;
        OK(shardline_coordinator_feed(k->c, k->now, &in));
        return;
    }
    for (int i = 0; i < k->n; i++) {
        if (sv_is(e->to, k->ids[i])) {
            struct shardline_region_input in = r_input(SHARDLINE_REGION_INPUT_KIND_RECEIVE);
            in.envelope = *e;
            OK(shardline_region_feed(k->r[i], k->now, &in));
            return;
        }
    }
    CHECK(0, "a send to an unknown region %.*s", (int)e->to.len, e->to.data);
}

static void typed_pump(struct typed_cluster *k) {
    for (int round = 0; round < 100; round++) {
        int moved = 0;
        const struct shardline_coordinator_output *o = NULL;
        while (OK(shardline_coordinator_next_output(k->c, &o)) && o != NULL) {
            moved = 1;
            if (o->kind == SHARDLINE_COORDINATOR_OUTPUT_KIND_SEND) {
                typed_deliver(k, &o->envelope);
            } else if (o->kind == SHARDLINE_COORDINATOR_OUTPUT_KIND_PERSIST) {
                k->persisted++;
            } else if (o->kind == SHARDLINE_COORDINATOR_OUTPUT_KIND_NOTICE) {
                k->handoff_started += sv_contains(o->document, "\"handOffStarted\"");
                k->handoff_completed += sv_contains(o->document, "\"handOffCompleted\"");
            }
        }
        for (int i = 0; i < k->n; i++) {
            const struct shardline_region_output *ro = NULL;
            while (OK(shardline_region_next_output(k->r[i], &ro)) && ro != NULL) {
                moved = 1;
                switch (ro->kind) {
                case SHARDLINE_REGION_OUTPUT_KIND_SEND:
                    typed_deliver(k, &ro->envelope);
                    break;
                case SHARDLINE_REGION_OUTPUT_KIND_START_SHARD:
                    k->started[i]++;
                    break;
                case SHARDLINE_REGION_OUTPUT_KIND_DELIVER:
                    k->delivered[i]++;
                    snprintf(k->last[i], sizeof k->last[i], "%.*s/%.*s=%.*s", (int)ro->shard.len, ro->shard.data,
                             (int)ro->entity.len, ro->entity.data, (int)ro->payload.len, (const char *)ro->payload.data);
                    break;
                case SHARDLINE_REGION_OUTPUT_KIND_STOP_SHARD: {
                    /* The host stops the entities at once; the shard id comes straight from the view. */
                    struct shardline_region_input in = r_input(SHARDLINE_REGION_INPUT_KIND_SHARD_STOPPED);
                    in.shard = ro->shard;
                    OK(shardline_region_feed(k->r[i], k->now, &in));
                    k->stopped[i]++;
                    break;
                }
                default:
                    break;
                }
            }
        }
        if (!moved) {
            return;
        }
    }
    CHECK(0, "the network never went quiet");
}

static void test_typed_cluster_handoff(void) {
    begin("typed step: coordinator + two regions, hosting, routing, a rebalance hand-off");
    struct typed_cluster k;
    memset(&k, 0, sizeof k);
    k.c = typed_coordinator("{\"rebalanceIntervalMs\":1000}");
    if (k.c == NULL) {
        end();
        return;
    }
    OK(feed_member(k.c, NODE(1), 1));
    OK(feed_member(k.c, NODE(2), 2));
    k.ids[0] = "r1";
    k.r[0] = new_region("r1", NODE(1));
    k.n = 1;
    OK(shardline_region_start(k.r[0], 0));
    typed_pump(&k);
    bool registered = false;
    OK(shardline_region_is_registered(k.r[0], &registered));
    CHECK(registered, "r1 registered");

    const char *shards[] = {"1", "2", "3", "4"};
    for (int i = 0; i < 4; i++) {
        OK(shardline_region_route_to_shard(k.r[0], 0, shards[i], "e", (const uint8_t *)"hi", 2));
    }
    typed_pump(&k);
    CHECK(k.started[0] == 4 && k.delivered[0] == 4, "r1 started %d shards, delivered %d", k.started[0],
          k.delivered[0]);
    CHECK(str_is(k.last[0], "4/e=hi"), "payload as pointer and length: %s", k.last[0]);
    CHECK(k.sent[SHARDLINE_MESSAGE_KIND_GET_SHARD_HOME] == 4 && k.sent[SHARDLINE_MESSAGE_KIND_HOST_SHARD] == 4 &&
              k.sent[SHARDLINE_MESSAGE_KIND_SHARD_STARTED] == 4,
          "4 GetShardHome, HostShard and ShardStarted each");
    CHECK(k.persisted >= 5, "the registration and allocations were persisted: %d", k.persisted);

    k.ids[1] = "r2";
    k.r[1] = new_region("r2", NODE(2));
    k.n = 2;
    OK(shardline_region_start(k.r[1], 0));
    typed_pump(&k);
    OK(shardline_region_is_registered(k.r[1], &registered));
    CHECK(registered, "r2 registered");
    for (uint64_t t = 1000; t <= 5000 && k.handoff_completed == 0; t += 1000) {
        k.now = t;
        OK(shardline_coordinator_on_timeout(k.c, t));
        for (int i = 0; i < k.n; i++) {
            OK(shardline_region_on_timeout(k.r[i], t));
        }
        typed_pump(&k);
    }
    CHECK(k.handoff_started >= 1 && k.handoff_completed >= 1, "a hand-off started (%d) and completed (%d)",
          k.handoff_started, k.handoff_completed);
    CHECK(k.sent[SHARDLINE_MESSAGE_KIND_BEGIN_HAND_OFF] >= 1 && k.sent[SHARDLINE_MESSAGE_KIND_BEGIN_HAND_OFF_ACK] >= 1 &&
              k.sent[SHARDLINE_MESSAGE_KIND_HAND_OFF] >= 1 && k.sent[SHARDLINE_MESSAGE_KIND_SHARD_STOPPED] >= 1,
          "the hand-off protocol ran over typed envelopes");
    CHECK(k.stopped[0] >= 1, "r1 stopped the shard it handed off");

    const char *moved = NULL;
    for (int i = 0; i < 4; i++) {
        char *home = home_in_coordinator(k.c, shards[i]);
        if (str_is(home, "r2")) {
            moved = shards[i];
        }
        shardline_string_free(home);
    }
    if (CHECK(moved != NULL, "one shard moved to r2")) {
        OK(shardline_region_route_to_shard(k.r[0], k.now, moved, "e2", (const uint8_t *)"yo", 2));
        typed_pump(&k);
        CHECK(k.sent[SHARDLINE_MESSAGE_KIND_FORWARD] == 1, "r1 forwarded the message to r2");
        char want[64];
        snprintf(want, sizeof want, "%s/e2=yo", moved);
        CHECK(k.delivered[1] == 1 && str_is(k.last[1], want), "r2 delivered %s", k.last[1]);
    }
    for (int i = 0; i < k.n; i++) {
        shardline_region_free(k.r[i]);
    }
    shardline_coordinator_free(k.c);
    end();
}

static void test_typed_errors(void) {
    begin("typed step: bad inputs give clear errors and change nothing");
    struct shardline_coordinator *c = typed_coordinator(NULL);
    if (c == NULL) {
        end();
        return;
    }
    struct shardline_coordinator_input in = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_STOP);
    EXPECT(shardline_coordinator_feed(c, 0, NULL), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "input is NULL"), "%s", last_error());
    EXPECT(shardline_coordinator_feed(NULL, 0, &in), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "coordinator is NULL"), "%s", last_error());
    in.struct_size = 4;
    EXPECT(shardline_coordinator_feed(c, 0, &in), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "input->struct_size is 4, expected at least") &&
              contains(last_error(), "sizeof(struct shardline_coordinator_input)"),
          "%s", last_error());
    in = c_input((shardline_coordinator_input_kind)0);
    EXPECT(shardline_coordinator_feed(c, 0, &in), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "input->kind is 0, which is no shardline_coordinator_input_kind"), "%s",
          last_error());
    in = c_input((shardline_coordinator_input_kind)99);
    EXPECT(shardline_coordinator_feed(c, 0, &in), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "input->kind is 99"), "%s", last_error());

    in = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_RECEIVE);
    in.envelope.from = S("r1");
    EXPECT(shardline_coordinator_feed(c, 0, &in), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "input->envelope.kind is 0, which is no shardline_message_kind"), "%s", last_error());
    in.envelope.kind = SHARDLINE_MESSAGE_KIND_GET_SHARD_HOME;
    in.envelope.shard = S(BAD_UTF8);
    EXPECT(shardline_coordinator_feed(c, 0, &in), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "input->envelope.shard is not valid UTF-8 (invalid byte at offset 3)"), "%s",
          last_error());
    in.envelope.shard.data = NULL;
    EXPECT(shardline_coordinator_feed(c, 0, &in), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "input->envelope.shard.data is NULL"), "%s", last_error());
    in.envelope.shard = S("7");
    in.envelope.from = S(BAD_UTF8);
    EXPECT(shardline_coordinator_feed(c, 0, &in), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "input->envelope.from is not valid UTF-8"), "%s", last_error());

    in = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_MEMBER);
    in.address = S("no address");
    EXPECT(shardline_coordinator_feed(c, 0, &in), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "input->address"), "%s", last_error());
    in.address = S(NODE(1));
    in.status = S("Upp");
    EXPECT(shardline_coordinator_feed(c, 0, &in), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "input->status") && contains(last_error(), "Upp"), "%s", last_error());
    in = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_STATE_LOADED);
    in.state_json = S("{\"snapshot\":null}");
    EXPECT(shardline_coordinator_feed(c, 0, &in), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "input->state_json: missing field `events`"), "%s", last_error());

    const struct shardline_coordinator_output *o = (const struct shardline_coordinator_output *)&in;
    EXPECT(shardline_coordinator_next_output(c, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_coordinator_next_output(NULL, &o), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(o == (const struct shardline_coordinator_output *)&in, "out untouched by failures");
    OK(shardline_coordinator_next_output(c, &o));
    CHECK(o == NULL, "refused inputs queued nothing");
    bool active = false;
    OK(shardline_coordinator_is_active(c, &active));
    CHECK(active, "and changed nothing");
    shardline_coordinator_free(c);

    struct shardline_region *r = NULL;
    OK(shardline_region_new("r", NODE(1), NULL, NULL, &r));
    struct shardline_region_input ri = r_input((shardline_region_input_kind)7);
    EXPECT(shardline_region_feed(r, 0, &ri), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "input->kind is 7, which is no shardline_region_input_kind (1 to 6)"), "%s",
          last_error());
    ri = r_input(SHARDLINE_REGION_INPUT_KIND_SHARD_STOPPED);
    ri.struct_size = (uint32_t)sizeof ri - 1;
    EXPECT(shardline_region_feed(r, 0, &ri), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "input->struct_size"), "%s", last_error());
    ri = r_input(SHARDLINE_REGION_INPUT_KIND_ENTITY_PASSIVATED);
    ri.shard = S("1");
    ri.entity = S(BAD_UTF8);
    EXPECT(shardline_region_feed(r, 0, &ri), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "input->entity is not valid UTF-8"), "%s", last_error());
    ri = r_input(SHARDLINE_REGION_INPUT_KIND_RECEIVE);
    ri.envelope.kind = SHARDLINE_MESSAGE_KIND_HOST_SHARD;
    ri.envelope.shard = S("1");
    ri.envelope.entities_len = 2;
    EXPECT(shardline_region_feed(r, 0, &ri), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "input->envelope.entities is NULL"), "%s", last_error());
    struct shardline_str bad[] = {S("a"), S(BAD_UTF8)};
    ri.envelope.entities = bad;
    EXPECT(shardline_region_feed(r, 0, &ri), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "input->envelope.entities[1] is not valid UTF-8"), "%s", last_error());
    EXPECT(shardline_region_feed(r, 0, NULL), SHARDLINE_STATUS_NULL_POINTER);
    const struct shardline_region_output *ro = NULL;
    OK(shardline_region_next_output(r, &ro));
    CHECK(ro == NULL, "nothing queued by refused inputs");
    EXPECT(shardline_region_next_output(NULL, &ro), SHARDLINE_STATUS_NULL_POINTER);
    shardline_region_free(r);
    end();
}

/* ---- the drivers through C callbacks -------------------------------------------------------- */

/* An owned copy of an envelope, for a transport that queues (the view lives only during send). */
struct env_copy {
    struct shardline_envelope env;
    char *text[6];
    uint8_t *payload;
    struct shardline_str *entities;
    struct shardline_shard_home *homes;
};

static struct shardline_str dup_text(struct shardline_str s, char **keep) {
    char *p = malloc(s.len + 1);
    memcpy(p, s.data, s.len);
    p[s.len] = '\0';
    *keep = p;
    struct shardline_str r = {p, s.len};
    return r;
}

static void env_copy_make(struct env_copy *c, const struct shardline_envelope *e) {
    memset(c, 0, sizeof *c);
    c->env = *e;
    c->env.from = dup_text(e->from, &c->text[0]);
    c->env.to = dup_text(e->to, &c->text[1]);
    c->env.shard = dup_text(e->shard, &c->text[2]);
    c->env.entity = dup_text(e->entity, &c->text[3]);
    c->env.region = dup_text(e->region, &c->text[4]);
    c->env.node = dup_text(e->node, &c->text[5]);
    c->payload = malloc(e->payload.len + 1);
    memcpy(c->payload, e->payload.data, e->payload.len);
    c->env.payload.data = c->payload;
    /* Lists: entity ids of a HostShard and the homes of a ShardHomes point into the original
     * only during send; these tests remember no entities and register before any allocation,
     * so both are empty. */
    CHECK(e->entities_len == 0 && e->homes_len == 0, "no lists in these tests");
    c->env.entities = NULL;
    c->env.homes = NULL;
}

static void env_copy_free(struct env_copy *c) {
    for (int i = 0; i < 6; i++) {
        free(c->text[i]);
    }
    free(c->payload);
}

struct world {
    uint64_t now;
    /* the lease backend */
    uint64_t lease_token;
    int lease_held;
    /* the store */
    char *events[256];
    int n_events;
    uint64_t highest;
    char loaded[65536];
    /* the network */
    struct env_copy wire[256];
    int head, tail;
    /* the drivers, and what their hosts saw */
    struct shardline_coordinator_driver *cd;
    struct shardline_region_driver *rd[2];
    const char *ids[2];
    int notices;
    int frees;
};

struct region_host {
    struct world *w;
    int i;
    int started;
    int delivered;
    char last[64];
    int fail_deliver;
    shardline_status reentry;
};

static uint64_t w_now(void *ud) { return ((struct world *)ud)->now; }

static shardline_status w_send(void *ud, const struct shardline_envelope *e) {
    struct world *w = ud;
    if (w->tail == 256) {
        return SHARDLINE_STATUS_INTERNAL;
    }
    env_copy_make(&w->wire[w->tail++], e);
    return SHARDLINE_STATUS_OK;
}

static shardline_status w_lease_acquire(void *ud, uint64_t now, bool *granted, uint64_t *token, uint64_t *until) {
    struct world *w = ud;
    *granted = !w->lease_held;
    if (*granted) {
        w->lease_held = 1;
        *token = ++w->lease_token;
        *until = now + 60000;
    }
    return SHARDLINE_STATUS_OK;
}

static shardline_status w_lease_renew(void *ud, uint64_t token, uint64_t now, bool *renewed, uint64_t *until) {
    struct world *w = ud;
    *renewed = w->lease_held && token == w->lease_token;
    *until = now + 60000;
    return SHARDLINE_STATUS_OK;
}

static shardline_status w_lease_release(void *ud, uint64_t token) {
    struct world *w = ud;
    if (token == w->lease_token) {
        w->lease_held = 0;
    }
    return SHARDLINE_STATUS_OK;
}

static shardline_status w_append(void *ud, uint64_t token, struct shardline_str doc, bool *fenced, uint64_t *highest) {
    struct world *w = ud;
    *fenced = token < w->highest;
    *highest = w->highest;
    if (!*fenced && w->n_events < 256) {
        char *keep = NULL;
        dup_text(doc, &keep);
        w->events[w->n_events++] = keep;
    }
    return SHARDLINE_STATUS_OK;
}

static shardline_status w_snapshot(void *ud, uint64_t token, struct shardline_str doc, bool *fenced,
                                   uint64_t *highest) {
    (void)doc;
    struct world *w = ud;
    *fenced = token < w->highest;
    *highest = w->highest;
    return SHARDLINE_STATUS_OK; /* not reached in these tests: no snapshot is due */
}

static shardline_status w_load(void *ud, uint64_t token, bool *fenced, struct shardline_str *state) {
    struct world *w = ud;
    *fenced = token < w->highest;
    if (!*fenced) {
        w->highest = token;
        size_t n = (size_t)snprintf(w->loaded, sizeof w->loaded, "{\"snapshot\":null,\"events\":[");
        for (int i = 0; i < w->n_events; i++) {
            n += (size_t)snprintf(w->loaded + n, sizeof w->loaded - n, "%s%s", i ? "," : "", w->events[i]);
        }
        n += (size_t)snprintf(w->loaded + n, sizeof w->loaded - n, "]}");
        state->data = w->loaded;
        state->len = n;
    }
    return SHARDLINE_STATUS_OK;
}

static void w_notice(void *ud, struct shardline_str json) {
    struct world *w = ud;
    w->notices += json.len > 0 && json.data[0] == '{';
}

static void w_free(void *ud) { ((struct world *)ud)->frees++; }

static shardline_status h_start(void *ud, struct shardline_str shard, const struct shardline_str *entities, size_t n) {
    (void)shard;
    (void)entities;
    (void)n;
    ((struct region_host *)ud)->started++;
    return SHARDLINE_STATUS_OK;
}

static shardline_status h_deliver(void *ud, struct shardline_str shard, struct shardline_str entity,
                                  struct shardline_bytes payload) {
    struct region_host *h = ud;
    /* Calling back into the driver running this callback is refused. */
    h->reentry = shardline_region_driver_route_to_shard(h->w->rd[h->i], "1", "e", NULL, 0);
    if (h->fail_deliver) {
        return SHARDLINE_STATUS_INTERNAL;
    }
    h->delivered++;
    snprintf(h->last, sizeof h->last, "%.*s/%.*s=%.*s", (int)shard.len, shard.data, (int)entity.len, entity.data,
             (int)payload.len, (const char *)payload.data);
    return SHARDLINE_STATUS_OK;
}

static shardline_status h_stop(void *ud, struct shardline_str shard, bool *stopped) {
    (void)ud;
    (void)shard;
    *stopped = true;
    return SHARDLINE_STATUS_OK;
}

static void h_free(void *ud) { ((struct region_host *)ud)->w->frees++; }

/* Delivers everything on the wire to the drivers it is addressed to. */
static void w_pump(struct world *w) {
    while (w->head < w->tail) {
        struct env_copy *c = &w->wire[w->head++];
        if (c->env.to.len == 0) {
            struct shardline_coordinator_input in = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_RECEIVE);
            in.envelope = c->env;
            OK(shardline_coordinator_driver_feed(w->cd, &in));
        } else {
            for (int i = 0; i < 2; i++) {
                if (sv_is(c->env.to, w->ids[i])) {
                    struct shardline_region_input in = r_input(SHARDLINE_REGION_INPUT_KIND_RECEIVE);
                    in.envelope = c->env;
                    OK(shardline_region_driver_feed(w->rd[i], &in));
                }
            }
        }
        env_copy_free(c);
    }
    w->head = w->tail = 0;
}

static struct shardline_coordinator_callbacks coordinator_callbacks(struct world *w) {
    struct shardline_coordinator_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.struct_size = (uint32_t)sizeof cb;
    cb.userdata = w;
    cb.now_ms = w_now;
    cb.send = w_send;
    cb.lease_acquire = w_lease_acquire;
    cb.lease_renew = w_lease_renew;
    cb.lease_release = w_lease_release;
    cb.store_append = w_append;
    cb.store_save_snapshot = w_snapshot;
    cb.store_load = w_load;
    cb.notice = w_notice;
    cb.userdata_free = w_free;
    return cb;
}

/* The region callbacks reach the world (clock, wire) through their own userdata. */
static uint64_t h_now(void *ud) { return ((struct region_host *)ud)->w->now; }

static shardline_status h_send(void *ud, const struct shardline_envelope *e) {
    return w_send(((struct region_host *)ud)->w, e);
}

static struct shardline_region_callbacks region_callbacks(struct region_host *h) {
    struct shardline_region_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.struct_size = (uint32_t)sizeof cb;
    cb.userdata = h;
    cb.now_ms = h_now;
    cb.send = h_send;
    cb.start_shard = h_start;
    cb.deliver = h_deliver;
    cb.stop_shard = h_stop;
    cb.userdata_free = h_free;
    return cb;
}

static void test_drivers(void) {
    begin("drivers through C callbacks: lease, store, transport, entity host, errors, re-entry");
    static struct world w; /* large: kept off the stack */
    memset(&w, 0, sizeof w);
    w.now = 1000;
    w.ids[0] = "r1";
    w.ids[1] = "r2";
    struct region_host hosts[2];
    memset(hosts, 0, sizeof hosts);

    struct shardline_strategy *s = NULL;
    OK(shardline_strategy_new(LEAST_SHARD, &s));
    struct shardline_coordinator *c = NULL;
    OK(shardline_coordinator_new(s, NODE(0), NULL, &c));
    struct shardline_coordinator_callbacks ccb = coordinator_callbacks(&w);
    OK(shardline_coordinator_driver_new(c, &ccb, &w.cd)); /* takes `c` over */
    OK(shardline_coordinator_driver_start(w.cd));
    bool active = false;
    OK(shardline_coordinator_driver_is_active(w.cd, &active));
    CHECK(active && w.lease_held && w.lease_token == 1, "active: the lease was taken through the callbacks");
    CHECK(w.highest == 1, "the state was loaded with token 1");
    CHECK(w.notices >= 1, "the active notice reached the notice callback");
    struct shardline_coordinator_input in = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_MEMBER);
    for (int i = 1; i <= 2; i++) {
        char node[64];
        snprintf(node, sizeof node, "pekko://sys@10.0.0.%d:2552", i);
        in.address = S(node);
        in.up_number = i;
        OK(shardline_coordinator_driver_feed(w.cd, &in));
    }

    for (int i = 0; i < 2; i++) {
        hosts[i].w = &w;
        hosts[i].i = i;
        struct shardline_region *r = new_region(w.ids[i], i == 0 ? NODE(1) : NODE(2));
        struct shardline_region_callbacks rcb = region_callbacks(&hosts[i]);
        OK(shardline_region_driver_new(r, &rcb, &w.rd[i]));
        OK(shardline_region_driver_start(w.rd[i]));
    }
    w_pump(&w);
    for (int i = 0; i < 2; i++) {
        bool registered = false;
        OK(shardline_region_driver_is_registered(w.rd[i], &registered));
        CHECK(registered, "%s registered", w.ids[i]);
    }

    /* A message routed from r2 waits for the home, which the coordinator allocates and
     * persists through the store callback; the host of that region gets it. */
    int events_before = w.n_events;
    OK(shardline_region_driver_route_to_shard(w.rd[1], "5", "x1", (const uint8_t *)"hello", 5));
    w_pump(&w);
    char *home = NULL;
    OK(shardline_coordinator_driver_home_of(w.cd, "5", &home));
    int at = str_is(home, "r1") ? 0 : str_is(home, "r2") ? 1 : -1;
    shardline_string_free(home);
    if (CHECK(at >= 0, "shard 5 allocated")) {
        CHECK(hosts[at].started == 1 && hosts[at].delivered == 1 && str_is(hosts[at].last, "5/x1=hello"),
              "%s started shard 5 and delivered: %s", w.ids[at], hosts[at].last);
        CHECK(hosts[1 - at].delivered == 0, "only there");
        CHECK(hosts[at].reentry == SHARDLINE_STATUS_REENTRANT_CALL, "a callback calling its own driver: %s",
              shardline_status_str(hosts[at].reentry));
        CHECK(w.n_events > events_before, "the allocation went through store_append");

        /* The extractor routes too, from the region that hosts nothing yet or the one that
         * does. */
        OK(shardline_region_driver_route(w.rd[at], "x2", (const uint8_t *)"a", 1));
        w_pump(&w);

        /* A failing callback: the call reports it by name, after carrying out the rest. */
        hosts[at].fail_deliver = 1;
        EXPECT(shardline_region_driver_route_to_shard(w.rd[at], "5", "x3", (const uint8_t *)"b", 1),
               SHARDLINE_STATUS_CALLBACK_FAILED);
        CHECK(str_is(last_error(),
                     "the deliver callback of the region driver returned SHARDLINE_STATUS_INTERNAL"),
              "%s", last_error());
        hosts[at].fail_deliver = 0;
    }

    /* Timers run at the callback clock's time; lease and store results are not fed. */
    bool has = false;
    uint64_t deadline = 0;
    OK(shardline_coordinator_driver_poll(w.cd, &has, &deadline));
    CHECK(has && deadline > w.now, "a next deadline: %llu", (unsigned long long)deadline);
    w.now = deadline;
    OK(shardline_coordinator_driver_poll(w.cd, &has, &deadline));
    OK(shardline_coordinator_driver_is_active(w.cd, &active));
    CHECK(active, "still active after renewing through lease_renew");
    OK(shardline_region_driver_poll(w.rd[0], &has, &deadline));
    struct shardline_coordinator_input grant = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_LEASE_GRANTED);
    EXPECT(shardline_coordinator_driver_feed(w.cd, &grant), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "through its callbacks"), "%s", last_error());

    /* Stopping releases the lease through lease_release. */
    struct shardline_coordinator_input stop = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_STOP);
    OK(shardline_coordinator_driver_feed(w.cd, &stop));
    CHECK(!w.lease_held, "the lease was released");
    w_pump(&w);

    shardline_coordinator_driver_free(w.cd);
    shardline_region_driver_free(w.rd[0]);
    shardline_region_driver_free(w.rd[1]);
    shardline_region_driver_free(NULL);
    shardline_coordinator_driver_free(NULL);
    CHECK(w.frees == 3, "userdata_free once per driver: %d", w.frees);
    for (int i = 0; i < w.n_events; i++) {
        free(w.events[i]);
    }
    end();
}

static void test_driver_errors(void) {
    begin("drivers: bad callbacks give clear errors and leave the machine the caller's");
    static struct world w; /* large: kept off the stack */
    memset(&w, 0, sizeof w);
    struct shardline_strategy *s = NULL;
    OK(shardline_strategy_new(LEAST_SHARD, &s));
    struct shardline_coordinator *c = NULL;
    OK(shardline_coordinator_new(s, NODE(0), NULL, &c));
    struct shardline_coordinator_driver *d = NULL;
    struct shardline_coordinator_callbacks cb = coordinator_callbacks(&w);
    EXPECT(shardline_coordinator_driver_new(c, NULL, &d), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "callbacks is NULL"), "%s", last_error());
    EXPECT(shardline_coordinator_driver_new(NULL, &cb, &d), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "coordinator is NULL"), "%s", last_error());
    EXPECT(shardline_coordinator_driver_new(c, &cb, NULL), SHARDLINE_STATUS_NULL_POINTER);
    cb.struct_size = 8;
    EXPECT(shardline_coordinator_driver_new(c, &cb, &d), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "callbacks->struct_size is 8") &&
              contains(last_error(), "sizeof(struct shardline_coordinator_callbacks)"),
          "%s", last_error());
    cb = coordinator_callbacks(&w);
    cb.store_load = NULL;
    EXPECT(shardline_coordinator_driver_new(c, &cb, &d), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(str_is(last_error(), "callbacks->store_load is NULL (it is required)"), "%s", last_error());
    CHECK(d == NULL && w.frees == 0, "nothing made, userdata untouched");
    /* Every failure left the coordinator the caller's: it still works. */
    OK(shardline_coordinator_start(c, 0));
    shardline_coordinator_free(c);

    struct shardline_region *r = NULL;
    OK(shardline_region_new("r", NODE(1), NULL, NULL, &r));
    struct region_host h;
    memset(&h, 0, sizeof h);
    h.w = &w;
    struct shardline_region_callbacks rcb = region_callbacks(&h);
    rcb.deliver = NULL;
    struct shardline_region_driver *rd = NULL;
    EXPECT(shardline_region_driver_new(r, &rcb, &rd), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(str_is(last_error(), "callbacks->deliver is NULL (it is required)"), "%s", last_error());
    rcb = region_callbacks(&h);
    OK(shardline_region_driver_new(r, &rcb, &rd)); /* takes `r` over */
    EXPECT(shardline_region_driver_route(rd, "e", NULL, 0), SHARDLINE_STATUS_INVALID_STATE);
    CHECK(contains(last_error(), "without an extractor"), "%s", last_error());
    struct shardline_region_input ri = r_input((shardline_region_input_kind)0);
    EXPECT(shardline_region_driver_feed(rd, &ri), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "input->kind is 0"), "%s", last_error());
    EXPECT(shardline_region_driver_start(NULL), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "driver is NULL"), "%s", last_error());
    bool has = false;
    EXPECT(shardline_region_driver_poll(rd, &has, NULL), SHARDLINE_STATUS_NULL_POINTER);
    shardline_region_driver_free(rd);
    CHECK(w.frees == 1, "userdata_free once: %d", w.frees);
    for (int i = 0; i < w.tail; i++) {
        env_copy_free(&w.wire[i]);
    }
    end();
}

/* ---- (f) recorded traces through shardline_replay -------------------------------------------- */

/* Replays a trace; returns the parsed result, or NULL (with the case failed) on an error. */
static cJSON *replay_text(const char *text) {
    char *out = NULL;
    cJSON *got = NULL;
    if (OK(shardline_replay(text, &out))) {
        got = cJSON_Parse(out);
        CHECK(got != NULL, "output is not JSON: %s", out);
    }
    shardline_string_free(out);
    return got;
}

static double number_field(const cJSON *obj, const char *key) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(item) ? item->valuedouble : -1;
}

static void replay_trace(const char *dir, const char *name) {
    char *text = read_file(dir, name);
    begin("replay trace %s", name);
    cJSON *got = replay_text(text);
    if (got != NULL) {
        CHECK(number_field(got, "mismatches") == 0, "%g mismatches in %s",
              number_field(got, "mismatches"), name);
        CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(got, "first")), "first is null");
        CHECK(number_field(got, "steps") > 100, "a trace of many steps");
    }
    cJSON_Delete(got);
    end();

    /* One output more in the first step that has any: the machine will not produce it. */
    begin("replay trace %s with a changed output", name);
    const char *at = strstr(text, "\"outputs\":[{");
    if (CHECK(at != NULL, "a step with outputs")) {
        size_t head = (size_t)(at - text) + strlen("\"outputs\":[");
        const char *extra = "{\"type\":\"stopped\"},";
        char *bad = malloc(strlen(text) + strlen(extra) + 1);
        memcpy(bad, text, head);
        strcpy(bad + head, extra);
        strcat(bad, text + head);
        got = replay_text(bad);
        if (got != NULL) {
            CHECK(number_field(got, "mismatches") == 1, "one mismatch");
            const cJSON *first = cJSON_GetObjectItemCaseSensitive(got, "first");
            CHECK(number_field(first, "step") >= 1, "first names the step");
            CHECK(!cJSON_Compare(cJSON_GetObjectItemCaseSensitive(first, "expected"),
                                 cJSON_GetObjectItemCaseSensitive(first, "actual"), 1),
                  "expected and actual differ");
        }
        cJSON_Delete(got);
        free(bad);
    }
    end();
    free(text);
}

static void replay_traces(const char *dir) {
    DIR *d = opendir(dir);
    if (d == NULL) {
        fprintf(stderr, "cannot open %s\n", dir);
        exit(2);
    }
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 6 && strcmp(e->d_name + len - 6, ".jsonl") == 0) {
            replay_trace(dir, e->d_name);
            n++;
        }
    }
    closedir(d);
    begin("traces found");
    CHECK(n >= 4, "only %d traces in %s", n, dir);
    end();

    begin("replay errors");
    char *out = NULL;
    EXPECT(shardline_replay("not json", &out), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "line 1: not valid JSON"), "message: %s", last_error());
    CHECK(out == NULL, "no output on failure");
    EXPECT(shardline_replay("{\"format\":\"shardline-trace\",\"version\":2}", &out),
           SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "field version"), "message: %s", last_error());
    EXPECT(shardline_replay(NULL, &out), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_replay("", NULL), SHARDLINE_STATUS_NULL_POINTER);
    end();
}

/* ---- sharing handles between threads --------------------------------------------------------- */

static void pause_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

struct adder {
    struct shardline_state *st;
    int index;
    int failures;
};

static void *add_shards(void *arg) {
    struct adder *a = arg;
    for (int j = 0; j < 50; j++) {
        char shard[32];
        snprintf(shard, sizeof shard, "t%d-%d", a->index, j);
        a->failures += shardline_state_add_shard(a->st, "r2", shard) != SHARDLINE_STATUS_OK;
    }
    return NULL;
}

/* A strategy whose decision stays in its callback until the main thread is about to call. */
struct slow {
    atomic_int inside;
    atomic_int main_calling;
    atomic_int done;
};

static shardline_status slow_allocate(void *userdata, const struct shardline_state *state, const char *requester,
                                      const char *shard, struct shardline_decision *out) {
    (void)state, (void)requester, (void)shard;
    struct slow *w = userdata;
    atomic_store(&w->inside, 1);
    while (!atomic_load(&w->main_calling)) {
        pause_ms(1);
    }
    /* Gives the main thread's call time to reach the handle while this call still holds it. */
    pause_ms(50);
    atomic_store(&w->done, 1);
    return shardline_decision_set_region(out, "r2");
}

static shardline_status slow_rebalance(void *userdata, const struct shardline_state *state,
                                       const char *const *in_progress, size_t n, struct shardline_decision *out) {
    (void)userdata, (void)state, (void)in_progress, (void)n, (void)out;
    return SHARDLINE_STATUS_OK;
}

struct slow_call {
    struct shardline_strategy *s;
    struct shardline_state *st;
    shardline_status rc;
};

static void *allocate_slowly(void *arg) {
    struct slow_call *c = arg;
    char *region = NULL;
    bool pending = true;
    c->rc = shardline_allocate(c->s, c->st, NULL, "s9", &region, &pending, NULL);
    shardline_string_free(region);
    return NULL;
}

static void test_threads(void) {
    begin("threads: concurrent calls on one state are serialised");
    struct shardline_state *st = small_state();
    pthread_t t[4];
    struct adder a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (struct adder){st, i, 0};
        CHECK(pthread_create(&t[i], NULL, add_shards, &a[i]) == 0, "thread %d started", i);
    }
    int failures = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        failures += a[i].failures;
    }
    size_t count = 0;
    OK(shardline_state_region_shard_count(st, 1, &count));
    CHECK(failures == 0 && count == 200, "%d failures, r2 holds %zu shards (want 200)", failures, count);
    end();

    begin("threads: another thread waits for a call in progress");
    struct slow w;
    atomic_init(&w.inside, 0);
    atomic_init(&w.main_calling, 0);
    atomic_init(&w.done, 0);
    struct shardline_custom_strategy c;
    memset(&c, 0, sizeof c);
    c.struct_size = (uint32_t)sizeof c;
    c.userdata = &w;
    c.allocate = slow_allocate;
    c.rebalance = slow_rebalance;
    struct shardline_strategy *s = NULL;
    OK(shardline_strategy_new_custom(&c, "slow", &s));
    struct slow_call call = {s, st, SHARDLINE_STATUS_INTERNAL};
    pthread_t other;
    CHECK(pthread_create(&other, NULL, allocate_slowly, &call) == 0, "thread started");
    while (!atomic_load(&w.inside)) {
        pause_ms(1);
    }
    atomic_store(&w.main_calling, 1);
    /* The decision on the other thread holds the state; this call waits for it instead of
     * failing or racing, so it returns only after the callback has finished. */
    OK(shardline_state_add_shard(st, "r1", "late"));
    CHECK(atomic_load(&w.done) == 1, "the call ran only after the decision in progress");
    pthread_join(other, NULL);
    EXPECT(call.rc, SHARDLINE_STATUS_OK);
    shardline_strategy_free(s);
    shardline_state_free(st);
    end();
}

/* Takes the next pipeline operation; its "type" is returned in *type (NULL when none). The
 * caller deletes the returned JSON (NULL when none). */
static cJSON *next_operation(struct shardline_coordinator_pipeline *p, uint64_t *ticket, const char **type) {
    char *json = NULL;
    *type = NULL;
    if (shardline_coordinator_pipeline_next_operation(p, ticket, &json) != SHARDLINE_STATUS_OK || json == NULL) {
        return NULL;
    }
    cJSON *op = cJSON_Parse(json);
    shardline_string_free(json);
    *type = str_field(op, "type");
    return op;
}

static void test_pipeline(void) {
    begin("pipeline: operations completed later; nothing after a write before it completes");
    struct shardline_strategy *s = NULL;
    OK(shardline_strategy_new(LEAST_SHARD, &s));
    struct shardline_coordinator *c = NULL;
    OK(shardline_coordinator_new(s, NODE(0), NULL, &c));
    struct shardline_coordinator_pipeline *p = NULL;
    OK(shardline_coordinator_pipeline_new(c, &p)); /* takes the coordinator over */
    OK(shardline_coordinator_pipeline_start(p, 0));
    OK(shardline_coordinator_pipeline_handle(p, 0, "{\"type\":\"member\",\"member\":{\"address\":\"" NODE(1) "\"}}"));
    uint64_t acquire = 0, t = 0;
    const char *type = NULL;
    cJSON *op = next_operation(p, &acquire, &type);
    CHECK(str_is(type, "acquire") && acquire != 0, "first an acquire: %s", type ? type : "(none)");
    cJSON_Delete(op);
    op = next_operation(p, &t, &type);
    CHECK(op == NULL && t == 0, "then nothing until the lease answers");
    EXPECT(shardline_coordinator_pipeline_complete(p, 1, acquire, "{\"type\":\"sent\"}"),
           SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "is a lease acquire"), "%s", last_error());
    EXPECT(shardline_coordinator_pipeline_complete(p, 1, 999, "{\"type\":\"denied\"}"),
           SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "operation 999 is not in flight"), "%s", last_error());
    EXPECT(shardline_coordinator_pipeline_complete(p, 1, acquire, "{\"type\":\"granted\"}"),
           SHARDLINE_STATUS_INVALID_ARGUMENT);
    OK(shardline_coordinator_pipeline_complete(p, 1, acquire, "{\"type\":\"granted\",\"token\":1,\"validUntilMs\":60000}"));
    op = next_operation(p, &t, &type);
    CHECK(str_is(type, "load"), "then a load: %s", type ? type : "(none)");
    cJSON_Delete(op);
    OK(shardline_coordinator_pipeline_complete(p, 2, t, "{\"type\":\"loaded\",\"state\":{\"snapshot\":null,\"events\":[]}}"));
    char *notices = NULL;
    OK(shardline_coordinator_pipeline_take_notices(p, &notices));
    CHECK(contains(notices, "\"active\""), "active: %s", notices);
    shardline_string_free(notices);

    /* A registration is written first; its acknowledgement waits for the write. */
    OK(shardline_coordinator_pipeline_handle(
        p, 3, "{\"type\":\"receive\",\"envelope\":{\"from\":{\"region\":\"r1\"},\"to\":\"coordinator\","
              "\"message\":{\"command\":{\"type\":\"register\",\"node\":\"" NODE(1) "\"}}}}"));
    uint64_t write = 0;
    op = next_operation(p, &write, &type);
    CHECK(str_is(type, "append"), "an append: %s", type ? type : "(none)");
    cJSON_Delete(op);
    op = next_operation(p, &t, &type);
    CHECK(op == NULL, "nothing while the write is in flight");
    size_t in_flight = 0;
    OK(shardline_coordinator_pipeline_in_flight(p, &in_flight));
    CHECK(in_flight == 1, "one in flight: %zu", in_flight);
    OK(shardline_coordinator_pipeline_complete(p, 4, write, "{\"type\":\"written\"}"));
    op = next_operation(p, &t, &type);
    char *text = op ? cJSON_PrintUnformatted(op) : NULL;
    CHECK(str_is(type, "send") && contains(text, "\"registerAck\""), "then the ack: %s", text ? text : "(none)");
    free(text);
    cJSON_Delete(op);
    OK(shardline_coordinator_pipeline_complete(p, 4, t, "{\"type\":\"failed\"}"));
    bool has = false;
    uint64_t deadline = 0;
    OK(shardline_coordinator_pipeline_next_deadline(p, &has, &deadline));
    CHECK(has && deadline > 4, "a timer is set");
    shardline_coordinator_pipeline_free(p);
    shardline_coordinator_pipeline_free(NULL);
    end();
}

/* ---- worker ids: the in-memory registry and holders on a simulated clock --------------------- */

#define ID_T0 1767225600000ULL /* 2026-01-01, Unix ms */

/* A simulated clock: sleeping moves both readings; a reading can be made to fail. */
struct sim_clock {
    uint64_t wall;
    uint64_t mono;
    int fail_wall;
    int frees;
    struct shardline_worker_id_holder *holder; /* called back from wall_ms when set */
    shardline_status reentry;
};

static shardline_status sim_wall(void *ud, uint64_t *out) {
    struct sim_clock *c = ud;
    if (c->holder != NULL) {
        uint32_t id = 0;
        c->reentry = shardline_worker_id_holder_worker_id(c->holder, &id);
    }
    if (c->fail_wall) {
        return SHARDLINE_STATUS_INTERNAL;
    }
    *out = c->wall;
    return SHARDLINE_STATUS_OK;
}

static shardline_status sim_mono(void *ud, uint64_t *out) {
    *out = ((struct sim_clock *)ud)->mono;
    return SHARDLINE_STATUS_OK;
}

static shardline_status sim_sleep(void *ud, uint64_t until) {
    struct sim_clock *c = ud;
    if (until > c->mono) {
        c->wall += until - c->mono;
        c->mono = until;
    }
    return SHARDLINE_STATUS_OK;
}

static void sim_free(void *ud) { ((struct sim_clock *)ud)->frees++; }

static struct shardline_id_clock_callbacks sim_callbacks(struct sim_clock *c) {
    struct shardline_id_clock_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.struct_size = (uint32_t)sizeof cb;
    cb.userdata = c;
    cb.wall_ms = sim_wall;
    cb.monotonic_ms = sim_mono;
    cb.sleep_until = sim_sleep;
    cb.userdata_free = sim_free;
    return cb;
}

static struct shardline_worker_id_holder *acquire_id(struct shardline_worker_id_registry *r, struct sim_clock *c,
                                                     const char *options) {
    struct shardline_id_clock_callbacks cb = sim_callbacks(c);
    struct shardline_worker_id_holder *h = NULL;
    OK(shardline_worker_id_holder_acquire(r, &cb, options, &h));
    return h;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void test_worker_ids(void) {
    begin("worker ids: lowest free, exclusive, unique fenced ids, release, a successor's epoch");
    struct shardline_worker_id_registry *r = NULL;
    OK(shardline_worker_id_registry_new(&r));
    struct sim_clock clock = {ID_T0, 0, 0, 0, NULL, SHARDLINE_STATUS_OK};
    struct shardline_worker_id_holder *h[3] = {NULL, NULL, NULL};
    const char *owners[3] = {"{\"owner\":\"node0\",\"incarnation\":1}", "{\"owner\":\"node1\",\"incarnation\":1}",
                             "{\"owner\":\"node2\",\"incarnation\":1}"};
    for (int i = 0; i < 3; i++) {
        h[i] = acquire_id(r, &clock, owners[i]);
    }
    if (!CHECK(h[0] != NULL && h[1] != NULL && h[2] != NULL, "three holders")) {
        for (int i = 0; i < 3; i++) {
            shardline_worker_id_holder_free(h[i]);
        }
        shardline_worker_id_registry_free(r);
        end();
        return;
    }
    for (int i = 0; i < 3; i++) {
        uint32_t id = 99;
        uint64_t epoch = 0;
        OK(shardline_worker_id_holder_worker_id(h[i], &id));
        OK(shardline_worker_id_holder_epoch(h[i], &epoch));
        CHECK(id == (uint32_t)i && epoch == 1, "holder %d has worker id %u, epoch %llu", i, id,
              (unsigned long long)epoch);
    }
    char *json = NULL;
    OK(shardline_worker_id_registry_live_claims(r, &json));
    CHECK(contains(json, "\"workerId\":2") && contains(json, "\"owner\":\"node1\""), "live claims: %s", json);
    shardline_string_free(json);

    /* 1500 ids over 500 ms of simulated time: every one distinct. */
    static uint64_t ids[1500];
    int n = 0;
    for (int t = 0; t < 500; t++) {
        for (int i = 0; i < 3; i++) {
            OK(shardline_worker_id_holder_next_id(h[i], &ids[n++]));
        }
        clock.wall++;
        clock.mono++;
    }
    qsort(ids, (size_t)n, sizeof ids[0], cmp_u64);
    int distinct = 1;
    for (int i = 1; i < n; i++) {
        distinct &= ids[i] != ids[i - 1];
    }
    CHECK(distinct, "1500 distinct ids");

    uint64_t floor = 0, budget = 0, until = 0, next = 0;
    bool has_until = false;
    OK(shardline_worker_id_holder_tenure(h[0], &floor, &budget, &has_until, &until));
    CHECK(has_until && budget > floor, "a confirmed tenure: floor %llu budget %llu", (unsigned long long)floor,
          (unsigned long long)budget);
    OK(shardline_worker_id_holder_maintain(h[0], &next));
    CHECK(next > clock.mono, "the next upkeep is ahead: %llu", (unsigned long long)next);
    OK(shardline_worker_id_holder_hold_until(h[0], clock.mono + 100));
    CHECK(clock.mono >= 500 + 100, "holding slept through the clock");
    OK(shardline_worker_id_holder_layout(h[0], &json));
    CHECK(contains(json, "\"workerBits\":10"), "layout: %s", json);
    shardline_string_free(json);

    /* Released (twice: idempotent), the id is gone for this holder and the lowest free again. */
    OK(shardline_worker_id_holder_release(h[1]));
    OK(shardline_worker_id_holder_release(h[1]));
    uint64_t id = 0;
    EXPECT(shardline_worker_id_holder_next_id(h[1], &id), SHARDLINE_STATUS_INVALID_STATE);
    CHECK(contains(last_error(), "released"), "%s", last_error());
    struct shardline_worker_id_holder *again = acquire_id(r, &clock, "{\"owner\":\"node9\",\"incarnation\":1}");
    uint32_t wid = 0;
    uint64_t epoch = 0;
    OK(shardline_worker_id_holder_worker_id(again, &wid));
    OK(shardline_worker_id_holder_epoch(again, &epoch));
    CHECK(wid == 1 && epoch == 2, "the successor has worker id %u, epoch %llu", wid, (unsigned long long)epoch);
    OK(shardline_worker_id_holder_next_id(again, &id));
    CHECK(bsearch(&id, ids, (size_t)n, sizeof ids[0], cmp_u64) == NULL, "its ids are new");
    OK(shardline_worker_id_registry_fence(r, 1, &json));
    CHECK(contains(json, "\"epoch\":2"), "the fence of id 1: %s", json);
    shardline_string_free(json);
    OK(shardline_worker_id_registry_fence(r, 7, &json));
    CHECK(json == NULL, "id 7 has no fence");

    /* The registry's time moves only when told; freeing a holder releases its id. */
    uint64_t now = 0;
    OK(shardline_worker_id_registry_advance_to(r, 20, &now));
    OK(shardline_worker_id_registry_advance_to(r, 10, NULL));
    OK(shardline_worker_id_registry_now_ms(r, &now));
    CHECK(now == 20, "never back: %llu", (unsigned long long)now);
    shardline_worker_id_holder_free(h[0]);
    OK(shardline_worker_id_registry_live_claims(r, &json));
    CHECK(!contains(json, "\"owner\":\"node0\""), "node0's claim went with its holder: %s", json);
    shardline_string_free(json);
    shardline_worker_id_holder_free(h[1]);
    shardline_worker_id_holder_free(h[2]);
    shardline_worker_id_holder_free(again);
    shardline_worker_id_holder_free(NULL);
    CHECK(clock.frees == 4, "userdata_free once per holder: %d", clock.frees);
    shardline_worker_id_registry_free(r);
    shardline_worker_id_registry_free(NULL);
    end();
}

static void test_worker_id_errors(void) {
    begin("worker ids: a full pool, bad options and clocks, re-entry, NULLs: statuses, never a crash");
    struct shardline_worker_id_registry *r = NULL;
    OK(shardline_worker_id_registry_new(&r));
    struct sim_clock clock = {ID_T0, 0, 0, 0, NULL, SHARDLINE_STATUS_OK};
    struct shardline_id_clock_callbacks cb = sim_callbacks(&clock);
    struct shardline_worker_id_holder *h = NULL;
    const char *one_bit = "{\"owner\":\"n2\",\"incarnation\":1,\"workerBits\":1}";

    /* Every id taken is NO_CANDIDATES, as in every language. */
    struct shardline_worker_id_holder *two[2] = {
        acquire_id(r, &clock, "{\"owner\":\"n0\",\"incarnation\":1,\"workerBits\":1}"),
        acquire_id(r, &clock, "{\"owner\":\"n1\",\"incarnation\":1,\"workerBits\":1}")};
    EXPECT(shardline_worker_id_holder_acquire(r, &cb, one_bit, &h), SHARDLINE_STATUS_NO_CANDIDATES);
    CHECK(h == NULL, "nothing written on failure");
    shardline_worker_id_holder_free(two[0]);
    h = acquire_id(r, &clock, one_bit);
    uint32_t wid = 9;
    OK(shardline_worker_id_holder_worker_id(h, &wid));
    CHECK(wid == 0, "a freed id is taken again: %u", wid);
    shardline_worker_id_holder_free(two[1]);

    /* A clock callback calling its own holder is refused; a failing one is named. */
    clock.holder = h;
    uint64_t id = 0;
    OK(shardline_worker_id_holder_next_id(h, &id));
    CHECK(clock.reentry == SHARDLINE_STATUS_REENTRANT_CALL, "re-entry: %s", shardline_status_str(clock.reentry));
    clock.holder = NULL;
    clock.fail_wall = 1;
    uint64_t kept = 12345;
    EXPECT(shardline_worker_id_holder_next_id(h, &kept), SHARDLINE_STATUS_CALLBACK_FAILED);
    CHECK(str_is(last_error(), "the clock's wall_ms returned SHARDLINE_STATUS_INTERNAL"), "%s", last_error());
    CHECK(kept == 12345, "no id written when the clock failed");
    struct shardline_worker_id_holder *other = NULL;
    EXPECT(shardline_worker_id_holder_acquire(r, &cb, "{\"owner\":\"b\",\"incarnation\":1}", &other),
           SHARDLINE_STATUS_CALLBACK_FAILED);
    CHECK(other == NULL && clock.frees == 2, "a failed acquire keeps the userdata the caller's (%d frees)",
          clock.frees);
    clock.fail_wall = 0;
    OK(shardline_worker_id_holder_next_id(h, &id));
    clock.fail_wall = 1;
    EXPECT(shardline_worker_id_holder_release(h), SHARDLINE_STATUS_CALLBACK_FAILED);
    CHECK(str_is(last_error(), "the clock's wall_ms returned SHARDLINE_STATUS_INTERNAL"), "%s", last_error());
    clock.fail_wall = 0;
    EXPECT(shardline_worker_id_holder_worker_id(h, &wid), SHARDLINE_STATUS_INVALID_STATE);
    CHECK(str_is(last_error(), "the worker id was released"), "released all the same: %s", last_error());
    OK(shardline_worker_id_holder_release(h));
    shardline_worker_id_holder_free(h);
    h = NULL;

    /* Bad options and clocks. */
    EXPECT(shardline_worker_id_holder_acquire(NULL, &cb, one_bit, &h), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "registry is NULL"), "%s", last_error());
    EXPECT(shardline_worker_id_holder_acquire(r, &cb, NULL, &h), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "options_json is NULL"), "%s", last_error());
    EXPECT(shardline_worker_id_holder_acquire(r, &cb, one_bit, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_worker_id_holder_acquire(r, &cb, "{\"owner\":\"a\"}", &h), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "incarnation"), "a missing field is named: %s", last_error());
    EXPECT(shardline_worker_id_holder_acquire(r, &cb, "{\"owner\":\"a\",\"incarnation\":-1}", &h),
           SHARDLINE_STATUS_INVALID_ARGUMENT);
    EXPECT(shardline_worker_id_holder_acquire(r, &cb, "{\"owner\":\"a\",\"incarnation\":1,\"policy\":\"random\"}", &h),
           SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "policy must be \"lowest\" or \"spread:N\""), "%s", last_error());
    EXPECT(shardline_worker_id_holder_acquire(r, &cb, "{\"owner\":\"\xff\",\"incarnation\":1}", &h),
           SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "options_json is not valid UTF-8"), "%s", last_error());
    struct shardline_id_clock_callbacks bad = cb;
    bad.wall_ms = NULL;
    EXPECT(shardline_worker_id_holder_acquire(r, &bad, one_bit, &h), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(str_is(last_error(), "clock->wall_ms is NULL (it is required)"), "%s", last_error());
    bad = cb;
    bad.struct_size = 4;
    EXPECT(shardline_worker_id_holder_acquire(r, &bad, one_bit, &h), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "clock->struct_size is 4"), "%s", last_error());
    CHECK(h == NULL && clock.frees == 3, "no holder, no userdata_free: %d", clock.frees);

    /* The system clock when none is given. */
    OK(shardline_worker_id_holder_acquire(r, NULL, "{\"owner\":\"sys\",\"incarnation\":1}", &h));
    uint64_t a = 0, b = 0;
    OK(shardline_worker_id_holder_next_id(h, &a));
    OK(shardline_worker_id_holder_next_id(h, &b));
    CHECK(a != b, "the system clock issues ids too");

    /* NULL handles and out-parameters. */
    EXPECT(shardline_worker_id_holder_next_id(NULL, &id), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "holder is NULL"), "%s", last_error());
    EXPECT(shardline_worker_id_holder_next_id(h, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_worker_id_holder_release(NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_worker_id_holder_tenure(h, &a, &b, NULL, &id), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_worker_id_registry_new(NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_worker_id_registry_live_claims(NULL, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_worker_id_registry_now_ms(r, NULL), SHARDLINE_STATUS_NULL_POINTER);
    shardline_worker_id_holder_free(h);
    shardline_worker_id_registry_free(r);
    end();
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "tests/vectors";
    const char *traces = argc > 2 ? argv[2] : "tests/traces";
    if (shardline_abi_version() != SHARDLINE_ABI_VERSION) {
        fprintf(stderr, "loaded ABI %u, compiled against %u\n", shardline_abi_version(), SHARDLINE_ABI_VERSION);
        return 2;
    }
    test_versions();
    test_status_names();
    test_last_error();
    test_strategy_errors();
    test_state_errors();
    test_decision_errors();
    test_custom_strategy();
    test_delegating_strategy();
    test_coordinator_lifecycle();
    test_coordinator_get_shard_home();
    test_decision_events_and_metrics();
    test_cluster_exchange();
    test_step_errors();
    test_coordinator_custom_strategy();
    test_typed_get_shard_home();
    test_typed_cluster_handoff();
    test_typed_errors();
    test_drivers();
    test_driver_errors();
    test_pipeline();
    test_threads();
    test_worker_ids();
    test_worker_id_errors();
    hashing_vectors(dir);
    replay_file(dir, "pekko-strategies.json");
    replay_file(dir, "actor-ts-strategies.json");
    /* loads, capacities and rules have no typed entry point yet: shardline_decide only */
    cJSON *least_load = parse_file(dir, "least-load.json");
    replay_decide_file(least_load, "least-load.json");
    cJSON_Delete(least_load);
    replay_traces(traces);
    printf("C tests: %d passed, %d failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
