"""The checkpoint codec: values to bytes and back, with msgpack, building only known types.

    >>> from pydantic import BaseModel
    >>> from flowgraph.checkpoint import serde
    >>> from flowgraph.messages import HumanMessage
    >>> @serde.register(name="docs.Note")
    ... class Note(BaseModel):
    ...     text: str
    ...     pinned: bool = False
    >>> state = {"messages": [HumanMessage("hi", id="1")], "notes": [Note(text="x")]}
    >>> data = serde.dumps(state)
    >>> serde.loads(data) == state
    True
    >>> serde.dumps({"notes": [{"when": object()}]})
    Traceback (most recent call last):
    flowgraph.errors.SerializationError: Cannot serialize object at notes[0].when: ...

What round-trips exactly: None, bool, int (any size), float, str, bytes,
list, dict (any supported keys), tuple, set, frozenset, datetime (naive or
aware: its UTC offset, a fixed zone's name, and a `zoneinfo.ZoneInfo` zone
by key — falling back to the fixed offset where that key is unknown or its
rules changed; other tzinfo classes come back as their fixed offset), date,
time (naive or fixed offset), timedelta, UUID, Decimal, every message and
content part class of `flowgraph.messages`, `MessagesState`, and pydantic
models and Enums registered with `register`. Types are exact: a subclass of
a supported type must be registered itself. A `MessageList` (what
`add_messages` returns) loads as a `MessageList` (a list whose items are
all built-in messages; otherwise as a plain list), a plain list as a list.
Loaded messages are equal to the originals and have every field in
`model_fields_set`, as after `messages_from_dicts(messages_to_dicts(...))`.

Format, version 1 (8-byte header, then one msgpack object)::

    b"FG"  version (1 byte)  flags (1 byte)  CRC32 (4 bytes, big-endian)  body

The CRC32 covers the version, the flags and the body. Flag 1 means the
body's strings may hold lone surrogates (written with UTF-8
`surrogatepass`; only set when a string needs it). Everything beyond plain
msgpack is an ext value whose payload is the packed fields (`_codec` lists
the codes): messages and parts as positional records, registered classes
as `[name, {field: value}]` with defaults omitted and each name written in
full once per payload (see `_codec.models` for schema evolution). A later
format gets a new version number and keeps reading this one.

What `loads` trusts: nothing before the checksum matches (so corruption
is caught before any object is built); after it, the structure is checked
as it is read (an unexpected type code, record shape or field type is a
DeserializationError), messages are built without running pydantic
validation (they were valid when written; their field types are still
checked), and registered models are built like `model_construct`, with
their stored values as they are. No class is ever looked up by a name from
the data except in the registry, nothing is imported or evaluated, values
nest at most 100 deep, and a failure never returns a partial
value.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from typing import Any, Final, TypeVar, overload

from flowgraph.checkpoint._codec.core import Decoder, Encoder, Unsupported
from flowgraph.checkpoint._codec.models import register_class
from flowgraph.checkpoint._codec.paths import explain
from flowgraph.errors import DeserializationError, SerializationError

__all__ = ["FORMAT_VERSION", "dumps", "loads", "register"]

FORMAT_VERSION: Final = 1
"""The version `dumps` writes; `loads` reads it and every earlier one."""

_MAGIC: Final = b"FG"
_HEADER = struct.Struct(">2sBBI")
_SURROGATES: Final = 1
_KNOWN_FLAGS: Final = _SURROGATES

_T = TypeVar("_T", bound=type)


def dumps(obj: object) -> bytes:
    """Encode `obj` as a versioned, checksummed msgpack checkpoint.

    Raises SerializationError for a value the codec does not know; its
    `path` (e.g. `values.notes[3].when`) and `type_name` say which, and the
    message says how to fix it (usually `serde.register(TheClass)`).
    """
    try:
        try:
            return _dumps(obj, 0)
        except UnicodeEncodeError:  # a lone surrogate (from json.loads of bad escapes, say)
            return _dumps(obj, _SURROGATES)
    except SerializationError:
        raise
    except Unsupported as exc:
        raise explain(obj, exc) from None
    except Exception as exc:
        raise explain(obj, exc) from exc


_FREE: list[Encoder] = []
"""Encoders ready for reuse (a checkpointed step encodes a few small values; building
their packers each time would cost more than packing). `list.pop` and `append` are
atomic, so each thread, and each nested call, takes an encoder no one else holds."""
_FREE_MAX: Final = 4
_REUSE_MAX_BYTES: Final = 256 * 1024
"""An encoder that packed more than this is dropped, so no large buffer stays alive."""
_HEADS: Final = (_MAGIC + bytes((FORMAT_VERSION, 0)), _MAGIC + bytes((FORMAT_VERSION, _SURROGATES)))
"""The header before the CRC, by flags."""
_CRC_SEEDS: Final = tuple(zlib.crc32(head[2:]) for head in _HEADS)
"""The CRC32 of the version and flags bytes, by flags: the body's CRC continues from it."""


