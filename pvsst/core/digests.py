"""The sha256 of a file's bytes, as every provenance record in pvsst takes it.

Examples
--------
>>> import tempfile
>>> path = Path(tempfile.mkdtemp()) / "x.txt"
>>> _ = path.write_bytes(b"abc")
>>> file_sha256(path)[:16]
'ba7816bf8f01cfea'
"""
from __future__ import annotations

import hashlib
from pathlib import Path


def file_sha256(path: str | Path) -> str:
    """sha256 (hex) of the file's bytes, read in 1 MiB blocks; ``OSError`` if it cannot be read."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
