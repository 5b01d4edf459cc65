"""Study materials: the wording of every prompt, the persona tables and the account ids, as a directory."""
from pvsst.sim.materials.catalog import MATERIAL_FILES, TEMPLATES
from pvsst.sim.materials.load import Materials, copy_materials, default_materials_dir, load_materials, materials_hashes

__all__ = ["MATERIAL_FILES", "Materials", "TEMPLATES", "copy_materials", "default_materials_dir",
           "load_materials", "materials_hashes"]
