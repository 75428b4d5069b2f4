"""AWS event-stream frames, as Bedrock's ConverseStream sends them (botocore only decodes them)."""

from __future__ import annotations

import binascii
import json
import struct


def _header(name: str, value: str) -> bytes:
    encoded = value.encode()
    return bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(encoded)) + encoded


def frame(headers: dict[str, str], payload: dict) -> bytes:
    """One AWS event-stream message: prelude (total length, headers length, CRC32 of the two),
    headers (name length, name, type 7 = string, value length, value), payload, CRC32 of it all."""
    header_bytes = b"".join(_header(k, v) for k, v in headers.items())
    body = json.dumps(payload).encode()
    total = 12 + len(header_bytes) + len(body) + 4
    prelude = struct.pack(">II", total, len(header_bytes))
    message = prelude + struct.pack(">I", binascii.crc32(prelude)) + header_bytes + body
    return message + struct.pack(">I", binascii.crc32(message))


def event(name: str, payload: dict) -> bytes:
    """An event frame of a Converse stream (messageStart, contentBlockDelta, ..., metadata)."""
    return frame({":message-type": "event", ":event-type": name, ":content-type": "application/json"}, payload)
