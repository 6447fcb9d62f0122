"""A process writing to a shared store, for test_processes.

`python _worker.py SPEC NAME COUNT GATE`: opens the store SPEC names (JSON:
module, cls, args, kwargs) -- creating its tables if it is first, as the
other workers do at the same moment -- prints READY, waits for the file
GATE to exist, then writes COUNT items of its own and overwrites one shared
item as often, reading its own newest item back after each write.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time


def main() -> None:
    spec, name, count, gate = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
    cls = getattr(importlib.import_module(spec["module"]), spec["cls"])
    store = cls(*spec["args"], **spec.get("kwargs", {}))
    store.put(("warmup",), name, {"pid": os.getpid()})
    print("READY", flush=True)
    while not os.path.exists(gate):
        time.sleep(0.002)
    for i in range(count):
        store.put(("proc", name), f"k{i:03}", {"by": name, "i": i})
        store.put(("proc", "shared"), "last", {"by": name, "i": i})
        newest = store.search(("proc", name), limit=1)
        if [item.key for item in newest] != [f"k{i:03}"]:
            raise SystemExit(f"{name} wrote k{i:03} and read back {newest}")
    store.close()
    print("DONE", flush=True)


if __name__ == "__main__":
    main()
