"""Every file of the malformed corpus fails with a located ModelLoadError, never another exception."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from jaxsim_like.parsers import ModelLoadError, parse_model

CORPUS = Path(__file__).resolve().parents[1] / "assets" / "malformed"
FILES = sorted(path for path in CORPUS.iterdir() if path.is_file())
EXPECT = re.compile(r"<!--\s*expect:\s*(.*?)\s*-->")


def test_corpus_has_the_urdf_cases():
    assert len([path for path in FILES if path.name.startswith("urdf_")]) >= 22


@pytest.mark.parametrize("path", FILES, ids=[path.name for path in FILES])
def test_malformed_file_raises_located_model_load_error(path: Path):
    try:
        parse_model(str(path))
    except ModelLoadError as error:
        caught = error
    except Exception as error:  # noqa: BLE001 - any other type is the failure under test
        pytest.fail(f"{path.name}: {type(error).__name__} instead of ModelLoadError: {error}")
    else:
        pytest.fail(f"{path.name}: loaded without error")
    assert caught.file is not None and os.path.samefile(caught.file, path)
    assert caught.line is not None and caught.line >= 1
    assert path.name in str(caught) and f":{caught.line}" in str(caught)
    expected = EXPECT.search(path.read_text(encoding="utf-8", errors="replace"))
    if expected:
        assert expected.group(1).lower() in str(caught).lower()
