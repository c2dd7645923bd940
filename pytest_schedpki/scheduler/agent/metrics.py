"""``GET /v1/metrics`` (``command/agent/metrics_endpoint.go`` ``MetricsRequest``).

GET only (else ``405 Invalid method``); no ACL check and no query parsing. ``?format=prometheus``:
with telemetry's ``prometheus_metrics`` off, ``415 Prometheus is not enabled``; on (a dev agent's
default), the Prometheus text exposition format (``text/plain; version=0.0.4; charset=utf-8``).
Otherwise go-metrics' ``InmemSink.DisplayMetrics`` (hashicorp/go-metrics v0.6.0
``inmem_endpoint.go``): ``MetricsSummary`` ``{"Timestamp", "Gauges", "PrecisionGauges", "Points",
"Counters", "Samples"}``, each list ``[]`` when empty, gauges ``{"Name", "Value", "Labels"}``;
``Timestamp`` is the reported interval's start, ``time.Time.String()`` in UTC
(``2026-11-28 12:30:00 +0000 UTC``), the previous 10-second interval.

The double reports a few runtime gauges (as ``nomad.runtime.*`` names); clients read the shape,
not the values.
"""

from __future__ import annotations

import datetime

from werkzeug.wrappers import Request, Response

from ..model import SchedulerError
from ..request import query_arg
from .profile import profile_of
from .reply import json_answer

INTERVAL_S = 10  # Nomad's in-memory sink interval
PROMETHEUS_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _gauges(state) -> dict[str, int]:
    return {"nomad.runtime.num_goroutines": 57, "nomad.runtime.gc_pause_ns": 0,
            "nomad.nomad.leader.barrier": 0} if state.leader else {"nomad.runtime.num_goroutines": 57,
                                                                       "nomad.runtime.gc_pause_ns": 0}


def summary(state) -> dict:
    """The ``MetricsSummary`` the double answers."""
    now = state.clock.now().astimezone(datetime.UTC)
    start = int(now.timestamp()) // INTERVAL_S * INTERVAL_S - INTERVAL_S
    stamp = datetime.datetime.fromtimestamp(start, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S +0000 UTC")
    gauges = [{"Name": name, "Value": value, "Labels": {}} for name, value in sorted(_gauges(state).items())]
    return {"Timestamp": stamp, "Gauges": gauges, "PrecisionGauges": [], "Points": [], "Counters": [],
            "Samples": []}


def prometheus_text(state) -> str:
    """The gauges in Prometheus' text format (dots become underscores, as go-metrics' sink does)."""
    lines = []
    for name, value in sorted(_gauges(state).items()):
        metric = name.replace(".", "_").replace("-", "_")
        lines += [f"# HELP {metric} {metric}", f"# TYPE {metric} gauge", f"{metric} {value}"]
    return "\n".join(lines) + "\n"


def metrics(state, request: Request) -> Response:
    """``GET /v1/metrics`` (see the module doc)."""
    if query_arg(request, "format") == "prometheus":
        if not profile_of(state).prometheus_metrics:
            raise SchedulerError(415, "Prometheus is not enabled")
        return Response(prometheus_text(state), status=200, content_type=PROMETHEUS_TYPE)
    return json_answer(request, summary(state))
