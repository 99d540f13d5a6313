"""Fixtures of the workflow tests: the figures they reach, printed at the end of the session."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW_FIGURES: dict[str, str] = {}


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if WORKFLOW_FIGURES:
        terminalreporter.section("workflows: measured figures")
        for name, value in WORKFLOW_FIGURES.items():
            terminalreporter.line(f"{name:60s} {value}")


@pytest.fixture(scope="session")
def workflow_figures():
    """``record(name, value)``: a figure printed in the session summary; returns ``value``."""

    def record(name: str, value):
        WORKFLOW_FIGURES[name] = f"{value:.6g}" if isinstance(value, float) else str(value)
        return value

    return record


def load_example(name: str) -> ModuleType:
    """The module of the script ``examples/<name>.py`` (examples/ is not a package)."""
    path = ROOT / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"jaxsim_like_example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_png(path: Path, minimum_bytes: int = 10_000) -> None:
    """A PNG file of some size whose pixels are not all alike (something was drawn); needs matplotlib."""
    image = pytest.importorskip("matplotlib.image")
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > minimum_bytes
    pixels = image.imread(path)
    assert pixels.ndim == 3 and pixels.shape[0] > 200 and pixels.shape[1] > 300
    assert float(pixels[..., :3].std()) > 0.05


@pytest.fixture(scope="session")
def assert_png():
    """``assert_png(path, minimum_bytes=10_000)``: see :func:`check_png`."""
    return check_png


@pytest.fixture(scope="session")
def example():
    """``example(name)``: load ``examples/<name>.py`` as a module."""
    return load_example


@pytest.fixture(autouse=True)
def no_persistent_cache(monkeypatch):
    """In-process command-line runs leave JAX's persistent cache off (the CLI turns it on for
    the whole process); the subprocess tests of the cache set their own folder."""
    from jaxsim_like import compile_cache

    monkeypatch.setattr(compile_cache, "enable_persistent_cache", lambda folder=None: None)
