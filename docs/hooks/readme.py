"""MkDocs hooks: the repository's README.md is the site's home page (index.md), and the Sphinx
roles of the docstrings (``:func:`name```) read as code in the API reference.

Links from the README into ``docs/`` become links within the site, and the pages' links to
``../README.md`` links to the home page, so that both read right on GitHub and on the site.
"""

import re
from pathlib import Path

from mkdocs.structure.files import File

README = Path(__file__).resolve().parents[2] / "README.md"
ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|exc|obj):<code>([^<]*)</code>")


def on_files(files, config):
    text = README.read_text().replace("](docs/", "](")
    files.append(File.generated(config, "index.md", content=text))
    return files


def on_page_markdown(markdown, page, config, files):
    return markdown.replace("](../README.md", "](index.md")


def _name(match):
    """A role's target as Sphinx shows it: ``~a.b.c`` as ``c``, ``.b.c`` as ``b.c``."""
    target = match[1]
    return f"<code>{target.rsplit('.', 1)[-1] if target.startswith('~') else target.lstrip('.')}</code>"


def on_page_content(html, page, config, files):
    return ROLE.sub(_name, html)
