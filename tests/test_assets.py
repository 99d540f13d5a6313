"""The hand-made robot assets of tests/assets and jaxsim_like/models.

Read with lxml only (no jaxsim_like parser, no JAX): every file is well formed and up to date with
tests/assets/generate.py, the URDF and SDF of each robot describe the same tree (SDF frame graph
resolved here independently), totals match the hand-specified ones, inertias are physical, the
world and the SRDF are consistent, and the package copies equal the test assets.
"""

from __future__ import annotations

import importlib.util
import math
import os
import sys

import numpy as np
import pytest
from lxml import etree

ASSETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "assets")
REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOLERANCE = 1e-9
_INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


def _load(name: str, path: str):
    # Loaded by path: importing the jaxsim_like package itself would import JAX.
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


generate = _load("assets_generate", os.path.join(ASSETS, "generate.py"))
models = _load("assets_models", os.path.join(REPOSITORY, "jaxsim_like", "models", "__init__.py"))

ROBOTS = sorted(generate.EXPECTED)
RENDERED = generate.render()


def _parse(path: str) -> etree._Element:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True)
    return etree.parse(path, parser).getroot()


def _asset(name: str) -> str:
    return os.path.join(ASSETS, name)


def _floats(text: str | None, default: str = "0 0 0") -> np.ndarray:
    return np.array([float(value) for value in (text if text is not None else default).split()])


def _H(xyz, rpy) -> np.ndarray:
    return generate.transform(xyz, rpy)


def _pose(element: etree._Element | None) -> np.ndarray:
    if element is None or not (element.text or "").strip():
        return np.eye(4)
    values = _floats(element.text)
    return _H(values[:3], values[3:])


# --------------------------------------------------------------------------- URDF and SDF readers


def _urdf(name: str) -> dict:
    """Links, joints, model-frame poses, inertials and collisions of a URDF, in the model frame."""
    root = _parse(_asset(f"{name}.urdf"))
    joints = {}
    for joint in root.findall("joint"):
        origin = joint.find("origin")
        H = _H(_floats(origin.get("xyz")), _floats(origin.get("rpy"))) if origin is not None else np.eye(4)
        axis = joint.find("axis")
        joints[joint.get("name")] = dict(
            element=joint, type=joint.get("type"), parent=joint.find("parent").get("link"),
            child=joint.find("child").get("link"), H=H,
            axis=_floats(axis.get("xyz")) if axis is not None else np.array([1.0, 0.0, 0.0]),
        )
    by_child = {joint["child"]: joint for joint in joints.values()}
    poses: dict[str, np.ndarray] = {}

    def pose(link: str) -> np.ndarray:
        if link not in poses:
            parent = by_child.get(link)
            poses[link] = np.eye(4) if parent is None else pose(parent["parent"]) @ parent["H"]
        return poses[link]

    links = {}
    for link in root.findall("link"):
        name_ = link.get("name")
        inertial = link.find("inertial")
        links[name_] = dict(element=link, M_H=pose(name_), inertial=None, collisions={})
        if inertial is not None:
            origin = inertial.find("origin")
            inertia = inertial.find("inertia")
            links[name_]["inertial"] = (
                float(inertial.find("mass").get("value")),
                _H(_floats(origin.get("xyz")), _floats(origin.get("rpy"))) if origin is not None else np.eye(4),
                _inertia_matrix({key: float(inertia.get(key, 0.0)) for key in _INERTIA_KEYS}),
            )
        for collision in link.findall("collision"):
            origin = collision.find("origin")
            H = _H(_floats(origin.get("xyz")), _floats(origin.get("rpy"))) if origin is not None else np.eye(4)
            shape = collision.find("geometry")[0]
            size = {key: _floats(value) for key, value in shape.attrib.items()}
            links[name_]["collisions"][collision.get("name")] = (H, shape.tag, size)
    return dict(root=root, links=links, joints=joints)


