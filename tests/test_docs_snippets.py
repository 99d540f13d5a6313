"""Every ```python block of README.md and docs/ runs as pasted: the blocks of one page in one fresh
interpreter (docs/object_api.md's after README.md's, in its interpreter: both show the object API
on the same robot, whose programs are then traced and compiled once), each block with fresh globals
in its own empty folder.

Blocks that are not meant to run use other fence languages (``bash``, ``text``). Each page's
interpreter has the user's defaults (float32; a block that changes them fails the next one); the
suite's ``XLA_FLAGS`` and ``PYTHONPATH`` (this checkout) are inherited, and so is this run's
compilation cache (a block compiling what another page's block compiled reads it back). Sharing the
page's interpreter saves an import of JAX and the package per block, and the small programs that
eager operations compile.
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
SHARED_INTERPRETER = {REPOSITORY / "docs" / "object_api.md": REPOSITORY / "README.md"}
"""Pages whose blocks run after another page's, in its interpreter (each other page: its own)."""
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
def page_runs(tmp_path_factory):
    """``run(page)``: the page's blocks, and those of the pages that share its interpreter after them,
    run in one fresh interpreter (once); returns ``(errors, stderr)``: each of the page's blocks'
    traceback or None (missing after a crash), and the stderr."""
    environment = {
        **os.environ,
        "JAX_COMPILATION_CACHE_DIR": jax.config.jax_compilation_cache_dir,
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": str(jax.config.jax_persistent_cache_min_compile_time_secs),
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": str(jax.config.jax_persistent_cache_min_entry_size_bytes),
    }
    runs: dict[Path, tuple[list, str]] = {}

    def run(page: Path) -> tuple[list, str]:
        first = SHARED_INTERPRETER.get(page, page)
        if page not in runs:
            pages = [first, *(other for other in PAGES if SHARED_INTERPRETER.get(other) == first)]
            folder = tmp_path_factory.mktemp(first.stem)
            report = folder / "report.json"
            blocks = [python_blocks(p) for p in pages]
            result = subprocess.run(
                [sys.executable, "-c", RUNNER, str(report), str(folder / "blocks")], input=json.dumps(sum(blocks, [])),
                cwd=folder, env=environment, capture_output=True, text=True, timeout=900,
            )
            errors = json.loads(report.read_text()) if report.is_file() else []
            start = 0
            for p, its in zip(pages, blocks):
                runs[p] = (errors[start : start + len(its)], result.stderr)
                start += len(its)
        return runs[page]

    return run


@pytest.mark.parametrize("page, index", SNIPPETS, ids=[f"{page.relative_to(REPOSITORY)}:{index}" for page, index in SNIPPETS])
def test_snippet_runs_as_pasted(page_runs, page, index):
    errors, stderr = page_runs(page)
    assert index < len(errors), f"{page.name}: the interpreter stopped before block {index}:\n{stderr[-3000:]}"
    assert errors[index] is None, f"{page.name} block {index} failed:\n{errors[index][-3000:]}"
