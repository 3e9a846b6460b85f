"""Run by scripts/test-install.sh in a fresh venv holding only the wheel from dist/.

    python smoke.py VECTORS.json ETCD_ENDPOINT

Prints the lines the harness checks: DECIDE (decisions of the vectors, JSON), PHASES (a
coordinator's phase after start and after its lease is granted) and ETCD (a coordinator
driver that took its lease and restored its state from a real etcd).
"""

import json
import sys
import uuid

import shardline

vectors_path, endpoint = sys.argv[1], sys.argv[2]
with open(vectors_path, encoding="utf-8") as f:
    print("DECIDE", json.dumps(shardline.decide(json.load(f))))

coordinator = shardline.Coordinator("least-shard", "pekko://app@10.0.0.1:2552")
coordinator.start(0)
started = coordinator.phase
coordinator.lease_granted(0, 1, 60_000)
print("PHASES", started, coordinator.phase)

etcd = shardline.Etcd([endpoint], f"shardline-install-test/{uuid.uuid4()}")
driver = shardline.CoordinatorDriver(
    "least-shard", "pekko://app@10.0.0.1:2552", transport=lambda envelope: None,
    clock=shardline.ManualClock(0),
    lease=etcd.lease("coordinator", "install-test", ttl_ms=10_000),
    store=etcd.store("state", bound_to_lease="coordinator"),
)
driver.start()
print("ETCD", driver.token, "active" if driver.is_active else driver.phase)