def _inertia_matrix(values: dict[str, float]) -> np.ndarray:
    return np.array([
        [values["ixx"], values["ixy"], values["ixz"]],
        [values["ixy"], values["iyy"], values["iyz"]],
        [values["ixz"], values["iyz"], values["izz"]],
    ])


def _sdf(path: str) -> dict:
    """The same as :func:`_urdf` for the first model of an SDF file, resolving SDF 1.9 frame semantics."""
    root = _parse(path)
    model = root.find("model")
    links = {link.get("name"): link for link in model.findall("link")}
    frames = {frame.get("name"): frame for frame in model.findall("frame")}
    joint_elements = {joint.get("name"): joint for joint in model.findall("joint")}
    poses: dict[str, np.ndarray] = {"__model__": np.eye(4), "world": np.eye(4)}
    resolving: set[str] = set()

    def resolve(name: str) -> np.ndarray:
        if name in poses:
            return poses[name]
        assert name not in resolving, f"cycle through {name}"
        resolving.add(name)
        if name in links:
            pose_element = links[name].find("pose")
            default = "__model__"
        elif name in frames:
            pose_element = frames[name].find("pose")
            default = frames[name].get("attached_to") or "__model__"
        else:
            pose_element = joint_elements[name].find("pose")
            default = joint_elements[name].find("child").text
        reference = pose_element.get("relative_to") if pose_element is not None else None
        poses[name] = resolve(reference or default) @ _pose(pose_element)
        return poses[name]

    result_links = {}
    for name, link in links.items():
        inertial = link.find("inertial")
        entry = dict(element=link, M_H=resolve(name), inertial=None, collisions={})
        if inertial is not None:
            inertia = inertial.find("inertia")
            assert inertial.find("pose") is None or inertial.find("pose").get("relative_to") is None
            entry["inertial"] = (
                float(inertial.find("mass").text),
                _pose(inertial.find("pose")),
                _inertia_matrix({key: float(inertia.find(key).text) for key in _INERTIA_KEYS}),
            )
        for collision in link.findall("collision"):
            pose_element = collision.find("pose")
            reference = pose_element.get("relative_to") if pose_element is not None else None
            M_H_G = resolve(reference) @ _pose(pose_element) if reference else entry["M_H"] @ _pose(pose_element)
            shape = collision.find("geometry")[0]
            size = {child.tag: _floats(child.text) for child in shape}
            entry["collisions"][collision.get("name")] = (np.linalg.inv(entry["M_H"]) @ M_H_G, shape.tag, size)
        result_links[name] = entry
    joints = {}
    for name, joint in joint_elements.items():
        child = joint.find("child").text
        M_H_J = resolve(name)
        axis = joint.find("axis")
        entry = dict(element=joint, type=joint.get("type"), parent=joint.find("parent").text, child=child,
                     M_H_J=M_H_J, axis_model=None)
        if axis is not None:
            xyz = axis.find("xyz")
            frame = xyz.get("expressed_in") or name
            entry["axis_model"] = resolve(frame)[:3, :3] @ _floats(xyz.text)
        joints[name] = entry
    return dict(root=root, model=model, links=result_links, joints=joints, frames=frames)


def _total_mass(description: dict) -> float:
    return sum(link["inertial"][0] for link in description["links"].values() if link["inertial"])


def _xml_files() -> list[str]:
    files = [path for path in RENDERED if not path.endswith(".md")]
    return sorted(files)


# --------------------------------------------------------------------------- files


@pytest.mark.parametrize("relative", _xml_files())
def test_every_asset_is_well_formed_xml(relative):
    root = _parse(os.path.join(REPOSITORY, relative))
    assert root.tag in ("robot", "sdf", "model")


def test_files_are_up_to_date_with_the_generator():
    stale = []
    for relative, text in RENDERED.items():
        with open(os.path.join(REPOSITORY, relative), encoding="utf-8", newline="") as stream:
            if stream.read() != text:
                stale.append(relative)
    assert not stale, f"run python tests/assets/generate.py: {stale}"


