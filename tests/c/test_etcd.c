/*
 * C host tests of libshardline's etcd backends against a real etcd (SHARDLINE_ETCD_ENDPOINTS,
 * comma-separated; scripts/test-etcd.sh starts one): the lease, the fenced store, a coordinator
 * driver on them that loses its lease and a successor that takes over from the store with the
 * decisions an uninterrupted coordinator makes, and worker ids. Bad input is checked first, with
 * or without etcd. Run by scripts/test-c.sh --etcd under ASan/UBSan with leak checks; prints
 * "c etcd: N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L

#include <shardline.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define NODE(i) "pekko://sys@10.0.0." #i ":2552"
#define STRATEGY "{\"kind\":\"least-shard\"}"
#define RECORD "{\"seq\":1,\"event\":{\"type\":\"shardRegionRegistered\",\"region\":\"r1\",\"node\":\"" NODE(1) "\"}}"
#define SHARDS 14      /* allocated in all: the first FIRST by the first coordinator */
#define FIRST 10

static const char *g_endpoints[8];
static size_t g_n_endpoints;
static char g_run[64]; /* a namespace prefix of its own per run, so reruns never meet old keys */

static uint64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A fresh connection under a namespace of its own. */
static struct shardline_etcd *connect_etcd(const char *name) {
    char ns[160];
    snprintf(ns, sizeof ns, "%s/%s", g_run, name);
    struct shardline_etcd *e = NULL;
    OK(shardline_etcd_connect(g_endpoints, g_n_endpoints, ns, SHARDLINE_ETCD_DEFAULT_TIMEOUT_MS, &e));
    return e;
}

/* Who holds lease `name` in etcd now: the owner (freed by the caller) and the token. */
static char *holder_of(struct shardline_etcd *e, const char *name, uint64_t *token) {
    struct shardline_etcd_lease *watcher = NULL;
    char *owner = NULL;
    OK(shardline_etcd_lease_new(e, name, "watcher", SHARDLINE_ETCD_DEFAULT_LEASE_TTL_MS, &watcher));
    OK(shardline_etcd_lease_holder(watcher, &owner, token));
    shardline_etcd_lease_free(watcher);
    return owner;
}

