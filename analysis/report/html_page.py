"""Render the report's Markdown as one self-contained HTML file (images embedded as data URIs).

The Markdown is parsed with markdown-it-py (CommonMark + tables); every image whose ``src`` names a
figure is given that figure's PNG as a ``data:image/png;base64,...`` URI, so the file has no external
link that could break. An image without PNG bytes is an error, not a broken link.

Examples
--------
>>> html = markdown_to_html("# T\\n\\n![a plot](figures/x.png)", {"figures/x.png": b"\\x89PNG\\r\\n\\x1a\\n"},
...                         title="T")
>>> 'src="data:image/png;base64,iVBORw0KGgo="' in html
True
"""
from __future__ import annotations

import base64
import html as html_escape
from collections.abc import Mapping

from markdown_it import MarkdownIt

from pvsst.core.errors import InputError

STYLE = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; max-width: 60rem;
       margin: 2rem auto; padding: 0 1rem; line-height: 1.45; color: #222; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.85rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; vertical-align: top; }
th { background: #f3f3f3; }
img { max-width: 100%; height: auto; display: block; margin: 0.5rem 0; }
code { background: #f5f5f5; padding: 0 0.2rem; }
h1, h2, h3 { line-height: 1.2; }
"""


def data_uri(png: bytes) -> str:
    """``data:image/png;base64,...`` for PNG bytes."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def markdown_to_html(markdown: str, images: Mapping[str, bytes], *, title: str) -> str:
    """A complete HTML document; ``images`` maps each Markdown image path to its PNG bytes."""
    parser = MarkdownIt("commonmark").enable("table")
    tokens = parser.parse(markdown)
    for token in tokens:
        for child in token.children or []:
            if child.type != "image":
                continue
            src = str(child.attrGet("src"))
            if src not in images:
                raise InputError("report.md", src, "image has no PNG to embed")
            child.attrSet("src", data_uri(images[src]))
    body = parser.renderer.render(tokens, parser.options, {})
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html_escape.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}"
            "</body>\n</html>\n")