def test_package_copies_are_byte_identical_to_the_test_assets():
    assert models.available() == sorted(generate.SHIPPED)
    for name in generate.SHIPPED:
        formats = ("urdf", "sdf", "srdf") if name == "humanoid" else ("urdf", "sdf")
        for extension in formats:
            with open(models.path(name, extension), "rb") as shipped:
                with open(_asset(f"{name}.{extension}"), "rb") as asset:
                    assert shipped.read() == asset.read(), (name, extension)


def test_models_path_errors_name_the_alternatives():
    assert models.path("pendulum", "SDF").endswith(os.path.join("pendulum", "pendulum.sdf"))
    with pytest.raises(ValueError, match="cart_pole, humanoid, pendulum, quadruped"):
        models.path("hexapod")
    with pytest.raises(ValueError, match="urdf, sdf, srdf"):
        models.path("pendulum", "mjcf")
    with pytest.raises(ValueError, match="urdf, sdf"):
        models.path("pendulum", "srdf")


# --------------------------------------------------------------------------- robots


@pytest.mark.parametrize("name", ROBOTS)
def test_totals_match_the_hand_specification(name):
    expected = generate.EXPECTED[name]
    urdf, sdf = _urdf(name), _sdf(_asset(f"{name}.sdf"))
    urdf_links = set(urdf["links"]) - {"world"}
    assert urdf_links == set(sdf["links"])
    assert set(urdf["joints"]) == set(sdf["joints"])
    assert len(urdf_links) == expected.links
    assert math.isclose(_total_mass(urdf), expected.total_mass, abs_tol=TOLERANCE)
    assert math.isclose(_total_mass(sdf), expected.total_mass, abs_tol=TOLERANCE)
    assert sum(joint["type"] != "fixed" for joint in urdf["joints"].values()) == expected.dof
    assert sum(joint["type"] != "fixed" for joint in sdf["joints"].values()) == expected.dof


@pytest.mark.parametrize("name", ROBOTS)
def test_base_is_welded_to_the_world_only_for_fixed_base_robots(name):
    fixed = generate.EXPECTED[name].base == "fixed"
    urdf, sdf = _urdf(name), _sdf(_asset(f"{name}.sdf"))
    urdf_world = [j for j in urdf["joints"].values() if j["parent"] == "world"]
    sdf_world = [j for j in sdf["joints"].values() if j["parent"] == "world"]
    assert ("world" in urdf["links"]) == fixed
    assert len(urdf_world) == len(sdf_world) == int(fixed)
    if fixed:
        assert urdf_world[0]["type"] == sdf_world[0]["type"] == "fixed"


@pytest.mark.parametrize("name", ROBOTS)
def test_sdf_uses_version_1_9_frame_semantics(name):
    sdf = _sdf(_asset(f"{name}.sdf"))
    major, minor = (int(part) for part in sdf["root"].get("version").split("."))
    assert (major, minor) >= (1, 9)
    for link in sdf["links"].values():
        assert link["element"].find("pose").get("relative_to"), link["element"].get("name")


def test_sdf_exercises_frames_model_axes_and_joint_poses():
    features = {"frame chains": 0, "relative to a frame": 0, "axis in model": 0, "axis in joint": 0,
                "joint pose": 0, "collision relative_to": 0}
    for name in ROBOTS:
        sdf = _sdf(_asset(f"{name}.sdf"))
        frames = sdf["frames"]
        features["frame chains"] += sum(frame.get("attached_to") in frames for frame in frames.values())
        for link in sdf["links"].values():
            features["relative to a frame"] += link["element"].find("pose").get("relative_to") in frames
            features["collision relative_to"] += len(link["element"].xpath("collision/pose[@relative_to]"))
        for joint in sdf["joints"].values():
            xyz = joint["element"].find("axis/xyz")
            if xyz is not None:
                features["axis in model" if xyz.get("expressed_in") == "__model__" else "axis in joint"] += 1
            features["joint pose"] += joint["element"].find("pose") is not None
    assert all(count > 0 for count in features.values()), features