static void test_bad_input(void) {
    begin("bad input: NULLs, bad UTF-8, bad endpoints and timeouts give a status and a message");
    const char *one[] = {"http://127.0.0.1:1"};
    struct shardline_etcd *e = NULL;
    EXPECT(shardline_etcd_connect(NULL, 1, "ns", 300, &e), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "endpoints is NULL"), "%s", last_error());
    const char *holes[] = {"http://127.0.0.1:1", NULL};
    EXPECT(shardline_etcd_connect(holes, 2, "ns", 300, &e), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "endpoints[1] is NULL"), "%s", last_error());
    EXPECT(shardline_etcd_connect(one, 1, NULL, 300, &e), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "namespace is NULL"), "%s", last_error());
    EXPECT(shardline_etcd_connect(one, 1, "ns", 300, NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_etcd_connect(one, 1, "n\xc3", 300, &e), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "namespace is not valid UTF-8"), "%s", last_error());
    EXPECT(shardline_etcd_connect(one, 1, "ns", 0, &e), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(str_is(last_error(), "the etcd timeout must be positive"), "%s", last_error());
    EXPECT(shardline_etcd_connect(NULL, 0, "ns", 300, &e), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "endpoint"), "no endpoints: %s", last_error());
    const char *garbage[] = {"::not a url::"};
    shardline_status st = shardline_etcd_connect(garbage, 1, "ns", 300, &e);
    CHECK(st == SHARDLINE_STATUS_INVALID_ARGUMENT || st == SHARDLINE_STATUS_INVALID_STATE,
          "a malformed endpoint: %s (%s)", shardline_status_str(st), last_error());
    CHECK(strlen(last_error()) > 0, "with a message");
    CHECK(e == NULL, "nothing written on failure");

    /* Nobody listens there: the connection or its first request says so. */
    st = shardline_etcd_connect(one, 1, "ns", 300, &e);
    if (st == SHARDLINE_STATUS_OK) {
        struct shardline_etcd_lease *l = NULL;
        OK(shardline_etcd_lease_new(e, "l", "o", 2000, &l));
        bool granted = false;
        uint64_t token = 0, until = 0;
        EXPECT(shardline_etcd_lease_acquire(l, 0, &granted, &token, &until), SHARDLINE_STATUS_INVALID_STATE);
        CHECK(contains(last_error(), "etcd"), "%s", last_error());
        shardline_etcd_lease_free(l);
        shardline_etcd_free(e);
    } else {
        CHECK(st == SHARDLINE_STATUS_INVALID_STATE, "unreachable: %s (%s)", shardline_status_str(st), last_error());
    }

    /* NULL handles and out-parameters, and the functions that take nothing but a handle. */
    uint64_t token = 0;
    char *owner = NULL;
    bool flag = false;
    EXPECT(shardline_etcd_lease_new(NULL, "l", "o", 1, (struct shardline_etcd_lease **)&owner),
           SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "etcd is NULL"), "%s", last_error());
    EXPECT(shardline_etcd_lease_holder(NULL, &owner, &token), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "lease is NULL"), "%s", last_error());
    EXPECT(shardline_etcd_store_load(NULL, 1, &flag, &owner), SHARDLINE_STATUS_NULL_POINTER);
    CHECK(str_is(last_error(), "store is NULL"), "%s", last_error());
    EXPECT(shardline_etcd_namespace(NULL, &owner), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_worker_id_holder_acquire_etcd(NULL, NULL, "{}", NULL), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_coordinator_driver_new_etcd(NULL, NULL, NULL, NULL, NULL), SHARDLINE_STATUS_NULL_POINTER);
    shardline_etcd_free(NULL);
    shardline_etcd_lease_free(NULL);
    shardline_etcd_store_free(NULL);
    end();
}

static void test_lease(void) {
    begin("lease: acquired, renewed, refused to a contender, released, taken over with a larger token");
    struct shardline_etcd *e = connect_etcd("lease");
    char *ns = NULL;
    OK(shardline_etcd_namespace(e, &ns));
    CHECK(contains(ns, g_run), "namespace %s", ns);
    shardline_string_free(ns);
    struct shardline_etcd_lease *a = NULL, *b = NULL;
    OK(shardline_etcd_lease_new(e, "coordinator", "a", 2000, &a));
    OK(shardline_etcd_lease_new(e, "coordinator", "b", 2000, &b));
    EXPECT(shardline_etcd_lease_new(e, "coordinator", "c", 0, &b), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(str_is(last_error(), "the lease ttl must be positive"), "%s", last_error());
    EXPECT(shardline_etcd_lease_new(e, "coordinator", "\xff", 10, &b), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "owner is not valid UTF-8"), "%s", last_error());

    bool granted = false, renewed = false;
    uint64_t token = 0, until = 0, next = 0, held = 0;
    OK(shardline_etcd_lease_acquire(a, 0, &granted, &token, &until));
    CHECK(granted && token > 0 && until > 0, "granted: token %llu until %llu", (unsigned long long)token,
          (unsigned long long)until);
    uint64_t other = 7;
    OK(shardline_etcd_lease_acquire(b, 0, &granted, &other, &until));
    CHECK(!granted && other == 0, "a contender is refused while a holds it");
    char *owner = NULL;
    OK(shardline_etcd_lease_holder(b, &owner, &held));
    CHECK(str_is(owner, "a") && held == token, "the holder is a with its token: %s %llu", owner,
          (unsigned long long)held);
    shardline_string_free(owner);
    OK(shardline_etcd_lease_renew(a, token, 10, &renewed, &until));
    CHECK(renewed && until > 10, "renewed until %llu", (unsigned long long)until);
    OK(shardline_etcd_lease_release(a, token));
    OK(shardline_etcd_lease_holder(a, &owner, &held));
    CHECK(owner == NULL && held == 0, "released: nobody holds it");
    OK(shardline_etcd_lease_acquire(b, 20, &granted, &next, &until));
    CHECK(granted && next > token, "b takes over with a larger token: %llu after %llu", (unsigned long long)next,
          (unsigned long long)token);
    OK(shardline_etcd_lease_renew(a, token, 30, &renewed, &until));
    CHECK(!renewed, "a's old grant is gone");
    shardline_etcd_lease_free(a);
    shardline_etcd_lease_free(b);
    shardline_etcd_free(e);
    end();
}

