"""The SVG and the HTML page opened in a real headless Chromium: drawn, not blank, names in the DOM.

Chromium runs offline: with a fresh profile and background networking,
component updates and sync switched off it makes no connection at all
(on a closed network it would otherwise log refused connections). The
screenshot is decoded here with zlib and struct -- no imaging library.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib
from collections import Counter
from pathlib import Path

import pytest

from flowgraph import CompiledGraph
from flowgraph.viz import build_diagram, render

from .conftest import HARD_NAMES, build_persona_app, build_react_app, run_react_thread
from .test_html import Page

CHROMIUM = shutil.which("chromium") or (
    "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed (Debian: apt-get install chromium); .ci/run installs it",
)
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)
NS = "{http://www.w3.org/2000/svg}"


def chromium(tmp_path: Path, *args: str) -> str:
    """Run headless Chromium with a fresh profile; its stdout."""
    assert CHROMIUM is not None
    profile = Path(tmp_path) / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    done = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def screenshot(tmp_path: Path, page: Path, width: int, height: int) -> list[list[tuple[int, ...]]]:
    shot = tmp_path / f"{page.stem}-shot.png"
    chromium(tmp_path, f"--window-size={width},{height}", f"--screenshot={shot}", page.as_uri())
    return decode_png(shot.read_bytes())


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode_png(data: bytes) -> list[list[tuple[int, ...]]]:
    """Rows of pixels of an 8-bit, non-interlaced grey/RGB/RGBA PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    position, idat = 8, b""
    header: tuple[int, ...] = ()
    while position < len(data):
        (length, kind) = struct.unpack(">I4s", data[position : position + 8])
        body = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        position += 12 + length
    width, height, depth, colour, _, _, interlace = header
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
    assert depth == 8 and interlace == 0, header
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[list[tuple[int, ...]]] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + _paeth(left, up, corner)) & 0xFF
        rows.append([tuple(line[x : x + 3]) for x in range(0, stride, channels)])
        previous = line
    return rows


def near(pixel: tuple[int, ...], colour: str, slack: int = 12) -> bool:
    target = bytes.fromhex(colour.lstrip("#"))
    return all(abs(a - b) <= slack for a, b in zip(pixel, target, strict=False))


def assert_not_blank(rows: list[list[tuple[int, ...]]]) -> Counter[tuple[int, ...]]:
    counts = Counter(pixel for row in rows for pixel in row)
    total = sum(counts.values())
    background, most = counts.most_common(1)[0]
    assert len(counts) >= 24, f"only {len(counts)} colours: a blank page"
    assert most / total < 0.97, f"{most / total:.1%} of the picture is {background}"
    return counts


def svg_text_of(dom: str) -> set[str]:
    root = ET.fromstring(dom.encode("utf-8"))
    return {"".join(t.itertext()) for t in root.iter(f"{NS}text")}


def test_decode_png_reads_what_zlib_wrote() -> None:
    # a 2x2 RGB image, one row filtered with Sub, one with Up
    rows = [b"\x01" + bytes([10, 20, 30, 5, 5, 5]), b"\x02" + bytes([1, 1, 1, 2, 2, 2])]
    ihdr = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
    png += chunk(b"IDAT", zlib.compress(b"".join(rows))) + chunk(b"IEND", b"")
    assert decode_png(png) == [[(10, 20, 30), (15, 25, 35)], [(11, 21, 31), (17, 27, 37)]]


def test_svg_draws_in_chromium(tmp_path: Path) -> None:
    app = build_persona_app()
    page = render(app, tmp_path / "persona.svg")
    root = ET.fromstring(page.read_bytes())
    width, height = (int(float(root.get(k, "0"))) + 1 for k in ("width", "height"))
    counts = assert_not_blank(screenshot(tmp_path, page, width, height))
    # the router's amber, the model's blue and the dark terminals are all on screen
    for colour in ("#fef3c7", "#dbeafe", "#1f2937"):
        assert sum(n for pixel, n in counts.items() if near(pixel, colour)) > 300, colour
    dom = chromium(tmp_path, "--dump-dom", page.as_uri())
    assert {n.label for n in build_diagram(app).nodes} <= svg_text_of(dom)


def test_html_overlay_draws_in_chromium(tmp_path: Path) -> None:
    app = build_react_app()
    run_react_thread(app, "t1")
    page = render(app, tmp_path / "react.html", thread_id="t1")
    counts = assert_not_blank(screenshot(tmp_path, page, 1000, 760))
    # the path overlay's accent colour is drawn: the page's script ran and the SVG rendered
    assert sum(n for pixel, n in counts.items() if near(pixel, "#e11d48", 30)) > 200


def test_html_dom_after_scripts_has_every_name(
    tmp_path: Path, hard_names_app: CompiledGraph
) -> None:
    page = render(hard_names_app, tmp_path / "hard.html")
    dom = chromium(tmp_path, "--dump-dom", page.as_uri())
    parsed = Page()
    parsed.feed(dom)
    assert set(HARD_NAMES) <= set(parsed.svg_texts)
    # the page's script ran without error: it made nodes focusable and took over sizing
    assert dom.count('tabindex="0"') == len(build_diagram(hard_names_app).nodes)
    assert 'preserveAspectRatio="xMidYMid meet"' in dom


def test_svg_dom_keeps_hard_names(tmp_path: Path, hard_names_app: CompiledGraph) -> None:
    page = render(hard_names_app, tmp_path / "hard.svg")
    dom = chromium(tmp_path, "--dump-dom", page.as_uri())
    assert set(HARD_NAMES) <= svg_text_of(dom)
