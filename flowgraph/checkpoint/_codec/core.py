"""The codec's engine: one encoder and one decoder per call, and their dispatch tables.

msgpack packs the plain values (None, bool, int, float, str, bytes, list,
dict) in C. Everything else reaches `Encoder.default` (the packer runs with
`strict_types`, so tuples, subclasses and enum members do too), which looks
the exact type up in `ENCODERS` and returns an ext value: a type code and the
packed fields. `Decoder.ext_hook` looks the code up in `DECODERS`. Both
tables are filled by the modules that own the types (this one: the standard
library values; `messages`: messages; `models`: registered
classes), and nothing else can ever be decoded: a code the table does not
hold is an error, and no decoder imports or calls anything named by the data.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Final, TypeAlias
from zoneinfo import ZoneInfo

import msgpack  # type: ignore[import-untyped]  # msgpack ships no type information

from flowgraph._lazy import load_provider
from flowgraph.errors import DeserializationError

__all__ = [
    "DECODERS",
    "ENCODERS",
    "MAX_NESTING",
    "Corrupt",
    "Decoder",
    "Encoder",
    "Unsupported",
    "ext",
]

# Ext type codes: the wire's type tags. Append only; never reuse a number.
TUPLE: Final = 1
SET: Final = 2
FROZENSET: Final = 3
DATETIME: Final = 4
DATE: Final = 5
TIME: Final = 6
TIMEDELTA: Final = 7
UUID: Final = 8
DECIMAL: Final = 9
BIGINT: Final = 10
ENUM: Final = 11
MODEL: Final = 12
# 16-39: flowgraph's own classes, see _codec.messages.
COMMAND: Final = 40
SEND: Final = 41
# 40-47: the graph's values (Command, Send), registered by flowgraph.graph._core.codec, which
# owns the classes: a tool's or a cached node's Command is stored as what it returned.
# `import flowgraph` names that module the "codec" provider (`flowgraph._lazy`): the
# first value no table has an entry for imports it, and is looked up again.

_NESTED_BUFFER = 1024
"""Initial buffer of the packers that encode one object's fields (they grow as needed)."""
_LARGE_BUFFER = 256 * 1024
"""Initial buffer of the packers that write whole states and message lists (msgpack's default)."""


_providers_loaded: list[bool] = []


def _more_codecs() -> bool:
    """Load the "codec" provider's tables, the first time a value finds no entry.

    True if that added tables (look again); the graph's Command and Send codecs
    arrive this way when nothing imported `flowgraph.graph._core.codec` yet.
    """
    if _providers_loaded:
        return False
    _providers_loaded.append(True)
    return load_provider("codec")


class Unsupported(Exception):
    """Raised inside the packer for a value no encoder takes; dumps turns it into a
    SerializationError with the value's path."""

    def __init__(self, value: object, reason: str = "") -> None:
        super().__init__(reason or type(value).__qualname__)
        self.value = value
        self.reason = reason


class Corrupt(DeserializationError):
    """Data that decodes as msgpack but is not what this codec writes."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"Corrupted checkpoint data: {detail}")


_new_tuple = tuple.__new__


def ext(code: int, data: bytes) -> msgpack.ExtType:
    """An ExtType without its Python-level argument checks (the codes here are valid)."""
    return _new_tuple(msgpack.ExtType, (code, data))


MAX_NESTING: Final = 100
"""How deep ext values (messages, models, tuples, ...) may nest inside each other.