static void test_store(void) {
    begin("store: fenced appends and loads below the highest token, snapshots, bad documents");
    struct shardline_etcd *e = connect_etcd("store");
    struct shardline_etcd_store *s = NULL;
    OK(shardline_etcd_store_new(e, "state", NULL, &s));
    bool fenced = true;
    uint64_t highest = 9;
    char *state = NULL;
    OK(shardline_etcd_store_load(s, 5, &fenced, &state));
    CHECK(!fenced && str_is(state, "{\"snapshot\":null,\"events\":[]}"), "empty: %s", state);
    shardline_string_free(state);
    OK(shardline_etcd_store_append(s, 5, RECORD, &fenced, &highest));
    CHECK(!fenced && highest == 0, "written with token 5");
    OK(shardline_etcd_store_append(s, 3, RECORD, &fenced, &highest));
    CHECK(fenced && highest == 5, "token 3 is fenced by 5 (highest %llu)", (unsigned long long)highest);
    OK(shardline_etcd_store_load(s, 4, &fenced, &state));
    CHECK(fenced && state == NULL, "a load with token 4 is fenced");
    OK(shardline_etcd_store_load(s, 6, &fenced, &state));
    CHECK(!fenced && contains(state, "\"region\":\"r1\""), "the record is there: %s", state);
    shardline_string_free(state);
    EXPECT(shardline_etcd_store_append(s, 7, "{\"seq\": 2}", &fenced, &highest), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "record_json"), "the parameter is named: %s", last_error());
    EXPECT(shardline_etcd_store_append(s, 7, "{", &fenced, &highest), SHARDLINE_STATUS_INVALID_ARGUMENT);
    EXPECT(shardline_etcd_store_append(s, 7, NULL, &fenced, &highest), SHARDLINE_STATUS_NULL_POINTER);
    EXPECT(shardline_etcd_store_save_snapshot(s, 7, "[]", &fenced, &highest), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "snapshot_json"), "%s", last_error());
    EXPECT(shardline_etcd_store_load(s, 7, NULL, &state), SHARDLINE_STATUS_NULL_POINTER);

    /* A store bound to a lease takes writes only from that lease's current token. */
    struct shardline_etcd_store *bound = NULL;
    OK(shardline_etcd_store_new(e, "bound", "coordinator", &bound));
    struct shardline_etcd_lease *l = NULL;
    OK(shardline_etcd_lease_new(e, "coordinator", "a", 2000, &l));
    bool granted = false;
    uint64_t token = 0, until = 0;
    OK(shardline_etcd_lease_acquire(l, 0, &granted, &token, &until));
    OK(shardline_etcd_store_load(bound, token, &fenced, &state));
    shardline_string_free(state);
    OK(shardline_etcd_store_append(bound, token, RECORD, &fenced, &highest));
    CHECK(!fenced, "the lease holder writes");
    OK(shardline_etcd_lease_release(l, token));
    OK(shardline_etcd_store_append(bound, token, RECORD, &fenced, &highest));
    CHECK(fenced, "a released lease's token no longer writes");
    shardline_etcd_lease_free(l);
    shardline_etcd_store_free(bound);
    shardline_etcd_store_free(s);
    shardline_etcd_free(e);
    end();
}

/* ---- a coordinator driver on etcd, its loss and its successor ---------------------------------- */

