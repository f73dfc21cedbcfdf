"""A screenshot becomes an observation frame: H×W×3 uint8, writable, the same pixels whatever the PNG's mode."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from cua import Viewport
from environments._spaces import decode_png


def png_of(pixels: np.ndarray, mode: str) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels).convert(mode).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.mark.parametrize("mode", ["RGB", "RGBA"])
def test_a_frame_has_the_screenshots_pixels_and_can_be_written(mode):
    pixels = np.zeros((200, 300, 3), dtype=np.uint8)
    pixels[1, 2] = (200, 10, 30)
    pixels[199, 299] = (0, 255, 7)
    frame = decode_png(png_of(pixels, mode), Viewport(width=300, height=200))
    assert frame.shape == (200, 300, 3) and frame.dtype == np.uint8
    assert (frame == pixels).all()
    frame[0, 0] = 1  # the caller owns it
    assert frame[0, 0, 0] == 1


def test_a_screenshot_not_the_viewports_size_is_refused():
    with pytest.raises(RuntimeError, match="not the viewport's"):
        decode_png(png_of(np.zeros((200, 300, 3), dtype=np.uint8), "RGB"), Viewport(width=320, height=200))
