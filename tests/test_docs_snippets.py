"""Every ```python block of README.md and docs/ runs as pasted, in a fresh interpreter.

Blocks that are not meant to run use other fence languages (``bash``, ``text``). Each block runs
in its own subprocess, in a temporary folder, with the user's defaults (float32); the suite's
``XLA_FLAGS`` and ``PYTHONPATH`` (this checkout) are inherited.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
PAGES = [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").rglob("*.md"))]
README_LIMIT = 10 * 1024
"""The README's size limit [bytes]: a user's page, with the rest in docs/."""

FENCE = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def python_blocks(page: Path) -> list[str]:
    """The ```python blocks of a Markdown page, in order."""
    return FENCE.findall(page.read_text())


SNIPPETS = [(page, index, code) for page in PAGES for index, code in enumerate(python_blocks(page))]


def test_the_readme_is_short_and_has_snippets():
    assert (REPOSITORY / "README.md").stat().st_size <= README_LIMIT
    assert len(python_blocks(REPOSITORY / "README.md")) >= 4


@pytest.mark.parametrize(
    "page, index, code", SNIPPETS, ids=[f"{page.relative_to(REPOSITORY)}:{index}" for page, index, _ in SNIPPETS]
)
def test_snippet_runs_as_pasted(page, index, code, tmp_path):
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{page.name} block {index} failed:\n{result.stderr[-3000:]}"
