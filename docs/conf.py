"""Sphinx configuration of the awlineage documentation site (built by .ci/docs)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # document this checkout, not whatever is installed

project = "awlineage"
author = "the awlineage developers"
copyright = "the awlineage developers"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "numpydoc",
    "sphinxarg.ext",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
root_doc = "index"

myst_enable_extensions = ["colon_fence"]
# Headings are linked by their text where a page names another page's section.
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "none"  # numpydoc's Parameters sections say the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# The build must not need the network (no intersphinx); unresolved Python names in
# signatures are not errors.
nitpicky = False

html_theme = "pydata_sphinx_theme"
html_title = "awlineage"
html_static_path = ["_static"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