Each level is a few Python frames on both sides; the limit keeps a hostile
payload, or a value that contains itself, well inside the recursion limit.
"""


class Encoder:
    """The state of one `dumps` call: a packer per nesting depth and the type-name table.

    An object's fields are packed into its ext payload by the packer one level
    deeper than the one packing the object, so packers are never re-entered;
    they are reused across siblings, so a call allocates a handful, not one
    per object. A registered class's name is written in full the first time
    and as its index in the table afterwards, which keeps a list of a
    thousand models from repeating a thousand names.
    """

    __slots__ = ("_depth", "_names", "_packers", "_streams", "_unicode_errors", "default")

    def __init__(self, unicode_errors: str | None = None) -> None:
        self._unicode_errors = unicode_errors
        self.default: Callable[[object], object] = self._default
        self._packers = [self._packer(autoreset=False, buffer=_LARGE_BUFFER)]
        self._streams: list[Any] = []
        self._depth = 0
        self._names: dict[str, int] = {}

    def _packer(self, *, autoreset: bool, buffer: int = _NESTED_BUFFER) -> Any:
        return msgpack.Packer(
            default=self.default,
            strict_types=True,
            unicode_errors=self._unicode_errors,
            autoreset=autoreset,
            buf_size=buffer,
        )

    def __enter__(self) -> Encoder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Drop the packers now: they and this encoder refer to each other (`default`),
        and a cycle would keep their buffers until the next garbage collection."""
        self._packers.clear()
        self._streams.clear()

    def reset(self) -> None:
        """Ready for another value, after `encode` succeeded and its view was released."""
        self._packers[0].reset()
        self._names.clear()

    def encode(self, value: object) -> memoryview:
        """The msgpack body of `value`, a view of the packer's buffer (no copy made)."""
        packer = self._packers[0]
        packer.pack(value)
        body: memoryview = packer.getbuffer()
        return body

    def _default(self, value: object) -> object:
        encode = ENCODERS.get(type(value))
        if encode is None:
            encode = ENCODERS.get(type(value)) if _more_codecs() else None
            if encode is None:
                raise Unsupported(value)
        return encode(self, value)

    def _deeper(self, value: object) -> int:
        depth = self._depth + 1
        if depth > MAX_NESTING:
            raise Unsupported(
                value, f"objects nest more than {MAX_NESTING} deep (does it contain itself?)"
            )
        return depth

    def pack(self, value: object) -> bytes:
        """Pack one object's fields, one level below the packer that is packing the object."""
        depth = self._depth + 1
        packers = self._packers
        if depth >= len(packers):  # depth 0 is the top packer, which does not autoreset
            while len(packers) <= self._deeper(value):
                packers.append(self._packer(autoreset=True))
        self._depth = depth
        data: bytes = packers[depth].pack(value)
        self._depth = depth - 1  # on an error the whole encoder is dropped, so no finally
        return data

    def pack_each(
        self, items: list[Any], convert: Mapping[type, Callable[[Any], object]]
    ) -> bytes | None:
        """Pack `items` as one array of `convert[type(item)](item)`; None if a type is missing.

        Each converted item is packed and dropped before the next is made, so a
        long list never has all its converted copies alive at once.
        """
        depth = self._deeper(items)
        streams = self._streams
        while len(streams) <= depth:
            streams.append(None)
        packer = streams[depth]
        if packer is None:
            packer = streams[depth] = self._packer(autoreset=False, buffer=_LARGE_BUFFER)
        self._depth = depth
        names_before = len(self._names)
        packer.pack_array_header(len(items))
        pack = packer.pack
        for item in items:
            make = convert.get(type(item))
            if make is None:  # forget what the dropped items wrote, names included
                packer.reset()
                self._depth = depth - 1
                if len(self._names) != names_before:
                    self._names = dict(list(self._names.items())[:names_before])
                return None
            pack(make(item))
        data: bytes = packer.bytes()
        packer.reset()
        self._depth = depth - 1
        return data

    def name_ref(self, name: str) -> str | int:
        """What to write for a registered name: the name, or its index if written before."""
        index = self._names.get(name)
        return name if index is None else index

    def name_written(self, name: str) -> None:
        """Enter `name` in the table once its object is complete (the decoder's order too)."""
        names = self._names
        if name not in names:
            names[name] = len(names)


