"""Read and validate a study-materials directory; render its templates; hash its files for the lock.

Every problem (a missing file, an unknown or missing placeholder, a bad block, a bad persona table or id
format) is an ``InputError`` naming the file, raised when the directory is loaded, before any model is
called. A template is used byte for byte as its file holds it, line breaks at the end included
(:mod:`pvsst.sim.materials.template`: placeholders and blocks shown only for a non-empty value).

Examples
--------
>>> m = load_materials()
>>> m.render("feed_item", text="hello", agent_id="a01", label="nurse")
'- @a01 (nurse): "hello"'
>>> m.account_ids("honest", 3), m.account_ids("single_source", 1)
(['a00', 'a01', 'a02'], ['x00'])
>>> len(materials_hashes(m.directory)) == len(MATERIAL_FILES)
True
>>> m.field_labels()[:2]
['FEED:', 'HOW YOU WRITE:']
"""
from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from pvsst.core.errors import InputError
from pvsst.core.input_files import regular_file
from pvsst.core.yaml_file import read_yaml_file
from pvsst.sim.materials.catalog import (
    ACCOUNT_ROLES,
    ACCOUNTS_FILE,
    MATERIAL_FILES,
    PERSONA_FILES,
    TEMPLATES,
    TemplateFile,
)
from pvsst.sim.materials.template import MaterialTemplate, TemplateSyntaxError
from pvsst.sim.persona_table import load_persona_table


def default_materials_dir() -> Path:
    """The materials pvsst ships (``sim/materials/pvsst``): our own wording and personas."""
    return Path(str(resources.files("pvsst.sim.materials").joinpath("pvsst")))


@dataclass(frozen=True)
class Materials:
    """A validated materials directory: its templates, persona tables and account id formats."""

    directory: Path
    templates: dict[str, MaterialTemplate]
    accounts: dict[str, str]

    def render(self, kind: str, **fields: object) -> str:
        """Fill template ``kind``; fields the template does not use are ignored (they are optional)."""
        return self.templates[kind].substitute(fields)

    def literal_text(self) -> dict[str, list[str]]:
        """Each template's fixed text, cut at its placeholders (pieces may be empty)."""
        return {kind: t.literal_pieces() for kind, t in self.templates.items()}

    def field_labels(self) -> list[str]:
        """Field labels of the templates: each fixed line that ends with a colon (``TOPIC:``, ``FEED:``)."""
        labels = set()
        for pieces in self.literal_text().values():
            for number, piece in enumerate(pieces):
                lines = piece.split("\n")
                # A piece's first line starts a line only in the template's first piece.
                for line in lines if number == 0 else lines[1:]:
                    if line.strip().endswith(":") and len(line.strip()) <= 40:
                        labels.add(line.strip())
        return sorted(labels)

    def persona_path(self, table: str) -> Path:
        """Path of ``honest_personas`` or ``adversary_personas``."""
        return self.directory / PERSONA_FILES[table]

    def account_ids(self, role: str, n: int) -> list[str]:
        """The ids of the ``n`` accounts of ``role`` (``honest``, ``single_source``, ``distributed_sources``)."""
        width = max(2, len(str(max(n - 1, 0))))
        return [self.accounts[role].format(i=i, width=width) for i in range(n)]


def load_materials(directory: str | Path | None = None) -> Materials:
    """Load and validate ``directory`` (``None``: pvsst's own materials).

    Cached by path and the files' content hashes, so editing a file is seen on the next load.
    """
    path = Path(directory) if directory is not None else default_materials_dir()
    if not path.is_dir():
        raise InputError(str(path), "protocol.materials", "not a directory")
    return _load(path.resolve(), tuple(sorted(materials_hashes(path).items())))


@lru_cache(maxsize=16)
def _load(path: Path, hashes: tuple) -> Materials:
    templates = {kind: read_template(path / f"{kind}.txt", TEMPLATES[kind]) for kind in TEMPLATES}
    for table in PERSONA_FILES:
        _check_personas(path / PERSONA_FILES[table])
    return Materials(path, templates, _accounts(path / ACCOUNTS_FILE))


