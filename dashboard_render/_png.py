"""PNG encoding with fixed settings: the same pixels always give the same bytes.

Pillow's PNG writer tries all five row filters on every row, which costs as much as the rest of
the render; screenshots of UIs compress about as well with no filter (flat colours, long runs).
So the dashboard is written as: IHDR (8-bit RGB), one IDAT (filter 0 on every row, zlib level 1),
IEND — no text, time or gamma chunks, nothing that varies between runs.
"""

from __future__ import annotations

import struct
import zlib

from PIL import Image

COMPRESS_LEVEL = 1
_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode_png(image: Image.Image) -> bytes:
    """`image` (converted to RGB) as PNG bytes."""
    rgb = image if image.mode == "RGB" else image.convert("RGB")
    width, height = rgb.size
    raw = rgb.tobytes()
    stride = width * 3
    # Each row is prefixed with its filter type, 0 (none).
    rows = b"".join(b"\x00" + raw[y * stride : (y + 1) * stride] for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit, truecolour, no interlace
    return _SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(rows, COMPRESS_LEVEL)) + _chunk(b"IEND", b"")
