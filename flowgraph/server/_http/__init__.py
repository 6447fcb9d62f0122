"""The HTTP surface: the Starlette app, its routes by resource, auth, and serving it.

`app` builds the ASGI app (`create_app`) from the routes of `assistants`,
`threads`, `runs` and `store` and the inspector's static files (`ui`,
which mounts the `flowgraph/server/ui/` folder); `context` is what every
route reaches (graphs, registry, runs, thread views); `fields` reads
request bodies and query parameters; `auth` is the token check and
`serve` runs the app with uvicorn. The top room of `flowgraph.server`: it
may import `_runs`, `_wire` and `_records`, and nothing below imports it;
the package facade re-exports `create_app`, `serve` and `running` from it.
"""
