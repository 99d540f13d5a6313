"""MJCF files we did not write: does each load as a world, and what does it leave out?

Every ``*.xml`` under the given folders (say, clones of dm_control and of MuJoCo's ``model/``
folder) is compiled by MuJoCo first; files MuJoCo itself cannot compile (a newer schema, a missing
asset) and files without bodies (included fragments) are counted apart. The others go through
``load_world``: loaded (with the kinds of located warnings it gave) or refused (the error's first
reason). One line per file, then the counts.

    python -m benchmarks.mjcf_survey FOLDER [FOLDER ...] [--json results/mjcf_survey.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import warnings
from pathlib import Path

import mujoco

from jaxsim_like import load_world
from jaxsim_like.parsers import ModelLoadError, ModelLoadWarning

_QUOTED = re.compile(r"(?<![A-Za-z])'[^']*'")
_NUMBER = re.compile(r"-?\d+(\.\d+)?(e-?\d+)?")


def _kind(reason: str) -> str:
    """The kind of a warning: its reason up to the first colon or semicolon, names and numbers out."""
    return re.split(r"[:;]", _NUMBER.sub("N", _QUOTED.sub("'…'", reason)))[0]


def survey(path: Path) -> dict:
    """What happens to the MJCF file ``path``: ``outcome`` and ``detail``."""
    try:
        m = mujoco.MjModel.from_xml_path(str(path))
    except ValueError as error:
        return {"outcome": "MuJoCo cannot compile it", "detail": str(error).splitlines()[0]}
    if m.nbody <= 1:
        return {"outcome": "no bodies", "detail": ""}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            world = load_world(path)
        except ModelLoadError as error:
            return {"outcome": "refused", "detail": error.reason}
    kinds = sorted({_kind(w.message.reason) for w in caught if issubclass(w.category, ModelLoadWarning)})
    boxes = 0 if world.terrain is None else len(world.terrain.box_names)
    return {"outcome": "loads", "detail": f"{len(world.models)} model(s), {m.nv} dofs, {boxes} terrain box(es)", "warnings": kinds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = {str(path): survey(path) for folder in args.folders for path in sorted(folder.rglob("*.xml"))}
    for path, result in results.items():
        print(f"{result['outcome']:26s} {path}: {result['detail'][:160]}")
        for kind in result.get("warnings", []):
            print(f"{'':26s}   warns: {kind}")
    print(dict(collections.Counter(result["outcome"] for result in results.values())))
    warned = collections.Counter(kind for result in results.values() for kind in result.get("warnings", []))
    for kind, count in warned.most_common():
        print(f"{count:4d} files warn: {kind}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
