/* Run by scripts/test-install.sh, compiled against the install tree in dist/c with
 * `pkg-config --cflags --libs shardline` (and once statically, with --static).
 *
 *   ./smoke VECTORS.json ETCD_ENDPOINT
 *
 * Prints the lines the harness checks: DECIDE (decisions of the vectors, JSON), PHASES (a
 * coordinator's phase after start and after its lease is granted) and, when the library has etcd
 * (pkg-config's Cflags then define SHARDLINE_FEATURE_ETCD), ETCD (a coordinator driver that took
 * its lease and restored its state from a real etcd). */
#include <shardline.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(shardline_status status, const char *what) {
    if (status != SHARDLINE_STATUS_OK) {
        char message[512];
        shardline_last_error_message(message, sizeof message, NULL);
        fprintf(stderr, "%s: status %d: %s\n", what, (int)status, message);
        exit(1);
    }
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *text = malloc((size_t)size + 1);
    if (!text || fread(text, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "%s: read failed\n", path);
        exit(1);
    }
    text[size] = '\0';
    fclose(f);
    return text;
}

#ifdef SHARDLINE_FEATURE_ETCD
static uint64_t zero_clock(void *userdata) {
    (void)userdata;
    return 0;
}

static shardline_status drop_envelope(void *userdata, const struct shardline_envelope *envelope) {
    (void)userdata;
    (void)envelope;
    return SHARDLINE_STATUS_OK;
}

static void etcd_line(const char *endpoint) {
    struct shardline_etcd *etcd = NULL;
    char namespace[96];
    snprintf(namespace, sizeof namespace, "shardline-install-test/c-%p", (void *)&etcd);
    check(shardline_etcd_connect(&endpoint, 1, namespace, SHARDLINE_ETCD_DEFAULT_TIMEOUT_MS, &etcd),
          "shardline_etcd_connect");
    struct shardline_etcd_lease *lease = NULL;
    struct shardline_etcd_store *store = NULL;
    check(shardline_etcd_lease_new(etcd, "coordinator", "install-test", 10000, &lease), "shardline_etcd_lease_new");
    check(shardline_etcd_store_new(etcd, "state", "coordinator", &store), "shardline_etcd_store_new");
    struct shardline_strategy *strategy = NULL;
    check(shardline_strategy_new("{\"kind\":\"least-shard\"}", &strategy), "shardline_strategy_new");
    struct shardline_coordinator *coordinator = NULL;
    check(shardline_coordinator_new(strategy, "pekko://app@10.0.0.1:2552", NULL, &coordinator),
          "shardline_coordinator_new");
    struct shardline_coordinator_callbacks callbacks;
    memset(&callbacks, 0, sizeof callbacks);
    callbacks.struct_size = (uint32_t)sizeof callbacks;
    callbacks.now_ms = zero_clock;
    callbacks.send = drop_envelope;
    struct shardline_coordinator_driver *driver = NULL;
    check(shardline_coordinator_driver_new_etcd(coordinator, &callbacks, lease, store, &driver),
          "shardline_coordinator_driver_new_etcd");
    check(shardline_coordinator_driver_start(driver), "shardline_coordinator_driver_start");
    bool active = false, has = false;
    uint64_t token = 0;
    check(shardline_coordinator_driver_is_active(driver, &active), "shardline_coordinator_driver_is_active");
    check(shardline_coordinator_driver_token(driver, &has, &token), "shardline_coordinator_driver_token");
    printf("ETCD %llu %s\n", (unsigned long long)token, active ? "active" : "inactive");
    shardline_coordinator_driver_free(driver);
    shardline_etcd_store_free(store);
    shardline_etcd_lease_free(lease);
    shardline_etcd_free(etcd);
}
#endif

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s VECTORS.json ETCD_ENDPOINT\n", argv[0]);
        return 2;
    }
    if (shardline_abi_version() != SHARDLINE_ABI_VERSION) {
        fprintf(stderr, "library ABI %u, header ABI %d\n", shardline_abi_version(), SHARDLINE_ABI_VERSION);
        return 1;
    }
    char *vectors = read_file(argv[1]);
    char *decisions = NULL;
    check(shardline_decide(vectors, false, &decisions), "shardline_decide");
    printf("DECIDE %s\n", decisions);
    shardline_string_free(decisions);
    free(vectors);

    struct shardline_strategy *strategy = NULL;
    check(shardline_strategy_new("{\"kind\":\"least-shard\"}", &strategy), "shardline_strategy_new");
    struct shardline_coordinator *coordinator = NULL;
    check(shardline_coordinator_new(strategy, "pekko://app@10.0.0.1:2552", NULL, &coordinator),
          "shardline_coordinator_new");
    const char *started = NULL, *granted = NULL;
    check(shardline_coordinator_start(coordinator, 0), "shardline_coordinator_start");
    check(shardline_coordinator_phase(coordinator, &started), "shardline_coordinator_phase");
    check(shardline_coordinator_handle(coordinator, 0,
                                       "{\"type\":\"leaseGranted\",\"token\":1,\"validUntilMs\":60000}"),
          "shardline_coordinator_handle");
    check(shardline_coordinator_phase(coordinator, &granted), "shardline_coordinator_phase");
    printf("PHASES %s %s\n", started, granted);
    shardline_coordinator_free(coordinator);
#ifdef SHARDLINE_FEATURE_ETCD
    etcd_line(argv[2]);
#endif
    return 0;
}