static uint64_t now_cb(void *ud) {
    (void)ud;
    return mono_ms();
}

static shardline_status send_cb(void *ud, const struct shardline_envelope *e) {
    (void)e;
    (*(int *)ud)++;
    return SHARDLINE_STATUS_OK;
}

/* Feeds to a driver (d) or, when d is NULL, to a plain coordinator (c) whose outputs are
 * dropped: the reference that never loses its lease. */
struct target {
    struct shardline_coordinator_driver *d;
    struct shardline_coordinator *c;
    uint64_t t;
};

static void feed(struct target *to, const struct shardline_coordinator_input *in) {
    if (to->d != NULL) {
        OK(shardline_coordinator_driver_feed(to->d, in));
        return;
    }
    OK(shardline_coordinator_feed(to->c, ++to->t, in));
    const struct shardline_coordinator_output *o = NULL;
    while (OK(shardline_coordinator_next_output(to->c, &o)) && o != NULL) {
    }
}

/* The cluster's members, known before the lease is contended for: a coordinator that restores
 * its state drops the regions of nodes that are not members. */
static void members(struct target *to) {
    for (int i = 1; i <= 2; i++) {
        struct shardline_coordinator_input in = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_MEMBER);
        in.address = S(i == 1 ? NODE(1) : NODE(2));
        in.up_number = i;
        feed(to, &in);
    }
}

static void regions(struct target *to) {
    for (int i = 1; i <= 2; i++) {
        struct shardline_coordinator_input in = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_RECEIVE);
        in.envelope.from = S(i == 1 ? "r1" : "r2");
        in.envelope.kind = SHARDLINE_MESSAGE_KIND_REGISTER;
        in.envelope.node = S(i == 1 ? NODE(1) : NODE(2));
        feed(to, &in);
    }
}

static void ask_homes(struct target *to, int from, int until) {
    for (int i = from; i < until; i++) {
        char shard[16];
        snprintf(shard, sizeof shard, "%d", i);
        struct shardline_coordinator_input in = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_RECEIVE);
        in.envelope.from = S(i % 2 ? "r2" : "r1");
        in.envelope.kind = SHARDLINE_MESSAGE_KIND_GET_SHARD_HOME;
        in.envelope.shard = S(shard);
        feed(to, &in);
    }
}

static char *home(struct target *to, int shard) {
    char id[16];
    char *region = NULL;
    snprintf(id, sizeof id, "%d", shard);
    if (to->d != NULL) {
        OK(shardline_coordinator_driver_home_of(to->d, id, &region));
    } else {
        OK(shardline_coordinator_home_of(to->c, id, &region));
    }
    return region;
}

/* A coordinator driver taking `lease` and `store` over into `*d`, or the status refusing it. */
static shardline_status etcd_driver(struct shardline_etcd_lease *lease, struct shardline_etcd_store *store, int *sent,
                                    struct shardline_coordinator_driver **d) {
    struct shardline_strategy *s = NULL;
    struct shardline_coordinator *c = NULL;
    OK(shardline_strategy_new(STRATEGY, &s));
    OK(shardline_coordinator_new(s, NODE(0), NULL, &c));
    struct shardline_coordinator_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.struct_size = (uint32_t)sizeof cb;
    cb.userdata = sent;
    cb.now_ms = now_cb;
    cb.send = send_cb; /* lease_* and store_* stay NULL: etcd plays them */
    shardline_status st = shardline_coordinator_driver_new_etcd(c, &cb, lease, store, d);
    if (st != SHARDLINE_STATUS_OK) {
        shardline_coordinator_free(c);
    }
    return st;
}

static int is_active(struct shardline_coordinator_driver *d) {
    bool active = false;
    OK(shardline_coordinator_driver_is_active(d, &active));
    return active;
}

