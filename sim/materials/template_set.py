"""An optional set of templates (a judge's, the thread schedule's): pvsst's own, or a directory's, whole.

pvsst ships every set beside its study materials (``sim/materials/pvsst``). A study's materials directory
may hold its own copy of a set: then it must hold every file of the set, and its files replace pvsst's;
a directory holding none of them uses pvsst's. Each file is read byte for byte
(:mod:`pvsst.sim.materials.template`), checked against the placeholders its kind requires and allows, and
hashed, so a run's provenance says which wording produced it.

Examples
--------
>>> from pvsst.sim.materials.catalog import JUDGE_TEMPLATES
>>> s = load_template_set(None, JUDGE_TEMPLATES, "judge")
>>> s.source, sorted(s.hashes)
('pvsst', ['judge.txt', 'judge_system.txt'])
>>> s.render("judge", question="Q?", post="p", choices="").splitlines()[:2]
['TOPIC: Q?', 'POST: p']
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from pvsst.core.errors import InputError
from pvsst.sim.materials.catalog import TemplateFile
from pvsst.sim.materials.load import default_materials_dir, read_template
from pvsst.sim.materials.template import MaterialTemplate


@dataclass(frozen=True)
class TemplateSet:
    """The templates of one set, where they came from (``pvsst`` or a directory) and each file's sha256."""

    directory: Path
    source: str
    templates: dict[str, MaterialTemplate]
    hashes: dict[str, str]

    def render(self, kind: str, **fields: object) -> str:
        """Fill template ``kind``; fields it does not use are ignored."""
        return self.templates[kind].substitute(fields)


def load_template_set(directory: str | Path | None, templates: dict[str, TemplateFile], noun: str) -> TemplateSet:
    """The ``templates`` of ``directory`` when it holds them, else pvsst's (``None``: pvsst's).

    A directory holding only some of the files, an unreadable file, or a template with a placeholder it
    may not use or without one it requires is an :class:`InputError` naming the file; ``noun`` names the
    set in messages (``judge``, ``thread``).
    """
    shipped = default_materials_dir()
    path = Path(directory) if directory is not None else shipped
    if directory is not None and not path.is_dir():
        raise InputError(str(path), f"{noun} materials", "not a directory")
    files = {f"{kind}.txt": spec for kind, spec in templates.items()}
    present = [name for name in sorted(files) if (path / name).is_file()]
    if present and len(present) < len(files):
        missing = sorted(set(files) - set(present))[0]
        whole = (f"give both {noun} templates or neither" if len(files) == 2
                 else f"give all {len(files)} {noun} templates or none")
        raise InputError(str(path / missing), f"{noun} materials", f"missing ({files[missing].description}); {whole}")
    if not present:
        path = shipped
    source = "pvsst" if path.resolve() == shipped.resolve() else str(path.resolve())
    loaded, hashes = {}, {}
    for kind, spec in templates.items():
        file = path / f"{kind}.txt"
        try:
            raw = file.read_bytes()
        except OSError as err:
            raise InputError(str(file), f"{noun} materials", f"cannot read ({err.strerror or err})") from None
        loaded[kind], hashes[file.name] = read_template(file, spec), hashlib.sha256(raw).hexdigest()
    return TemplateSet(path.resolve(), source, loaded, hashes)
