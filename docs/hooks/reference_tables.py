"""MkDocs hook: reference tables generated from the code at build time, so they cannot go stale.

Two markers, each alone on a line of a page:

``{{ schema: KIND dotted.path.Model }}``
    One table per section of the pydantic model: every field with its type, default, bounds and a
    meaning. Meanings come from ``field_descriptions.yaml`` beside this file (under ``KIND``). A
    field without a meaning, or a meaning for a field that no longer exists, is a build warning, so
    ``mkdocs build --strict`` fails until the table and the schema agree.
``{{ cli: dotted.module }}``
    Every command of the ``pvsst`` command line (the module's click command), with its arguments and
    options, taken from the same objects that parse the command line.

Module paths are tried as written and then under the ``pvsst.`` namespace, so the pages keep
building while the import names move.
"""
from __future__ import annotations

import enum
import importlib
import json
import logging
import re
import types
import typing
from pathlib import Path
from typing import Any

import annotated_types
import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import to_jsonable_python

from pvsst.core.defaults import IDENTIFIER_PATTERN as IDENTIFIER

log = logging.getLogger("mkdocs.hooks.reference_tables")

MARKER = re.compile(r"^\{\{\s*(schema|cli):\s*([^}]*?)\s*\}\}\s*$", re.MULTILINE)
DESCRIPTIONS = Path(__file__).with_name("field_descriptions.yaml")


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if "{{" not in markdown:
        return markdown
    return MARKER.sub(lambda match: _render(match[1], match[2], page.file.src_uri), markdown)


def _render(kind: str, argument: str, where: str) -> str:
    if kind == "cli":
        return cli_reference(argument)
    descriptions_kind, _, model_path = argument.partition(" ")
    descriptions = yaml.safe_load(DESCRIPTIONS.read_text(encoding="utf-8"))[descriptions_kind]
    return schema_reference(_import(model_path.strip()), descriptions, where)


def _import(dotted: str) -> Any:
    """The object at ``module.attr`` (or ``module`` itself), trying the ``pvsst.`` namespace second."""
    for candidate in (dotted, f"pvsst.{dotted}"):
        module_name, attr = candidate, None
        while module_name:
            try:
                module = importlib.import_module(module_name)
            except ModuleNotFoundError:
                module_name, _, tail = module_name.rpartition(".")
                attr = tail if attr is None else f"{tail}.{attr}"
                continue
            obj = module
            for part in (attr.split(".") if attr else []):
                obj = getattr(obj, part)
            return obj
    raise ImportError(f"reference_tables: cannot import {dotted!r}")


# ---------------------------------------------------------------- schema tables

def schema_reference(model: type[BaseModel], descriptions: dict[str, str], where: str) -> str:
    sections: list[tuple[str, type[BaseModel]]] = []
    seen: set[str] = set()
    _collect_sections(model, "", sections)
    out: list[str] = []
    for path, section in sections:
        heading = "Top level" if not path else f"`{path}`"
        out += [f"### {heading}", ""]
        if path and (intro := descriptions.get(path + "/")):
            out += [intro.strip(), ""]
            seen.add(path + "/")
        out += ["| field | type | default | meaning |", "|---|---|---|---|"]
        for name, field in section.model_fields.items():
            key = f"{path}.{name}" if path else name
            meaning = descriptions.get(key)
            if meaning is None:
                log.warning("%s: the field %s of %s has no meaning in %s", where, key, model.__name__,
                            DESCRIPTIONS.name)
                meaning = ""
            seen.add(key)
            out.append(f"| `{name}` | {_cell(_type_text(field))} | {_cell(_default_text(field))} | "
                       f"{_cell(meaning.strip())} |")
        out.append("")
    for stale in sorted(set(descriptions) - seen):
        log.warning("%s: %s describes %s, which %s does not have", where, DESCRIPTIONS.name, stale,
                    model.__name__)
    return "\n".join(out)


def _collect_sections(model: type[BaseModel], path: str, sections: list) -> None:
    sections.append((path, model))
    for name, field in model.model_fields.items():
        for sub in _models_in(field.annotation):
            _collect_sections(sub, f"{path}.{name}" if path else name, sections)


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        found += [m for m in _models_in(arg) if m not in found]
    return found


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")



def _type_text(field: FieldInfo) -> str:
    text = _annotation_text(field.annotation)
    bounds = list(dict.fromkeys(_bounds(field.metadata) + _nested_bounds(field.annotation)))
    if text.startswith("text"):
        bounds = ["non-empty" if b == "at least 1" else b for b in bounds]
        if f"matching `{IDENTIFIER}`" in bounds:
            text = "[identifier](#identifiers)"
            bounds = [b for b in bounds if b not in (f"matching `{IDENTIFIER}`", "at most 80 characters")]
    elif text.startswith(("list", "mapping")):
        bounds = [b + (" entry" if b == "at least 1" else " entries") if b.startswith("at least") else b
                  for b in bounds]
    return text + (f" ({', '.join(bounds)})" if bounds else "")