static void test_driver_takeover(void) {
    begin("coordinator driver on etcd: loses its lease; a successor takes over from the store with the same decisions");
    struct shardline_etcd *e = connect_etcd("takeover");

    /* The reference: the same inputs to a coordinator that never loses its lease. */
    struct target ref = {NULL, NULL, 0};
    struct shardline_strategy *rs = NULL;
    OK(shardline_strategy_new(STRATEGY, &rs));
    OK(shardline_coordinator_new(rs, NODE(0), NULL, &ref.c));
    members(&ref);
    OK(shardline_coordinator_start(ref.c, 0));
    struct shardline_coordinator_input grant = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_LEASE_GRANTED);
    grant.token = 1;
    grant.valid_until_ms = UINT64_MAX / 2;
    feed(&ref, &grant);
    struct shardline_coordinator_input loaded = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_STATE_LOADED);
    loaded.state_json = S("{\"snapshot\":null,\"events\":[]}");
    feed(&ref, &loaded);

    int sent1 = 0, sent2 = 0;
    struct shardline_etcd_lease *lease1 = NULL, *lease2 = NULL;
    struct shardline_etcd_store *store1 = NULL, *store2 = NULL;
    OK(shardline_etcd_lease_new(e, "coordinator", "c1", 2000, &lease1));
    OK(shardline_etcd_store_new(e, "state", "coordinator", &store1));
    struct target first = {NULL, NULL, 0};
    if (!OK(etcd_driver(lease1, store1, &sent1, &first.d))) {
        goto done;
    }
    members(&first);
    OK(shardline_coordinator_driver_start(first.d));
    CHECK(is_active(first.d), "the first coordinator is active on the etcd lease");
    uint64_t token1 = 0, token2 = 0;
    char *owner = holder_of(e, "coordinator", &token1);
    bool has = false;
    uint64_t own = 0;
    OK(shardline_coordinator_driver_token(first.d, &has, &own));
    CHECK(str_is(owner, "c1") && has && token1 == own, "etcd names c1 as the holder, with the driver's token: %s %llu",
          owner, (unsigned long long)own);
    shardline_string_free(owner);

    /* The lease and store serve that driver alone now. */
    EXPECT(shardline_etcd_lease_holder(lease1, &owner, &token2), SHARDLINE_STATUS_INVALID_STATE);
    CHECK(str_is(last_error(), "this EtcdLease serves a driver; ask etcd directly"), "%s", last_error());
    struct shardline_etcd_store *spare = NULL;
    OK(shardline_etcd_store_new(e, "state", "coordinator", &spare));
    struct shardline_coordinator_driver *again = NULL;
    EXPECT(etcd_driver(lease1, spare, &sent1, &again), SHARDLINE_STATUS_INVALID_STATE);
    CHECK(again == NULL && str_is(last_error(), "this EtcdLease already serves a driver"), "%s", last_error());
    bool fenced = true;
    char *state = NULL;
    OK(shardline_etcd_store_load(spare, 0, &fenced, &state));
    CHECK(fenced, "the spare store was not taken by the refused driver: it still answers (fenced at 0)");
    shardline_string_free(state);
    shardline_etcd_store_free(spare);

    for (struct target *t = &first; t != NULL; t = t == &first ? &ref : NULL) {
        regions(t);
        ask_homes(t, 0, FIRST);
    }
    int same = 1;
    for (int i = 0; i < FIRST; i++) {
        char *a = home(&first, i), *b = home(&ref, i);
        same &= a != NULL && str_is(a, b);
        shardline_string_free(a);
        shardline_string_free(b);
    }
    CHECK(same, "the first coordinator allocated shards 0..%d as the reference did", FIRST - 1);
    CHECK(sent1 > 0, "it answered through the send callback");

    /* The first coordinator stalls (no more polls, so no renewals): etcd expires its lease. */
    uint64_t deadline = mono_ms() + 20000;
    while ((owner = holder_of(e, "coordinator", &token2)) != NULL && mono_ms() < deadline) {
        shardline_string_free(owner);
        sleep_ms(200);
    }
    if (!CHECK(owner == NULL, "the stalled coordinator's lease expired")) {
        shardline_string_free(owner);
        goto done;
    }

    OK(shardline_etcd_lease_new(e, "coordinator", "c2", 2000, &lease2));
    OK(shardline_etcd_store_new(e, "state", "coordinator", &store2));
    struct target second = {NULL, NULL, 0};
    if (!OK(etcd_driver(lease2, store2, &sent2, &second.d))) {
        goto done;
    }
    members(&second);
    OK(shardline_coordinator_driver_start(second.d));
    CHECK(is_active(second.d), "the successor is active");
    owner = holder_of(e, "coordinator", &token2);
    CHECK(str_is(owner, "c2") && token2 > token1, "c2 holds the lease with a larger token: %llu after %llu",
          (unsigned long long)token2, (unsigned long long)token1);
    shardline_string_free(owner);

    same = 1;
    for (int i = 0; i < FIRST; i++) {
        char *a = home(&second, i), *b = home(&ref, i);
        same &= a != NULL && str_is(a, b);
        shardline_string_free(a);
        shardline_string_free(b);
    }
    CHECK(same, "the successor restored every allocation from etcd");

    /* The regions register again with the new coordinator; new shards are decided as the
     * reference decides them. */
    for (struct target *t = &second; t != NULL; t = t == &second ? &ref : NULL) {
        regions(t);
        ask_homes(t, FIRST, SHARDS);
    }
    same = 1;
    for (int i = 0; i < SHARDS; i++) {
        char *a = home(&second, i), *b = home(&ref, i);
        same &= a != NULL && str_is(a, b);
        if (a == NULL || !str_is(a, b)) {
            fprintf(stderr, "  shard %d: successor %s, reference %s\n", i, a ? a : "-", b ? b : "-");
        }
        shardline_string_free(a);
        shardline_string_free(b);
    }
    CHECK(same, "shards 0..%d: the successor's decisions are the reference's", SHARDS - 1);

    /* The stalled one wakes: its renewal fails, it steps down, and it allocates nothing. */
    uint64_t at = 0;
    OK(shardline_coordinator_driver_poll(first.d, &has, &at));
    CHECK(!is_active(first.d), "the first coordinator stepped down");
    OK(shardline_coordinator_driver_token(first.d, &has, &own));
    CHECK(!has, "with no grant");
    ask_homes(&first, SHARDS, SHARDS + 1);
    char *late = home(&first, SHARDS);
    CHECK(late == NULL, "a coordinator without the lease allocates nothing: %s", late);
    shardline_string_free(late);
    CHECK(is_active(second.d), "the successor is still active");

    struct shardline_coordinator_input stop = c_input(SHARDLINE_COORDINATOR_INPUT_KIND_STOP);
    OK(shardline_coordinator_driver_feed(second.d, &stop));
    owner = holder_of(e, "coordinator", &token2);
    CHECK(owner == NULL, "stopping released the lease in etcd");
    shardline_string_free(owner);
    shardline_coordinator_driver_free(second.d);