@pytest.mark.parametrize("name", ROBOTS)
def test_urdf_and_sdf_describe_the_same_tree(name):
    urdf, sdf = _urdf(name), _sdf(_asset(f"{name}.sdf"))
    for link_name, link in sdf["links"].items():
        reference = urdf["links"][link_name]
        np.testing.assert_allclose(link["M_H"], reference["M_H"], atol=TOLERANCE, err_msg=link_name)
        if reference["inertial"] is None:
            assert link["inertial"][0] == 0.0 and not link["inertial"][2].any(), link_name
        else:
            assert link["inertial"][0] == reference["inertial"][0], link_name
            np.testing.assert_allclose(*(_model_inertia(entry) for entry in (link, reference)),
                                       atol=TOLERANCE, err_msg=link_name)
        assert set(link["collisions"]) == set(reference["collisions"]), link_name
        for collision_name, (L_H_G, tag, size) in link["collisions"].items():
            reference_H, reference_tag, reference_size = reference["collisions"][collision_name]
            np.testing.assert_allclose(L_H_G, reference_H, atol=TOLERANCE, err_msg=collision_name)
            assert tag == reference_tag
            assert {key: list(value) for key, value in size.items()} == \
                {key: list(value) for key, value in reference_size.items()}
    for joint_name, joint in sdf["joints"].items():
        reference = urdf["joints"][joint_name]
        assert (joint["type"], joint["parent"], joint["child"]) == \
            (reference["type"], reference["parent"], reference["child"])
        M_H_child = sdf["links"][joint["child"]]["M_H"]
        np.testing.assert_allclose(joint["M_H_J"], M_H_child, atol=TOLERANCE, err_msg=joint_name)
        if joint["axis_model"] is not None:
            expected_axis = urdf["links"][reference["child"]]["M_H"][:3, :3] @ reference["axis"]
            np.testing.assert_allclose(joint["axis_model"], expected_axis, atol=TOLERANCE, err_msg=joint_name)
            _assert_same_limits(reference["element"], joint["element"])


def _model_inertia(link: dict) -> np.ndarray:
    """COM position (3,) and inertia about the COM (3, 3) in the model frame, stacked (4, 3)."""
    _, L_H_I, inertia = link["inertial"]
    M_H_I = link["M_H"] @ L_H_I
    R = M_H_I[:3, :3]
    return np.vstack([M_H_I[:3, 3], R @ inertia @ R.T])


def _assert_same_limits(urdf_joint: etree._Element, sdf_joint: etree._Element) -> None:
    limit, dynamics = urdf_joint.find("limit"), urdf_joint.find("dynamics")
    for key in ("lower", "upper", "effort", "velocity"):
        value = sdf_joint.find(f"axis/limit/{key}")
        assert (limit.get(key) is None) == (value is None), key
        if value is not None:
            assert float(limit.get(key)) == float(value.text), key
    for key in ("damping", "friction"):
        value = sdf_joint.find(f"axis/dynamics/{key}")
        urdf_value = dynamics.get(key) if dynamics is not None else None
        assert float(urdf_value or 0.0) == float(value.text if value is not None else 0.0), key


@pytest.mark.parametrize("name", ROBOTS)
def test_inertias_are_physical(name):
    for description in (_urdf(name), _sdf(_asset(f"{name}.sdf"))):
        for link_name, link in description["links"].items():
            if link["inertial"] is None:
                continue
            mass, _, inertia = link["inertial"]
            assert mass >= 0.0, link_name
            np.testing.assert_allclose(inertia, inertia.T)
            moments = np.linalg.eigvalsh(inertia)
            if mass == 0.0:
                assert not inertia.any(), link_name
                continue
            assert moments[0] > 0.0, link_name
            a, b, c = moments
            assert a + b >= c - TOLERANCE, (link_name, moments)


