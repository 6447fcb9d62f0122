"""The checkpoint codec's room: msgpack with a closed registry of types (see `serde`).

`core`: the encoder and decoder, and library values; `messages`: flowgraph's
message classes; `models`: registered pydantic models (and their schema
evolution); `paths`: where in a value an unsupported type sits, for the error.
"""