def _annotation_text(annotation: Any) -> str:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _annotation_text(args[0])
    if origin is typing.Literal:
        return "one of " + ", ".join(f"`{json.dumps(a)}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        parts = [_annotation_text(a) for a in args if a is not type(None)]
        text = " or ".join(dict.fromkeys(parts))
        return text + (" or null" if type(None) in args else "")
    if origin in (list, tuple, set, frozenset):
        return f"list of {_entries(args[0])}" if args else "list"
    if origin is dict:
        return f"mapping of {_annotation_text(args[0])} to {_entries(args[1])}" if args else "mapping"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "section (below)"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "one of " + ", ".join(f"`{m.value}`" for m in annotation)
    return {int: "integer", float: "number", str: "text", bool: "true / false"}.get(
        annotation, getattr(annotation, "__name__", str(annotation)))


def _entries(annotation: Any) -> str:
    models = _models_in(annotation)
    return "entries (below)" if models else _annotation_text(annotation)


def _nested_bounds(annotation: Any) -> list[str]:
    """Bounds written inside ``Optional[Annotated[...]]`` (the field's own metadata is empty then)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        metadata: list = []
        for item in args[1:]:
            metadata += item.metadata if isinstance(item, FieldInfo) else [item]
        return _bounds(metadata)
    if origin in (typing.Union, types.UnionType):
        return [b for a in args for b in _nested_bounds(a)]
    return []


def _bounds(metadata: list) -> list[str]:
    out: list[str] = []
    for item in metadata:
        for attr, symbol in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            if getattr(item, attr, None) is not None and not isinstance(item, type):
                out.append(f"{symbol} {getattr(item, attr)}")
        if isinstance(item, annotated_types.MinLen) or getattr(item, "min_length", None):
            out.append(f"at least {item.min_length}")
        if isinstance(item, annotated_types.MaxLen) or getattr(item, "max_length", None):
            out.append(f"at most {item.max_length} characters")
        if getattr(item, "pattern", None):
            out.append(f"matching `{item.pattern}`")
    return out


def _default_text(field: FieldInfo) -> str:
    if field.is_required():
        return "**required**"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        return "(its fields' defaults)"
    if value is None:
        return "null"
    return f"`{json.dumps(to_jsonable_python(value))}`"


# ---------------------------------------------------------------- command line

def cli_reference(module_path: str) -> str:
    module = _import(module_path)
    command = module._command() if hasattr(module, "_command") else _typer_command(module.app)
    out: list[str] = []
    _command_reference(command, None, "pvsst", out)
    return "\n".join(out)


def _typer_command(app: Any) -> Any:
    import typer

    return typer.main.get_command(app)


def _command_reference(command: Any, parent_ctx: Any, name: str, out: list[str]) -> None:
    ctx = type(command).context_class(command, parent=parent_ctx, info_name=name)
    path = ctx.command_path
    subcommands = command.list_commands(ctx) if hasattr(command, "list_commands") else []
    if parent_ctx is not None:
        level = "#" * min(path.count(" ") + 1, 4)
        out += [f"{level} `{path}`", ""]
        if command.help:
            out += [_help_text(command.help), ""]
        if not subcommands:
            out += ["```text", _usage(command, ctx), "```", ""]
            rows = [_parameter_row(p, ctx) for p in command.params if not getattr(p, "hidden", False)]
            if rows := [r for r in rows if r]:
                out += ["| argument / option | meaning |", "|---|---|", *rows, ""]
    for sub in subcommands:
        child = command.get_command(ctx, sub)
        if child is not None and not getattr(child, "hidden", False):
            _command_reference(child, ctx, sub, out)


def _help_text(text: str) -> str:
    # click's "\b" marks a paragraph it must not rewrap; Markdown needs no marker.
    return re.sub(r"^\s*\x08\s*$", "", text, flags=re.MULTILINE).strip()


def _parameter_row(param: Any, ctx: Any) -> str | None:
    if param.name == "help":
        return None
    record = param.get_help_record(ctx)
    names, meaning = record if record is not None else (param.name.upper(), getattr(param, "help", "") or "")
    if param.param_type_name == "argument":
        names = names.split(" ", 1)[0].upper()
    return f"| `{_cell(names)}` | {_cell(meaning.strip())} |"


def _usage(command: Any, ctx: Any) -> str:
    # Arguments as the help screen shows them on a terminal: SPEC, not {spec}.
    usage = re.sub(r"\{(\w+)\}", lambda m: m[1].upper(), command.get_usage(ctx).strip())
    return re.sub(r"\[([a-z_]+)\]", lambda m: f"[{m[1].upper()}]", usage)
