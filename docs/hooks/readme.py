"""MkDocs hook: the repository's README.md is the site's home page (index.md).

Links from the README into ``docs/`` become links within the site, and the pages' links to
``../README.md`` links to the home page, so that both read right on GitHub and on the site.
"""

from pathlib import Path

from mkdocs.structure.files import File

README = Path(__file__).resolve().parents[2] / "README.md"


def on_files(files, config):
    text = README.read_text().replace("](docs/", "](")
    files.append(File.generated(config, "index.md", content=text))
    return files


def on_page_markdown(markdown, page, config, files):
    return markdown.replace("](../README.md", "](index.md")
