"""What shardline is doing, in the tools operators already run: its notices (decision events
included) as ``logging`` records, and its metrics as a Prometheus collector.

Both only translate: the notices, their explanations and the metrics (OpenTelemetry-style
names such as ``shardline.coordinator.shards``) come from the core, the same in every
language.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Iterable, Iterator, Optional

from . import wire

log = logging.getLogger("shardline")

#: Notices that mean something was refused, failed or lost (the core marks them in the wire
#: schema, the same in every language); the rest are logged as INFO.
WARNING_NOTICES = wire.WARNING_NOTICES


def log_notices(
    notices: Iterable[dict[str, Any]],
    logger: Optional[logging.Logger] = None,
    **context: str,
) -> None:
    """Logs each notice (from ``take_notices()``, or a step machine's ``notice`` outputs) as
    one record: ``shardline allocated {"shard": "7", ...}``. The notice itself is the record's
    ``shardline_notice`` attribute and ``context`` (e.g. ``region="a"``) its
    ``shardline_context``, for structured handlers."""
    logger = logger or log
    for notice in notices:
        kind = notice.get("type", "?")
        level = logging.WARNING if kind in WARNING_NOTICES else logging.INFO
        if not logger.isEnabledFor(level):
            continue
        rest = {k: v for k, v in notice.items() if k != "type"}
        where = "".join(f" {k}={v}" for k, v in sorted(context.items()))
        logger.log(
            level,
            "shardline %s%s %s",
            kind,
            where,
            json.dumps(rest, sort_keys=True, default=str),
            extra={"shardline_notice": notice, "shardline_context": context},
        )


class MetricsCollector:
    """A ``prometheus_client`` collector of the metrics of coordinators, regions and their
    drivers: ``REGISTRY.register(MetricsCollector().add(coordinator).add(region, region="a"))``.

    Names are the core's with dots as underscores (``shardline_region_buffered``); counters
    get Prometheus's ``_total``. A metric's attributes and the labels given to ``add`` become
    labels (dots as underscores)."""

    def __init__(self) -> None:
        self._sources: list[tuple[Any, dict[str, str]]] = []

    def add(self, source: Any, **labels: str) -> "MetricsCollector":
        """Collects ``source.metrics()`` at every scrape, with ``labels`` on each sample."""
        self._sources.append((source, labels))
        return self

    def collect(self) -> Iterator[Any]:
        try:
            from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("MetricsCollector needs prometheus_client (pip install prometheus-client)") from e
        samples: dict[str, list[tuple[dict[str, str], float]]] = {}
        info: dict[str, tuple[str, str]] = {}
        for source, labels in self._sources:
            for m in source.metrics():
                name = m["name"].replace(".", "_")
                attrs = {k.replace(".", "_"): str(v) for k, v in m.get("attributes", {}).items()}
                samples.setdefault(name, []).append(({**labels, **attrs}, float(m["value"])))
                info.setdefault(name, (m["kind"], m.get("description", "")))
        for name, rows in samples.items():
            kind, doc = info[name]
            keys = sorted({k for labels, _ in rows for k in labels})
            family_type = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
            family = family_type(name, doc, labels=keys)
            for labels, value in rows:
                family.add_metric([labels.get(k, "") for k in keys], value)
            yield family
