"""Reading a user's YAML file (a spec, an instrument, a topic file, a materials accounts file) within bounds.

Duplicate keys are an error (PyYAML keeps the last one silently): a preregistered spec must mean one
thing, so ``seeds:`` written twice is an error, not an override. A spec is also read within bounds: the
file must be a regular file of at most :data:`MAX_SPEC_BYTES`, and the document, with every alias
expanded, at most :data:`MAX_SPEC_NODES` values: nine nested aliases of ten (a "billion laughs") are
refused in milliseconds, before anything is built from them.
An integer too long to read (Python reads at most 4,300 digits) or nesting too deep is one line too.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from pvsst.core.errors import InputError
from pvsst.core.input_files import regular_file

MAX_SPEC_BYTES = 16 << 20
MAX_SPEC_NODES = 200_000
"""Values in a spec with its aliases expanded (the largest shipped instrument holds a few thousand)."""


# libyaml's parser where PyYAML was built with it (the PyPI wheels are): ~10x faster than the pure-Python
# one, with the same safe constructors and the same line and column in its errors.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _UniqueKeyLoader(_SafeLoader):
    """PyYAML's safe loader (libyaml's where available) that raises on a key repeated within one mapping."""


def _construct_unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(None, None, "a key that is not a single value",
                                                    key_node.start_mark) from None
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
    data = read_yaml_file(path, "yaml", file_field="file")
    if not isinstance(data, dict):
        raise InputError(str(path), "spec", f"the file must hold a mapping of spec sections, "
                                            f"not {type(data).__name__}")
    return data


def read_yaml_file(path: str | Path, field: str, *, file_field: str | None = None) -> Any:
    """The document of a YAML file read within bounds; every problem is an ``InputError`` naming ``field``
    (a file that is missing, not regular, too large or unreadable names ``file_field`` where given).

    The file must be a regular file of at most :data:`MAX_SPEC_BYTES` whose document, aliases expanded,
    holds at most :data:`MAX_SPEC_NODES` values, with no key repeated within a mapping.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "t.yaml")
    ...     _ = open(p, "w").write("a: &a [x, x, x, x, x, x, x, x, x, x]\\n" + "".join(
    ...         f"{c}: &{c} [*{p_}, *{p_}, *{p_}, *{p_}, *{p_}, *{p_}, *{p_}, *{p_}, *{p_}, *{p_}]\\n"
    ...         for p_, c in zip("abcdefgh", "bcdefghi")))
    ...     try:
    ...         read_yaml_file(p, "topics")
    ...     except InputError as err:
    ...         print(err.field, "|", err.problem[:37])
    topics | invalid YAML: the document expands to
    """
    file_field = file_field or field
    path = regular_file(path, file_field)
    if path.stat().st_size > MAX_SPEC_BYTES:
        raise InputError(str(path), file_field, f"{path.stat().st_size:,} bytes: larger than the "
                         f"{MAX_SPEC_BYTES:,} a YAML file pvsst reads may be")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(str(path), file_field, f"cannot read ({getattr(err, 'strerror', None) or err})") from None
    try:
        return _load(text)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = err.problem or err.context or "invalid YAML"
        if not problem.startswith("duplicate key"):
            problem = f"invalid YAML: {problem}"
        raise InputError(str(path), field, f"{problem}{where}") from None
    except yaml.YAMLError as err:
        raise InputError(str(path), field, f"invalid YAML: {str(err).splitlines()[0]}") from None
    except RecursionError:
        raise InputError(str(path), field, "nested too deeply") from None
    except ValueError as err:  # an integer of more digits than Python reads
        raise InputError(str(path), field, f"a value pvsst cannot read: {str(err)[:120]}") from None


def _load(text: str) -> Any:
    """The document in ``text``: composed, its size with aliases expanded checked, then built."""
    loader = _UniqueKeyLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        size = expanded_size(node)
        if size > MAX_SPEC_NODES:
            raise yaml.YAMLError(f"the document expands to more than {MAX_SPEC_NODES:,} values (aliases "
                                 "expanded); a spec holds far fewer (an alias bomb?)")
        return loader.construct_document(node)
    finally:
        loader.dispose()


def expanded_size(root: yaml.Node, limit: int = MAX_SPEC_NODES) -> int:
    """How many values a composed YAML document holds with every alias expanded (counting stops past
    ``limit``); an alias is the node it names, shared, so this takes one visit per distinct node.

    Examples
    --------
    >>> loader = _UniqueKeyLoader("a: &x [1, 2]\\nb: [*x, *x, *x]")
    >>> expanded_size(loader.get_single_node())
    16
    """
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        children = ([part for pair in node.value for part in pair] if isinstance(node, yaml.MappingNode)
                    else list(node.value) if isinstance(node, yaml.SequenceNode) else [])
        if children_done or not children:
            sizes[id(node)] = min(limit + 1, 1 + sum(sizes[id(child)] for child in children))
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)
    return sizes[id(root)]
