"""Replace an output directory in one step, so readers never see a half-written one."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def swap_in_directory(staging: Path, target: Path) -> None:
    """Move the finished ``staging`` directory to ``target``, retiring any old ``target`` first.

    Both must be on one filesystem (make ``staging`` beside ``target``). The old directory is renamed
    out of the way before the new one is renamed in, so ``target`` is always complete or absent.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "new").mkdir(); _ = (root / "new" / "a.csv").write_text("x")
    >>> swap_in_directory(root / "new", root / "analysis")
    >>> sorted(p.name for p in (root / "analysis").iterdir()), (root / "new").exists()
    (['a.csv'], False)
    """
    if target.exists():
        retired = Path(tempfile.mkdtemp(prefix=f".{target.name}-old-", dir=target.parent))
        os.replace(target, retired / target.name)
        os.replace(staging, target)
        shutil.rmtree(retired, ignore_errors=True)
    else:
        os.replace(staging, target)