done:
    shardline_coordinator_driver_free(first.d);
    shardline_coordinator_free(ref.c);
    shardline_etcd_lease_free(lease1);
    shardline_etcd_lease_free(lease2);
    shardline_etcd_store_free(store1);
    shardline_etcd_store_free(store2);
    shardline_etcd_free(e);
    end();
}

/* ---- worker ids on etcd ------------------------------------------------------------------------ */

static struct shardline_worker_id_holder *acquire(struct shardline_etcd *e, const char *owner) {
    char options[160];
    snprintf(options, sizeof options, "{\"owner\":\"%s\",\"incarnation\":1,\"ttlMs\":5000,\"workerBits\":4}", owner);
    struct shardline_worker_id_holder *h = NULL;
    OK(shardline_worker_id_holder_acquire_etcd(e, NULL, options, &h));
    return h;
}

static uint32_t worker_id(struct shardline_worker_id_holder *h) {
    uint32_t id = UINT32_MAX;
    OK(shardline_worker_id_holder_worker_id(h, &id));
    return id;
}

static void test_worker_ids(void) {
    begin("worker ids on etcd: the lowest free id, exclusive, unique ids, a successor's epoch");
    struct shardline_etcd *e = connect_etcd("ids");
    struct shardline_worker_id_holder *a = acquire(e, "a");
    struct shardline_worker_id_holder *b = acquire(e, "b");
    if (!CHECK(a != NULL && b != NULL, "two holders")) {
        shardline_worker_id_holder_free(a);
        shardline_worker_id_holder_free(b);
        shardline_etcd_free(e);
        end();
        return;
    }
    CHECK(worker_id(a) == 0 && worker_id(b) == 1, "ids 0 and 1: %u %u", worker_id(a), worker_id(b));
    static uint64_t ids[200];
    for (int i = 0; i < 100; i++) {
        OK(shardline_worker_id_holder_next_id(a, &ids[i]));
        OK(shardline_worker_id_holder_next_id(b, &ids[100 + i]));
    }
    int distinct = 1;
    for (int i = 0; i < 200; i++) {
        for (int j = 0; j < i; j++) {
            distinct &= ids[i] != ids[j];
        }
    }
    CHECK(distinct, "200 distinct ids");
    uint64_t epoch = 0;
    OK(shardline_worker_id_holder_epoch(a, &epoch));
    CHECK(epoch == 1, "first epoch: %llu", (unsigned long long)epoch);
    OK(shardline_worker_id_holder_release(a));
    struct shardline_worker_id_holder *c = acquire(e, "c");
    CHECK(c != NULL && worker_id(c) == 0, "the released id 0 is the lowest free again");
    OK(shardline_worker_id_holder_epoch(c, &epoch));
    CHECK(epoch == 2, "with the next epoch: %llu", (unsigned long long)epoch);
    uint64_t id = 0;
    OK(shardline_worker_id_holder_next_id(c, &id));
    int fresh = 1;
    for (int i = 0; i < 200; i++) {
        fresh &= ids[i] != id;
    }
    CHECK(fresh, "its ids are new");
    EXPECT(shardline_worker_id_holder_acquire_etcd(e, NULL, "{\"owner\":\"d\"}", &a), SHARDLINE_STATUS_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "incarnation"), "%s", last_error());
    shardline_worker_id_holder_free(a);
    shardline_worker_id_holder_free(b);
    shardline_worker_id_holder_free(c);

    /* Freed holders gave their ids back: a newcomer gets 0 again. */
    struct shardline_worker_id_holder *d = acquire(e, "d");
    CHECK(d != NULL && worker_id(d) == 0, "id 0 again after every holder went");
    shardline_worker_id_holder_free(d);
    shardline_etcd_free(e);
    end();
}

int main(void) {
    if (shardline_abi_version() != SHARDLINE_ABI_VERSION) {
        fprintf(stderr, "loaded ABI %u, compiled against %u\n", shardline_abi_version(), SHARDLINE_ABI_VERSION);
        return 2;
    }
    const char *env = getenv("SHARDLINE_ETCD_ENDPOINTS");
    static char endpoints[1024];
    snprintf(endpoints, sizeof endpoints, "%s", env ? env : "");
    for (char *tok = strtok(endpoints, ","); tok != NULL && g_n_endpoints < 8; tok = strtok(NULL, ",")) {
        g_endpoints[g_n_endpoints++] = tok;
    }
    snprintf(g_run, sizeof g_run, "c-test/%ld-%llu", (long)getpid(), (unsigned long long)mono_ms());

    test_bad_input();
    if (g_n_endpoints == 0) {
        fprintf(stderr, "SHARDLINE_ETCD_ENDPOINTS is not set: only the bad-input case ran\n");
        g_failed++;
    } else {
        test_lease();
        test_store();
        test_driver_takeover();
        test_worker_ids();
    }
    printf("c etcd: %d passed, %d failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