@pytest.mark.parametrize("name", ROBOTS)
def test_massless_links_are_leaves_on_fixed_joints(name):
    urdf = _urdf(name)
    parents = {joint["parent"] for joint in urdf["joints"].values()}
    for joint in urdf["joints"].values():
        if urdf["links"][joint["child"]]["inertial"] is None:
            assert joint["type"] == "fixed" and joint["child"] not in parents, joint["child"]


def test_pendulum_inertia_about_the_pivot_is_documented():
    urdf = _urdf("pendulum")
    pivot = urdf["joints"]["pivot"]
    mass, L_H_I, inertia = urdf["links"]["pole"]["inertial"]
    axis = pivot["axis"] / np.linalg.norm(pivot["axis"])
    com = L_H_I[:3, 3]
    distance = np.linalg.norm(com - axis * (axis @ com))
    R = L_H_I[:3, :3]
    about_pivot = axis @ (R @ inertia @ R.T) @ axis + mass * distance**2
    assert math.isclose(about_pivot, generate.PENDULUM_PIVOT_INERTIA, rel_tol=1e-12)
    assert math.isclose(distance, generate.PENDULUM_LENGTH) and mass == generate.PENDULUM_MASS
    np.testing.assert_allclose(urdf["links"]["pole"]["M_H"][:3, 3], generate.PENDULUM_PIVOT)
    np.testing.assert_allclose(axis, [0.0, 1.0, 0.0])


def _lowest_point(M_H_G: np.ndarray, tag: str, size: dict) -> float:
    centre, R = M_H_G[2, 3], M_H_G[:3, :3]
    if tag == "sphere":
        return centre - size["radius"][0]
    if tag == "cylinder":
        a_z = abs(R[2, 2])
        return centre - size["length"][0] / 2 * a_z - size["radius"][0] * math.sqrt(max(0.0, 1.0 - a_z**2))
    half = np.asarray(size["size"]) / 2
    return centre - float(np.abs(R[2, :]) @ half)


@pytest.mark.parametrize("name, height", [("quadruped", generate.QUADRUPED_STANDING_HEIGHT),
                                          ("humanoid", generate.HUMANOID_STANDING_HEIGHT)])
def test_floating_robots_stand_on_the_ground_at_the_documented_height(name, height):
    urdf = _urdf(name)
    lowest = min(
        _lowest_point(link["M_H"] @ H, tag, size)
        for link in urdf["links"].values()
        for H, tag, size in link["collisions"].values()
    )
    assert math.isclose(lowest + height, 0.0, abs_tol=TOLERANCE)


# --------------------------------------------------------------------------- world


def test_world_has_gravity_step_ground_and_two_posed_models():
    root = _parse(_asset("world.sdf"))
    world = root.find("world")
    assert world.get("name") == "default"
    np.testing.assert_allclose(_floats(world.find("gravity").text), generate.WORLD_GRAVITY)
    assert float(world.find("physics/max_step_size").text) == generate.WORLD_STEP_SIZE
    ground = world.find("model[@name='ground_plane']")
    assert ground.find("static").text == "true"
    plane = ground.find("link/collision/geometry/plane")
    np.testing.assert_allclose(_floats(plane.find("normal").text), [0, 0, 1])
    np.testing.assert_allclose(_floats(plane.find("size").text), [100, 100])
    inline = world.find("model[@name='free_box']")
    assert inline.find("pose") is not None
    include = world.find("include")
    assert include.find("pose") is not None
    folder = os.path.join(ASSETS, include.find("uri").text)
    config = _parse(os.path.join(folder, "model.config"))
    included = _sdf(os.path.join(folder, config.find("sdf").text))
    assert included["model"].get("name") == "sphere"
    assert math.isclose(_total_mass(included), generate.EXPECTED["sphere"].total_mass)


# --------------------------------------------------------------------------- SRDF


