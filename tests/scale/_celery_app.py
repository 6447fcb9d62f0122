"""The Celery app of the scale tests: `celery -A scale._celery_app worker` (tests/ on the path).

Its broker, and the stores its tasks run against, come from the environment
the test starts the worker with: $FLOWGRAPH_SCALE_BROKER and
$FLOWGRAPH_SCALE_STORES (JSON: backend name -> store URL). One task per
store, `scale.run.<name>`, all served by the same worker processes.
"""

from __future__ import annotations

import json
import os
from typing import Any

from celery import Celery

from flowgraph.integrations.celery import make_thread_task

GRAPH = "scale._graph:builder"


def make_app(broker: str, stores: dict[str, str]) -> tuple[Any, dict[str, Any]]:
    """The Celery app and its tasks by store name (the same in the test and in the workers)."""
    app = Celery("flowgraph_scale_tests", broker=broker)
    app.conf.update(
        task_ignore_result=True,
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
        worker_redirect_stdouts=False,
    )
    tasks = {
        name: make_thread_task(
            app, GRAPH, store=url, name=f"scale.run.{name}", retry_delay=0.05, max_retry_delay=1.0
        )
        for name, url in stores.items()
    }
    return app, tasks


app, tasks = make_app(
    os.environ.get("FLOWGRAPH_SCALE_BROKER", "memory://"),
    json.loads(os.environ.get("FLOWGRAPH_SCALE_STORES", "{}")),
)
