"""MkDocs hook: give mkdocstrings (griffe) a ``pvsst/`` tree it can walk.

griffe finds a package by its folder and walks sub-folders, so it cannot follow pyproject's package-dir
mapping (``pvsst.sim`` lives in ``sim/``, not ``pvsst/sim/``): ``::: pvsst.sim.model`` fails with
``KeyError: 'sim'``, with the repository root or the editable install on its search path. This hook
builds ``build/api-src/pvsst/`` out of symbolic links, one per mapped folder, before the build (in
``$PVSST_API_SRC`` instead where that is set: the tests build the site without writing into the
checkout); point the python handler at it in mkdocs.yml::

    hooks:
      - docs/hooks/api_source.py
    plugins:
      - mkdocstrings:
          handlers:
            python:
              paths: [!ENV [PVSST_API_SRC, build/api-src]]
"""
from __future__ import annotations

import os
import tomllib
from pathlib import Path

from mkdocs.plugins import event_priority

ROOT = Path(__file__).resolve().parents[2]
TREE = Path(os.environ.get("PVSST_API_SRC") or ROOT / "build" / "api-src")


@event_priority(100)  # before mkdocstrings' own on_config, which drops search paths that do not exist yet
def on_config(config, **kwargs):
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    for name, folder in sorted(mapping.items()):
        link = TREE.joinpath(*name.split("."))
        target = ROOT / folder
        if name == "pvsst":
            link.mkdir(parents=True, exist_ok=True)
            for child in target.iterdir():        # __init__.py, core/, ...: the root package's own files
                _link(link / child.name, child)
        else:
            _link(link, target)
    return config


def _link(link: Path, target: Path) -> None:
    if link.is_symlink() and Path(os.readlink(link)) == target:
        return
    if link.is_symlink() or link.exists():
        link.unlink()
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target, target_is_directory=target.is_dir())
