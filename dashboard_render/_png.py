"""PNG encoding with fixed settings: the same pixels always give the same bytes.

Pillow's PNG writer tries all five row filters on every row, which costs as much as the rest of
the render; screenshots of UIs compress about as well with no filter (flat colours, long runs).
So the dashboard is written as IHDR (8-bit RGB), one IDAT, IEND — no text, time or gamma chunks.
The IDAT's zlib stream is deflated in PARTS independent pieces on threads (as pigz does: each
piece but the last ends on a byte boundary with a full flush) and joined with one Adler-32; the
number of pieces is fixed, so the bytes do not depend on how many cores the machine has.
"""

from __future__ import annotations

import struct
import zlib
from concurrent.futures import ThreadPoolExecutor

from PIL import Image

COMPRESS_LEVEL = 1
PARTS = 2
_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_ZLIB_HEADER = b"\x78\x01"  # deflate, 32 KiB window, fastest-compression hint


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _deflate(data: bytes, last: bool) -> bytes:
    compressor = zlib.compressobj(COMPRESS_LEVEL, zlib.DEFLATED, -15)  # raw deflate: no header of its own
    return compressor.compress(data) + compressor.flush(zlib.Z_FINISH if last else zlib.Z_FULL_FLUSH)


def encode_png(image: Image.Image) -> bytes:
    """`image` (converted to RGB) as PNG bytes."""
    rgb = image if image.mode == "RGB" else image.convert("RGB")
    width, height = rgb.size
    raw = rgb.tobytes()
    stride = width * 3
    rows = b"".join(b"\x00" + raw[y * stride : (y + 1) * stride] for y in range(height))  # filter 0 per row
    cut = [len(rows) * part // PARTS for part in range(PARTS + 1)]
    pieces = [rows[cut[i] : cut[i + 1]] for i in range(PARTS)]
    with ThreadPoolExecutor(max_workers=PARTS) as pool:  # zlib releases the GIL while deflating
        deflated = list(pool.map(_deflate, pieces, [i == PARTS - 1 for i in range(PARTS)]))
    stream = _ZLIB_HEADER + b"".join(deflated) + struct.pack(">I", zlib.adler32(rows) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit, truecolour, no interlace
    return _SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", stream) + _chunk(b"IEND", b"")