class Decoder:
    """The state of one `loads` call: an unpacker per nesting depth, and the name table.

    Ext payloads are unpacked by `Unpacker`s kept per depth, not by
    `msgpack.unpackb`: unpackb keeps its 40 KB parse stack on the C stack,
    so nested payloads would recurse through C deep enough to crash a
    thread; an Unpacker keeps it on the heap. (The body itself, one level,
    goes through unpackb, which reads it in place.)
    """

    __slots__ = ("_depth", "_names", "_unicode_errors", "_unpackers", "ext_hook")

    def __init__(self, unicode_errors: str | None = None) -> None:
        self._unicode_errors = unicode_errors
        self._names: list[str] = []
        self._unpackers: list[Any] = []
        self._depth = 0
        self.ext_hook: Callable[[int, bytes], object] = self._ext_hook

    def __enter__(self) -> Decoder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Drop the unpackers now (they and this decoder refer to each other)."""
        self._unpackers.clear()

    def _unpacker(self, depth: int) -> Any:
        unpackers = self._unpackers
        if depth == len(unpackers):
            if depth > MAX_NESTING:
                raise Corrupt(f"values nest more than {MAX_NESTING} deep")
            # Ext -1 is msgpack's timestamp, decoded by msgpack itself; we never write
            # it, and timestamp=2 makes a forged one a plain int, not a foreign type.
            unpackers.append(
                msgpack.Unpacker(
                    ext_hook=self.ext_hook,
                    strict_map_key=False,
                    timestamp=2,
                    unicode_errors=self._unicode_errors,
                    max_buffer_size=0,
                    read_size=_NESTED_BUFFER,  # not 1 MB: loading one message is common
                )
            )
        return unpackers[depth]

    def decode_body(self, body: memoryview) -> object:
        """The whole body, read in place by one unpackb; ext payloads go to `decode`."""
        return msgpack.unpackb(
            body,
            ext_hook=self.ext_hook,
            strict_map_key=False,
            timestamp=2,  # see _unpacker
            unicode_errors=self._unicode_errors,
        )

    def decode(self, data: bytes) -> object:
        """The one msgpack value `data` holds, ext values decoded through DECODERS."""
        depth = self._depth
        unpacker = self._unpacker(depth)
        start = unpacker.tell()
        unpacker.feed(data)
        self._depth = depth + 1
        value = unpacker.unpack()
        self._depth = depth
        if unpacker.tell() - start != len(data):
            raise Corrupt("bytes left over after a value")
        return value

    def decode_each(
        self, data: bytes, build: Mapping[int, Callable[[list[Any]], object]]
    ) -> list[Any]:
        """The array `data` holds, each item a record `[code, ...]` built by `build[code]`.

        Records are read and built one at a time, so they are never all alive at once.
        """
        depth = self._depth
        unpacker = self._unpacker(depth)
        start = unpacker.tell()
        unpacker.feed(data)
        self._depth = depth + 1
        built = []
        for _ in range(unpacker.read_array_header()):
            record = unpacker.unpack()
            if type(record) is not list or not record or record[0] not in build:
                raise Corrupt("bad record in a list")
            built.append(build[record[0]](record))
        self._depth = depth
        if unpacker.tell() - start != len(data):
            raise Corrupt("bytes left over after a value")
        return built

    def _ext_hook(self, code: int, data: bytes) -> object:
        decode = DECODERS.get(code)
        if decode is None:
            decode = DECODERS.get(code) if _more_codecs() else None
            if decode is None:
                raise Corrupt(f"unknown type code {code}")
        return decode(self, data)

    def resolve(self, ref: object) -> str:
        """The registered name a `name_ref` stands for."""
        names = self._names
        if type(ref) is str:
            if ref not in names:
                names.append(ref)
            return ref
        if type(ref) is int and 0 <= ref < len(names):
            return names[ref]
        raise Corrupt(f"bad type name reference {ref!r}")


EncodeFn: TypeAlias = Callable[[Encoder, Any], object]
DecodeFn: TypeAlias = Callable[[Decoder, bytes], object]

ENCODERS: dict[type, EncodeFn] = {}
"""Exact type -> encoder returning what msgpack should pack instead (usually an ExtType)."""
DECODERS: dict[int, DecodeFn] = {}
"""Ext code -> decoder building the value from the ext payload."""


def _decode_list(decoder: Decoder, data: bytes) -> list[Any]:
    items = decoder.decode(data)
    if type(items) is not list:
        raise Corrupt("expected an array")
    return items


def _sequence_codec(cls: type[tuple[Any, ...] | set[Any] | frozenset[Any]], code: int) -> None:
    def encode(encoder: Encoder, value: Any) -> object:
        return ext(code, encoder.pack(list(value)))

    def decode(decoder: Decoder, data: bytes) -> object:
        return cls(_decode_list(decoder, data))

    ENCODERS[cls] = encode
    DECODERS[code] = decode


_sequence_codec(tuple, TUPLE)
_sequence_codec(set, SET)
_sequence_codec(frozenset, FROZENSET)


def _encode_bigint(encoder: Encoder, value: int) -> object:
    """Ints beyond 64 bits (msgpack's own range) as two's-complement bytes."""
    return ext(BIGINT, value.to_bytes(value.bit_length() // 8 + 1, "big", signed=True))


def _decode_bigint(decoder: Decoder, data: bytes) -> object:
    if not data:
        raise Corrupt("empty integer")
    return int.from_bytes(data, "big", signed=True)


ENCODERS[int] = _encode_bigint  # the packer only hands over ints it cannot pack itself
DECODERS[BIGINT] = _decode_bigint


def _microseconds(delta: dt.timedelta) -> int:
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _tz_fields(tz: dt.tzinfo | None, offset: dt.timedelta | None, value: object) -> list[Any]:
    """The zone after a date/time's fields: [] naive, [offset_us], [offset_us, name]
    for a named fixed zone, [offset_us, None, key] for a ZoneInfo (the offset is the
    fallback if the key is unknown where it is loaded)."""
    if tz is None:
        return []
    if offset is None:
        raise Unsupported(value, f"its tzinfo {tz!r} gives no UTC offset")
    micros = _microseconds(offset)
    if type(tz) is dt.timezone:
        name = tz.tzname(None)
        if tz is dt.UTC or name == dt.timezone(offset).tzname(None):
            return [micros]
        return [micros, name]
    if type(tz) is ZoneInfo and tz.key is not None:
        return [micros, None, tz.key]
    return [micros]  # pytz, dateutil and other zones keep their offset at this instant


def _encode_datetime(encoder: Encoder, value: dt.datetime) -> object:
    fields = [
        value.year,
        value.month,
        value.day,
        value.hour,
        value.minute,
        value.second,
        value.microsecond,
        value.fold,
        *_tz_fields(value.tzinfo, value.utcoffset(), value),
    ]
    return ext(DATETIME, encoder.pack(fields))


_ZONE_KEY = re.compile(r"[A-Za-z0-9_+-]{1,64}(?:/[A-Za-z0-9_+-]{1,64}){0,3}\Z")
"""What an IANA zone key looks like ("Europe/Paris", "Etc/GMT+5"): no dots, no paths."""


def _fixed_zone(micros: object, name: object) -> dt.timezone:
    if type(micros) is not int or (name is not None and type(name) is not str):
        raise Corrupt("bad time zone")
    offset = dt.timedelta(microseconds=micros)
    return dt.timezone(offset) if name is None else dt.timezone(offset, name)


def _decode_datetime(decoder: Decoder, data: bytes) -> object:
    fields = _decode_list(decoder, data)
    if not 8 <= len(fields) <= 11:
        raise Corrupt("bad datetime")
    year, month, day, hour, minute, second, micro, fold, *zone = fields
    if not zone:
        return dt.datetime(year, month, day, hour, minute, second, micro, fold=fold)
    fixed = _fixed_zone(zone[0], zone[1] if len(zone) > 1 else None)
    if len(zone) == 3:
        key = zone[2]
        tz: dt.tzinfo = fixed
        if type(key) is str and _ZONE_KEY.match(key):  # a zone name, never a path
            try:
                tz = ZoneInfo(key)
            except Exception:  # unknown here: keep the instant exact with the fixed offset
                pass
        moment = dt.datetime(year, month, day, hour, minute, second, micro, tz, fold=fold)
        if moment.utcoffset() == fixed.utcoffset(None):
            return moment
    return dt.datetime(year, month, day, hour, minute, second, micro, fixed, fold=fold)


def _encode_date(encoder: Encoder, value: dt.date) -> object:
    return ext(DATE, encoder.pack([value.year, value.month, value.day]))


def _decode_date(decoder: Decoder, data: bytes) -> object:
    year, month, day = _decode_list(decoder, data)
    return dt.date(year, month, day)


def _encode_time(encoder: Encoder, value: dt.time) -> object:
    tz = value.tzinfo
    if tz is not None and type(tz) is not dt.timezone:
        raise Unsupported(value, "a time of day keeps only a fixed-offset datetime.timezone")
    fields = [value.hour, value.minute, value.second, value.microsecond, value.fold]
    return ext(TIME, encoder.pack([*fields, *_tz_fields(tz, value.utcoffset(), value)]))


def _decode_time(decoder: Decoder, data: bytes) -> object:
    fields = _decode_list(decoder, data)
    if not 5 <= len(fields) <= 7:
        raise Corrupt("bad time")
    hour, minute, second, micro, fold, *zone = fields
    tz = _fixed_zone(zone[0], zone[1] if len(zone) > 1 else None) if zone else None
    return dt.time(hour, minute, second, micro, tz, fold=fold)


def _encode_timedelta(encoder: Encoder, value: dt.timedelta) -> object:
    return ext(TIMEDELTA, encoder.pack([value.days, value.seconds, value.microseconds]))


def _decode_timedelta(decoder: Decoder, data: bytes) -> object:
    days, seconds, micros = _decode_list(decoder, data)
    if not (type(days) is int and type(seconds) is int and type(micros) is int):
        raise Corrupt("bad timedelta")
    return dt.timedelta(days=days, seconds=seconds, microseconds=micros)


def _decode_uuid(decoder: Decoder, data: bytes) -> object:
    return uuid.UUID(bytes=data)


def _decode_decimal(decoder: Decoder, data: bytes) -> object:
    return Decimal(data.decode("ascii"))


ENCODERS[dt.datetime] = _encode_datetime
DECODERS[DATETIME] = _decode_datetime
ENCODERS[dt.date] = _encode_date
DECODERS[DATE] = _decode_date
ENCODERS[dt.time] = _encode_time
DECODERS[TIME] = _decode_time
ENCODERS[dt.timedelta] = _encode_timedelta
DECODERS[TIMEDELTA] = _decode_timedelta
ENCODERS[uuid.UUID] = lambda encoder, value: ext(UUID, value.bytes)
DECODERS[UUID] = _decode_uuid
ENCODERS[Decimal] = lambda encoder, value: ext(DECIMAL, str(value).encode("ascii"))
DECODERS[DECIMAL] = _decode_decimal
