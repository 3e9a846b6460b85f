/* Run by scripts/test-install.sh, compiled against the install tree in dist/c with
 * `pkg-config --cflags --libs shardline` (and once statically, with --static).
 *
 *   ./smoke VECTORS.json
 *
 * Prints the lines the harness checks: DECIDE (decisions of the vectors, JSON) and PHASES (a
 * coordinator's phase after start and after its lease is granted). */
#include <shardline.h>
#include <stdio.h>
#include <stdlib.h>

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

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s VECTORS.json\n", argv[0]);
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
    return 0;
}