def materials_hashes(directory: str | Path) -> dict[str, str]:
    """sha256 of every materials file, by file name; a missing file is an ``InputError`` naming it."""
    directory = Path(directory)
    hashes = {}
    for name in sorted(MATERIAL_FILES):
        if (directory / name).exists():
            regular_file(directory / name, "materials")
        try:
            hashes[name] = hashlib.sha256((directory / name).read_bytes()).hexdigest()
        except FileNotFoundError:
            raise InputError(str(directory / name), "materials", f"missing materials file ({MATERIAL_FILES[name]})") \
                from None
        except OSError as err:
            raise InputError(str(directory / name), "materials", f"cannot read ({err.strerror})") from None
    return hashes


def copy_materials(target: str | Path, source: str | Path | None = None) -> list[Path]:
    """Copy every materials file of ``source`` (default: pvsst's) into ``target``; refuse to overwrite."""
    source = Path(source) if source is not None else default_materials_dir()
    target = Path(target)
    clashes = [name for name in sorted(MATERIAL_FILES) if (target / name).exists()]
    if clashes:
        raise InputError(str(target / clashes[0]), "materials", "already exists; choose an empty directory")
    materials_hashes(source)
    target.mkdir(parents=True, exist_ok=True)
    return [Path(shutil.copy2(source / name, target / name)) for name in sorted(MATERIAL_FILES)]


def read_template(path: Path, spec: TemplateFile) -> MaterialTemplate:
    """The template file ``path``, checked against the placeholders ``spec`` requires and allows; every
    problem is an :class:`InputError` naming the file."""
    try:
        text = path.read_bytes().decode("utf-8")  # not read_text: it would turn CRLF line breaks into LF
    except UnicodeDecodeError as err:
        raise InputError(str(path), "template", f"not UTF-8 text ({err.reason} at byte {err.start})") from None
    try:
        template = MaterialTemplate.parse(text, allowed=spec.allowed)
    except TemplateSyntaxError as err:
        raise InputError(str(path), "template", str(err)) from None
    used = template.identifiers()
    unknown = sorted(used - set(spec.allowed))
    if unknown:
        raise InputError(str(path), f"${unknown[0]}", f"unknown placeholder (this template may use: "
                         f"{', '.join('$' + name for name in spec.allowed) or 'none'})")
    missing = [name for name in spec.required if name not in used]
    if missing:
        raise InputError(str(path), f"${missing[0]}", f"required placeholder missing ({spec.description})")
    return template


def _check_personas(path: Path) -> None:
    load_persona_table(path)


def _accounts(path: Path) -> dict[str, str]:
    data = read_yaml_file(path, "accounts")
    if not isinstance(data, dict):
        raise InputError(str(path), "accounts", "must be a mapping of role -> id format")
    unknown = sorted(set(data) - set(ACCOUNT_ROLES))
    if unknown:
        raise InputError(str(path), str(unknown[0]), f"unknown account role (known: {', '.join(ACCOUNT_ROLES)})")
    for role in ACCOUNT_ROLES:
        fmt = data.get(role)
        if not isinstance(fmt, str) or not fmt:
            raise InputError(str(path), role, "missing id format (a string such as 'a{i:02d}')")
        try:
            ids = [fmt.format(i=i, width=2) for i in range(12)]
        except (KeyError, IndexError, ValueError) as err:
            raise InputError(str(path), role, f"bad id format {fmt!r} ({err}); use {{i}} and {{width}}") from None
        if len(set(ids)) != len(ids) or any(not i or any(c.isspace() for c in i) for i in ids):
            raise InputError(str(path), role, f"id format {fmt!r} must give distinct ids without spaces "
                             "(use {i})")
    honest = {data["honest"].format(i=i, width=2) for i in range(12)}
    for role in ACCOUNT_ROLES[1:]:
        if honest & {data[role].format(i=i, width=2) for i in range(12)}:
            raise InputError(str(path), role, "ids overlap the honest ids")
    return {role: data[role] for role in ACCOUNT_ROLES}
