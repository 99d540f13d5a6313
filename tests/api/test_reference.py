"""Every class, method, property, function and constant of ScenarIO's Python bindings exists in
``jaxsim_like.api`` with a compatible signature (``assets/scenario_bindings.txt`` lists them).

Compatible: the reference's parameters are accepted by the same names, in the same positions,
with the same defaults; extra parameters have defaults. SWIG plumbing is the documented
exception (EXEMPT). The Gazebo-only symbols that exist but raise are checked in
``test_honest_exceptions``.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

from jaxsim_like import api

BINDINGS = Path(__file__).resolve().parent / "assets" / "scenario_bindings.txt"

CLASSES = {
    "Joint": [api.Joint],
    "Link": [api.Link],
    "Model": [api.Model],
    "World": [api.World],
    "GazeboSimulator": [api.Simulator],
    "GazeboEntity": [api.World, api.Model, api.Link, api.Joint],
    "Contact": [api.Contact],
    "ContactPoint": [api.ContactPoint],
    "JointLimit": [api.JointLimit],
    "Limit": [api.Limit],
    "PID": [api.PID],
    "Pose": [api.Pose],
    "PosePair": [api.PosePair],
}
VALUE_INSTANCES = {
    api.Contact: lambda: api.Contact("a::b", "c::d"),
    api.ContactPoint: lambda: api.ContactPoint(0.0, np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3)),
    api.JointLimit: api.JointLimit,
    api.Limit: api.Limit,
    api.PID: api.PID,
    api.Pose: api.Pose,
    api.PosePair: api.PosePair,
}
# SWIG plumbing: numpy arrays and Python lists/iterators replace these containers, and Python
# manages memory (no ``thisown`` flag).
EXEMPT_CLASSES = {"Array3d", "Array4d", "Array6d", "SwigPyIterator", "VectorD", "VectorF", "VectorI",
                  "VectorOfContactPoints", "VectorOfContacts", "VectorOfJoints", "VectorOfLinks", "VectorS", "VectorU"}
EXEMPT_MEMBERS = {"thisown"}

_ENTRY = re.compile(r"^(?P<kind>\w+) (?P<module>core|gazebo)\.(?P<path>[\w.]+)(?P<signature>\(.*\))?(?: = (?P<value>\S+))?$")


def reference_entries() -> list[dict]:
    entries = []
    for line in BINDINGS.read_text().splitlines():
        if line and not line.startswith("#"):
            match = _ENTRY.match(line)
            assert match, f"cannot read {line!r}"
            entries.append(match.groupdict())
    return entries


def parameters(signature: str) -> list[tuple[str, str | None]] | None:
    """``[(name, default or None)]`` of a reference signature; None for ``(*args...)``."""
    inner = signature.strip()[1:-1].strip()
    if not inner:
        return []
    if inner.startswith("*"):
        return None
    result = []
    for item in inner.split(","):
        name, _, default = item.strip().partition("=")
        result.append((name.strip(), default.strip() or None))
    return result


def compatible(function, signature: str) -> str | None:
    """None when ``function`` accepts the reference ``signature``, else the reason."""
    expected = parameters(signature)
    if expected is None:
        return None
    ours = [p for p in inspect.signature(function).parameters.values() if p.name != "self"]
    positional = [p for p in ours if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for position, (name, default) in enumerate(expected):
        if position >= len(positional) or positional[position].name != name:
            return f"parameter {position} should be '{name}', ours are {[p.name for p in positional]}"
        if default is not None:
            ours_default = positional[position].default
            if ours_default is inspect.Parameter.empty:
                return f"'{name}' should default to {default}"
            if ours_default != ast.literal_eval(default):
                return f"'{name}' defaults to {ours_default!r}, the reference to {default}"
    for extra in ours[len(expected):]:
        if extra.default is inspect.Parameter.empty and extra.kind not in (extra.VAR_POSITIONAL, extra.VAR_KEYWORD):
            return f"extra parameter '{extra.name}' has no default"
    return None


ENTRIES = reference_entries()
MEMBERS = [
    e
    for e in ENTRIES
    if e["kind"] in ("method", "staticmethod", "property")
    and e["path"].split(".")[0] not in EXEMPT_CLASSES
    and e["path"].split(".")[1] not in EXEMPT_MEMBERS
]


def test_the_reference_list_is_complete():
    kinds = {kind: sum(e["kind"] == kind for e in ENTRIES) for kind in ("class", "method", "property", "function", "constant")}
    assert kinds == {"class": 31, "method": 563, "property": 55, "function": 20, "constant": 8}
    assert {e["path"] for e in ENTRIES if e["kind"] == "class"} - EXEMPT_CLASSES == set(CLASSES)
    assert len(MEMBERS) == 339


@pytest.mark.parametrize("entry", MEMBERS, ids=lambda e: f"{e['module']}.{e['path']}")
def test_member_exists_with_a_compatible_signature(entry):
    class_name, member = entry["path"].split(".")
    for cls in CLASSES[class_name]:
        if entry["kind"] == "property":
            instance = VALUE_INSTANCES[cls]()
            assert hasattr(instance, member), f"{cls.__name__} has no attribute {member}"
            continue
        function = getattr(cls, member, None)
        assert callable(function), f"{cls.__name__} has no method {member}"
        reason = compatible(function, entry["signature"] or "()")
        assert reason is None, f"{cls.__name__}.{member}: {reason}"


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e["kind"] in ("function", "constant")], ids=lambda e: e["path"])
def test_module_symbol(entry):
    symbol = getattr(api, entry["path"], None)
    assert symbol is not None, f"jaxsim_like.api has no {entry['path']}"
    if entry["kind"] == "constant":
        assert int(symbol) == int(entry["value"])
    else:
        assert compatible(symbol, entry["signature"]) is None


def test_simulator_constructor_signature():
    entry = next(e for e in ENTRIES if e["path"] == "GazeboSimulator")
    assert compatible(api.Simulator.__init__, entry["signature"]) is None
    assert api.GazeboSimulator is api.Simulator


def test_honest_exceptions(make_world):
    """The Gazebo-only symbols exist and raise NotImplementedError naming the alternative."""
    from .helpers import SPHERE

    _, world = make_world((SPHERE, None, "sphere"))
    sphere = world.get_model("sphere")
    for insert in (world.insert_world_plugin, sphere.insert_model_plugin, sphere.get_link("ball").insert_link_plugin):
        with pytest.raises(api.NotImplementedError, match="Python callable"):
            insert("libgz-sim-physics-system.so", "gz::sim::systems::Physics")
    with pytest.raises(api.NotImplementedError, match="Fuel cache"):
        api.get_model_file_from_fuel("https://fuel.gazebosim.org/1.0/openrobotics/models/no_such_model_here")
    assert isinstance(api.NotImplementedError("x"), NotImplementedError)
