"""Reading a spec file: YAML that rejects duplicate keys (PyYAML keeps the last one silently).

A preregistered spec must mean one thing, so ``seeds:`` written twice is an error, not an override.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from pvsst.core.errors import InputError


# libyaml's parser where PyYAML was built with it (the PyPI wheels are): ~10x faster than the pure-Python
# one, with the same safe constructors and the same line and column in its errors.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _UniqueKeyLoader(_SafeLoader):
    """PyYAML's safe loader (libyaml's where available) that raises on a key repeated within one mapping."""


def _construct_unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


def read_yaml_mapping(path: str | Path) -> dict[str, Any]:
    """The top-level mapping of a YAML file; unreadable files, bad YAML or another top level raise ``InputError``.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "s.yaml"); _ = open(p, "w").write("a: 1\\na: 2\\n")
    ...     try:
    ...         read_yaml_mapping(p)
    ...     except InputError as err:
    ...         print(err.field, "|", err.problem)
    yaml | duplicate key 'a' at line 2, column 1
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(str(path), "file", f"cannot read ({getattr(err, 'strerror', None) or err})") from None
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = err.problem or err.context or "invalid YAML"
        if not problem.startswith("duplicate key"):
            problem = f"invalid YAML: {problem}"
        raise InputError(str(path), "yaml", f"{problem}{where}") from None
    except yaml.YAMLError as err:
        raise InputError(str(path), "yaml", f"invalid YAML: {str(err).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise InputError(str(path), "spec", f"the file must hold a mapping of spec sections, "
                                            f"not {type(data).__name__}")
    return data