def _dumps(obj: object, flags: int) -> bytes:
    if flags:
        encoder = Encoder("surrogatepass")
    else:
        try:
            encoder = _FREE.pop()
        except IndexError:
            encoder = Encoder()
    try:
        body = encoder.encode(obj)
    except BaseException:
        encoder.close()
        raise
    data = b"".join((_HEADS[flags], zlib.crc32(body, _CRC_SEEDS[flags]).to_bytes(4, "big"), body))
    body.release()
    if flags or len(data) > _REUSE_MAX_BYTES or len(_FREE) >= _FREE_MAX:
        encoder.close()
    else:
        encoder.reset()
        _FREE.append(encoder)
    return data


def loads(data: bytes | bytearray | memoryview) -> Any:
    """Decode bytes written by `dumps` (any version up to FORMAT_VERSION).

    Raises DeserializationError for anything else: bytes that are not a
    flowgraph checkpoint, from a newer format, truncated or altered (the
    CRC32 fails), or naming a class that is not registered.
    """
    try:
        view = memoryview(data).cast("B")
    except TypeError:
        raise DeserializationError(
            f"loads takes the bytes dumps returned, not {type(data).__qualname__}"
        ) from None
    if len(view) < _HEADER.size or view[:2].tobytes() != _MAGIC:
        raise DeserializationError(
            f"Not flowgraph checkpoint data: it starts with {bytes(view[:8])!r}, "
            f"not the {_MAGIC!r} header"
        )
    _, version, flags, checksum = _HEADER.unpack_from(view)
    if version != FORMAT_VERSION:
        if version > FORMAT_VERSION:
            raise DeserializationError(
                f"The checkpoint is in format version {version}, newer than this flowgraph "
                f"reads (up to {FORMAT_VERSION}); upgrade flowgraph to load it"
            )
        raise DeserializationError(f"Unknown checkpoint format version {version}")
    if flags & ~_KNOWN_FLAGS:
        raise DeserializationError(
            f"The checkpoint uses format flags {flags:#04x} this flowgraph does not know; "
            "upgrade flowgraph to load it"
        )
    body = view[_HEADER.size :]
    if zlib.crc32(body, zlib.crc32(view[2:4])) != checksum:
        raise DeserializationError(
            "Corrupted checkpoint data: the CRC32 checksum does not match "
            "(the bytes were truncated or altered after they were written)"
        )
    try:
        with Decoder("surrogatepass" if flags & _SURROGATES else None) as decoder:
            return decoder.decode_body(body)
    except DeserializationError:
        raise
    except Exception as exc:
        raise DeserializationError(f"Corrupted checkpoint data: {exc}") from exc


@overload
def register(cls: _T, /, *, name: str | None = None) -> _T: ...
@overload
def register(*, name: str | None = None) -> Callable[[_T], _T]: ...
def register(cls: _T | None = None, /, *, name: str | None = None) -> _T | Callable[[_T], _T]:
    """Allow a pydantic model class or an Enum class in checkpoints; returns the class.

    Use as `serde.register(Note)`, `@serde.register` or
    `@serde.register(name="notes.Note")`. Data names the class by `name`
    (default `f"{cls.__module__}.{cls.__qualname__}"`), and `loads` builds
    only classes registered under the name it reads, so register before
    loading too, and pin `name` if the class may move. Registering a class
    again under the same name does nothing; messages, parts and
    `MessagesState` are registered already. Raises SerializationError for a
    name taken by another class or a class already registered under another
    name.
    """
    if cls is None:

        def decorate(target: _T) -> _T:
            register_class(target, name)
            return target

        return decorate
    register_class(cls, name)
    return cls
