"""Every ```python block of README.md and docs/ runs as pasted: the blocks of every page, README.md's
first, in one fresh interpreter, each block with fresh globals in its own empty folder.

Blocks that are not meant to run use other fence languages (``bash``, ``text``). The interpreter
has the user's defaults (float32; a block that changes them fails the next one); the suite's
``XLA_FLAGS`` and ``PYTHONPATH`` (this checkout) are inherited, and so is this run's compilation
cache. Sharing the interpreter saves an import of JAX and the package per block, and the programs
that several pages' blocks build on the same robots (the object API's float64 runs among the
float32 ones, as a user's session mixes them).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jax
import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
PAGES = [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").rglob("*.md"))]
README_LIMIT = 10 * 1024
"""The README's size limit [bytes]: a user's page, with the rest in docs/."""

FENCE = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)

RUNNER = """
import json, os, sys, traceback
blocks, report, folder = json.load(sys.stdin), sys.argv[1], sys.argv[2]
results = []
for k, code in enumerate(blocks):
    if "jax" in sys.modules and sys.modules["jax"].config.jax_enable_x64:
        error = "the previous block left jax_enable_x64 on: this block would not run with the user's defaults"
    else:
        os.makedirs(os.path.join(folder, str(k)))
        os.chdir(os.path.join(folder, str(k)))
        try:
            exec(compile(code, "<block>", "exec"), {"__name__": "__main__"})
            error = None
        except SystemExit as exit:
            error = None if exit.code in (None, 0) else traceback.format_exc()
        except BaseException:
            error = traceback.format_exc()
    results.append(error)
    with open(report, "w") as f:
        json.dump(results, f)
"""
"""Runs the blocks (JSON on stdin) in order, each in its folder ``argv[2]/<k>``, and writes each
one's traceback, or null, to the file ``argv[1]``."""


def python_blocks(page: Path) -> list[str]:
    """The ```python blocks of a Markdown page, in order."""
    return FENCE.findall(page.read_text())


SNIPPETS = [(page, index) for page in PAGES for index in range(len(python_blocks(page)))]


def test_the_readme_is_short_and_has_snippets():
    assert (REPOSITORY / "README.md").stat().st_size <= README_LIMIT
    assert len(python_blocks(REPOSITORY / "README.md")) >= 4


@pytest.fixture(scope="module")
def page_runs(tmp_path_factory) -> dict[Path, tuple[list, str]]:
    """Every page's blocks run in one fresh interpreter: per page, each block's traceback or None
    (missing after a crash), and the interpreter's stderr."""
    environment = {
        **os.environ,
        "JAX_COMPILATION_CACHE_DIR": jax.config.jax_compilation_cache_dir,
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": str(jax.config.jax_persistent_cache_min_compile_time_secs),
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": str(jax.config.jax_persistent_cache_min_entry_size_bytes),
    }
    folder = tmp_path_factory.mktemp("snippets")
    report = folder / "report.json"
    blocks = [python_blocks(page) for page in PAGES]
    result = subprocess.run(
        [sys.executable, "-c", RUNNER, str(report), str(folder / "blocks")], input=json.dumps(sum(blocks, [])),
        cwd=folder, env=environment, capture_output=True, text=True, timeout=900,
    )
    errors = json.loads(report.read_text()) if report.is_file() else []
    runs, start = {}, 0
    for page, its in zip(PAGES, blocks):
        runs[page] = (errors[start : start + len(its)], result.stderr)
        start += len(its)
    return runs


@pytest.mark.parametrize("page, index", SNIPPETS, ids=[f"{page.relative_to(REPOSITORY)}:{index}" for page, index in SNIPPETS])
def test_snippet_runs_as_pasted(page_runs, page, index):
    errors, stderr = page_runs[page]
    assert index < len(errors), f"{page.name}: the interpreter stopped before block {index}:\n{stderr[-3000:]}"
    assert errors[index] is None, f"{page.name} block {index} failed:\n{errors[index][-3000:]}"
