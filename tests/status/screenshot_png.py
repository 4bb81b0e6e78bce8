"""Read the pixels of a PNG (8-bit RGB or RGBA, not interlaced: what Chromium's screenshots are)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path


def read_png(path: Path) -> tuple[int, int, list[bytearray], int]:
    """(width, height, rows of raw bytes, bytes per pixel)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    offset, chunks, header = 8, [], b""
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind, body = data[offset + 4 : offset + 8], data[offset + 8 : offset + 8 + length]
        offset += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and not interlace, (depth, colour, interlace)
    channels = 4 if colour == 6 else 3
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    rows: list[bytearray] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(line)
        previous = line
    return width, height, rows, channels


def pixel(image: tuple[int, int, list[bytearray], int], x: int, y: int) -> str:
    """The colour at (x, y) as #rrggbb."""
    _, _, rows, channels = image
    r, g, b = rows[y][x * channels : x * channels + 3]
    return f"#{r:02x}{g:02x}{b:02x}"