def test_srdf_references_only_existing_links_joints_and_groups():
    urdf = _urdf("humanoid")
    links, joints = set(urdf["links"]), set(urdf["joints"])
    by_child = {joint["child"]: joint["parent"] for joint in urdf["joints"].values()}
    srdf = _parse(_asset("humanoid.srdf"))
    assert srdf.get("name") == urdf["root"].get("name")
    virtual = {joint.get("name") for joint in srdf.findall("virtual_joint")}
    for joint in srdf.findall("virtual_joint"):
        assert joint.get("child_link") in links and joint.get("type") in ("fixed", "planar", "floating")
    groups = {group.get("name"): group for group in srdf.findall("group")}
    for group in groups.values():
        assert {link.get("name") for link in group.findall("link")} <= links
        assert {joint.get("name") for joint in group.findall("joint")} <= joints | virtual
        assert {member.get("name") for member in group.findall("group")} <= set(groups)
        for chain in group.findall("chain"):
            tip, base = chain.get("tip_link"), chain.get("base_link")
            while tip != base:
                tip = by_child[tip]
    limits = {joint.get("name"): joint.find("limit") for joint in urdf["root"].findall("joint")}
    for state in srdf.findall("group_state"):
        assert state.get("group") in groups
        for joint in state.findall("joint"):
            limit = limits[joint.get("name")]
            assert float(limit.get("lower")) <= float(joint.get("value")) <= float(limit.get("upper"))
    for effector in srdf.findall("end_effector"):
        assert effector.get("parent_link") in links
        assert {effector.get("group"), effector.get("parent_group")} <= set(groups)
    for element in srdf.findall("passive_joint"):
        assert element.get("name") in joints | virtual
    for element in srdf.findall("disable_collisions") + srdf.findall("enable_collisions"):
        assert {element.get("link1"), element.get("link2")} <= links and element.get("reason")
    for element in srdf.findall("disable_default_collisions") + srdf.findall("link_sphere_approximation"):
        assert element.get("link") in links
    for element in srdf.findall("joint_property"):
        assert element.get("joint_name") in joints | virtual


# --------------------------------------------------------------------------- reference parser


@pytest.mark.parametrize("name", ROBOTS)
def test_pinocchio_reads_the_urdf_with_the_same_totals(name):
    pinocchio = pytest.importorskip("pinocchio")
    expected = generate.EXPECTED[name]
    path = _asset(f"{name}.urdf")
    if expected.base == "floating":
        model = pinocchio.buildModelFromUrdf(path, pinocchio.JointModelFreeFlyer())
        assert model.nv == expected.dof + 6
    else:
        model = pinocchio.buildModelFromUrdf(path)
        assert model.nv == expected.dof
    data = model.createData()
    pinocchio.framesForwardKinematics(model, data, pinocchio.neutral(model))
    for link_name, link in _urdf(name)["links"].items():
        placement = data.oMf[model.getFrameId(link_name)]
        np.testing.assert_allclose(placement.homogeneous, link["M_H"], atol=TOLERANCE, err_msg=link_name)
    mass = pinocchio.computeTotalMass(model, data)
    fixed_base_mass = 0.0 if expected.base == "floating" else _fixed_base_mass(name)
    assert math.isclose(mass + fixed_base_mass, expected.total_mass, abs_tol=TOLERANCE)


def test_rotation_convention_matches_pinocchio():
    pinocchio = pytest.importorskip("pinocchio")
    for rpy in np.random.default_rng(0).uniform(-math.pi, math.pi, size=(20, 3)):
        R = generate.rotation(rpy)
        np.testing.assert_allclose(R, pinocchio.rpy.rpyToMatrix(*rpy), atol=1e-12)
        np.testing.assert_allclose(generate.rotation(generate.rpy_of(R)), R, atol=1e-12)


def _fixed_base_mass(name: str) -> float:
    # Pinocchio welds the fixed base to its universe joint, which computeTotalMass leaves out.
    urdf = _urdf(name)
    root = next(joint["child"] for joint in urdf["joints"].values() if joint["parent"] == "world")
    return urdf["links"][root]["inertial"][0]
