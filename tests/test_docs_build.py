"""The documentation site (mkdocs.yml: the README as home, docs/ and the API reference from the
docstrings) builds with warnings as errors."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings_handlers.python") is None,
    reason="mkdocs and mkdocstrings[python] are not installed (pip install -e '.[test]')",
)
def test_the_site_builds_strict(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
        cwd=REPOSITORY, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-5000:]
    assert (tmp_path / "site" / "api" / "index.html").read_text().count("doc-function") > 10
