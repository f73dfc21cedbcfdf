"""Building chat messages, and the image-free view of a request used for cache keys."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from typing import Any

Message = dict[str, Any]
"""An OpenAI chat message as a plain dict (`{"role": ..., "content": ...}`)."""

_MIME_BY_SIGNATURE = {b"\x89PNG\r\n\x1a\n": "image/png", b"\xff\xd8\xff": "image/jpeg"}


def image_data_url(image: bytes, mime: str | None = None) -> str:
    """`image` as a `data:<mime>;base64,...` URL; the MIME type is sniffed (PNG/JPEG) when not given.

    Raises:
        ValueError: `image` is empty or neither PNG nor JPEG and no `mime` was given.
    """
    if not image:
        raise ValueError("image is empty")
    if mime is None:
        mime = next((sniffed for signature, sniffed in _MIME_BY_SIGNATURE.items() if image.startswith(signature)), None)
    if mime is None:
        raise ValueError("image is neither PNG nor JPEG; pass mime=... explicitly")
    return f"data:{mime};base64,{base64.b64encode(image).decode('ascii')}"


def system_message(text: str) -> Message:
    """A system message."""
    return {"role": "system", "content": text}


def assistant_message(text: str) -> Message:
    """An assistant message, for replaying history (e.g. the CUA's earlier replies)."""
    return {"role": "assistant", "content": text}


def user_message(
    text: str | None = None,
    images: Sequence[bytes] = (),
    *,
    images_first: bool = False,
) -> Message:
    """A user message with optional images as `image_url` content parts (base64 data URLs).

    Text-only messages use the plain string form, which every OpenAI-compatible server accepts.
    `images_first` puts the images before the text (some VLM prompts expect the screenshot first).

    Raises:
        ValueError: neither text nor images were given, or an image is not PNG/JPEG.
    """
    if not images:
        if text is None:
            raise ValueError("user_message needs text or images")
        return {"role": "user", "content": text}
    image_parts = [{"type": "image_url", "image_url": {"url": image_data_url(image)}} for image in images]
    text_parts = [{"type": "text", "text": text}] if text else []
    parts = image_parts + text_parts if images_first else text_parts + image_parts
    return {"role": "user", "content": parts}


def count_images(value: Any) -> int:
    """How many images (chat `image_url` parts or Responses `input_image` items) `value` contains."""
    if isinstance(value, dict):
        own = 1 if value.get("type") in ("image_url", "input_image") else 0
        return own + sum(count_images(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_images(v) for v in value)
    return 0


def hash_inline_images(value: Any) -> Any:
    """A copy of `value` with every base64 data URL replaced by `sha256:<hex of the decoded bytes>`.

    Cache keys are built from this view: it is small, and it changes whenever an image changes.
    """
    if isinstance(value, str):
        if value.startswith("data:") and ";base64," in value[:100]:
            payload = value.split(",", 1)[1]
            try:
                data = base64.b64decode(payload, validate=False)
            except ValueError:
                data = payload.encode()
            return f"sha256:{hashlib.sha256(data).hexdigest()}"
        return value
    if isinstance(value, dict):
        return {k: hash_inline_images(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [hash_inline_images(v) for v in value]
    return value
