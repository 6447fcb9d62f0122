"""The Celery worker of the `--queue` test: `celery -A queue_worker worker` (from tests/server).

Its broker is $FG_TEST_BROKER; its store, shared with the server, $FLOWGRAPH_DB.
"""

from __future__ import annotations

import os

from celery import Celery

from flowgraph.integrations.celery import make_thread_task

app = Celery("flowgraph-server-queue-test", broker=os.environ["FG_TEST_BROKER"],
             backend=os.environ["FG_TEST_BROKER"])  # fmt: skip
app.conf.update(broker_connection_retry_on_startup=True, worker_hijack_root_logger=False)
run = make_thread_task(app, "apps:whoami_graph", retry_delay=0.1, max_retry_delay=1.0)
