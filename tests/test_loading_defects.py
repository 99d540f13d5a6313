"""Robot files with the defects found in public robot descriptions (tests/assets/defects): each
loads with the documented warnings (or none), finite dynamics and a positive definite mass
matrix (static models: none), and ``strict=True`` turns every warning into a ModelLoadError."""

from __future__ import annotations

import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import dynamics as D
from jaxsim_like.dynamics import consistency
from jaxsim_like.parsers import parse_urdf

DEFECTS = Path(__file__).resolve().parent / "assets" / "defects"

# file -> (element the warning points at, or None for a clean load; text the warning contains)
CASES = {
    "point_mass_on_fixed_joint.urdf": (None, ""),
    "dummy_root.urdf": (None, ""),
    "tiny_inertia_entries.urdf": (None, ""),
    "leading_whitespace.urdf": (None, ""),
    "cad_triangle_inequality.urdf": (
        '<link name="shoulder">',
        "inertia of body 'shoulder' is not physically consistent (breaks the triangle inequality I1 + I2 >= I3): "
        "principal moments [0.001, 0.002, 0.00315] kg m^2 about the COM; regularised to the nearest consistent ones "
        "[0.00105, 0.00205, 0.0031]",
    ),
    "negative_principal_moment.urdf": (
        '<link name="arm">',
        "inertia of body 'arm' is not physically consistent (negative principal moment): principal moments [-0.1, 0.1, 0.3]",
    ),
    "massless_finger.urdf": (
        '<link name="finger">',
        "body 'finger' is moved by joint 'knuckle' but it and its subtree have zero mass; each of its 2 bodies "
        "('finger', 'fingertip') is given 0.0001 of body 'arm': mass 0.0001 kg",
    ),
    "massless_slider.urdf": ('<link name="tip">', "body 'tip' is moved by joint 'slide' but it and its subtree have zero mass"),
    "point_mass_turned_in_place.urdf": (
        '<link name="head">',
        "joints 'neck_roll', 'neck_yaw' can move body 'head' without moving any inertia, so the mass matrix would be "
        "singular; given 5.2e-05 kg m^2 of inertia about each axis (a solid sphere of its mass and radius 0.01 m)",
    ),
    "mimic_gripper.urdf": (None, ""),
    "mimic_missing_joint.urdf": (
        '<joint name="shoulder">',
        "mimic refers to invalid joint 'elbow': 1 mimic(s) name a joint the model does not have",
    ),
    "xml_version_zero.urdf": (None, ""),
    "lower_above_upper.urdf": (
        "<limit>",
        "lower limit 1 above upper limit -1 of joint 'shoulder': taken as unlimited (as PyBullet does)",
    ),
    "several_axes.urdf": ('<joint name="shoulder">', "several <axis> elements: the first (line 20) is used, not those of line(s) 21"),
    "two_shapes.urdf": ("<geometry>", "several shapes (<box>, <sphere>): the first is used"),
    "mesh_scale_four.urdf": ("<mesh>", "scale='1 1 1 1': expected 3 number(s), got 4; the first 3 are used"),
    "unknown_geometry.urdf": ("<torus>", "unknown geometry 'torus': the collision is dropped"),
    "static_tray.urdf": (
        '<link name="tray_base">',
        "model 'tray' has no mass and no moving joint on a free base: loaded as a static model welded to the world",
    ),
    "static_plane.urdf": ('<link name="floor">', "model 'plane' has no mass and no moving joint on a free base"),
    "missing_mesh.urdf": (
        '<collision name="base_shell">',
        "mesh 'package://missing_description/meshes/shell.stl' of collision 'base_shell' of link 'base' was not found: "
        "it has no collidable points",
    ),
}


@jax.jit
def dynamics(model: js.Model, state: js.State, tau: jax.Array):
    """Mass matrix, bias forces and forward dynamics (compiled once per model structure)."""
    return D.mass_matrix(model, state), D.bias_forces(model, state), D.forward_dynamics(model, state, joint_torques=tau)


def line_of(path: Path, element: str) -> int:
    return next(number for number, text in enumerate(path.read_text().splitlines(), 1) if element[:-1] in text)


def load(path: Path) -> tuple[js.Model, list[js.ModelLoadWarning]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = js.load_model(path)
    return model, [w.message for w in caught if issubclass(w.category, js.ModelLoadWarning)]


def test_every_defect_file_has_a_case():
    assert sorted(CASES) == sorted(path.name for path in DEFECTS.glob("*.urdf"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_defect_loads_with_one_located_warning(name: str):
    path = DEFECTS / name
    element, text = CASES[name]
    _, caught = load(path)
    if element is None:
        assert caught == []
        js.load_model(path, strict=True)
        return
    assert len(caught) == 1, [str(w) for w in caught]
    warning = caught[0]
    assert (warning.file, warning.line, warning.element) == (str(path), line_of(path, element), element)
    assert text in str(warning) and str(warning).startswith(f"{path}:{warning.line}: {element}: ")
    with pytest.raises(js.ModelLoadError) as error:
        js.load_model(path, strict=True)
    assert str(error.value) == str(warning)


# The defects that change or could break the bodies (mimic, mesh and XML cases leave them as written).
BODY_CASES = [name for name in sorted(CASES) if not name.startswith(("mimic", "missing_mesh", "leading", "static"))]


@pytest.mark.parametrize("name", BODY_CASES)
def test_defect_has_finite_dynamics_and_a_positive_definite_mass_matrix(name: str):
    model, _ = load(DEFECTS / name)
    rng = np.random.default_rng(0)
    state = js.State.build(
        model,
        joint_positions=rng.uniform(-0.5, 0.5, model.dofs),
        joint_velocities=rng.normal(size=model.dofs),
        base_velocity=rng.normal(size=6) if model.floating_base else None,
    )
    tau = jnp.asarray(rng.normal(size=model.dofs))
    M, h, (base, joints) = jax.tree.map(np.asarray, dynamics(model, state, tau))
    nu_dot = np.concatenate([base, joints]) if model.floating_base else joints
    assert np.isfinite(M).all() and np.isfinite(nu_dot).all()
    assert np.linalg.eigvalsh(M).min() > 0.0
    forces = np.concatenate([np.zeros(6), tau]) if model.floating_base else np.asarray(tau)
    np.testing.assert_allclose(M @ nu_dot + h, forces, atol=1e-9 * max(1.0, np.abs(forces).max()), rtol=0)


def test_valid_lumped_bodies_keep_the_file_masses():
    model, _ = load(DEFECTS / "point_mass_on_fixed_joint.urdf")
    assert model.link_names == ("base", "leg") and float(model.total_mass) == pytest.approx(2.56, abs=1e-12)
    leg = np.asarray(model.link_inertia[1])
    # The 0.05 kg point at 0.2 m below the leg origin and the leg's COM 0.1 m below it.
    com = (0.5 * 0.1 + 0.05 * 0.2) / 0.55
    expected = 0.002 + 0.5 * (com - 0.1) ** 2 + 0.05 * (0.2 - com) ** 2
    assert leg[0, 0] == pytest.approx(expected, rel=1e-12)


def test_regularised_inertia_is_the_nearest_consistent_one():
    model, _ = load(DEFECTS / "cad_triangle_inequality.urdf")
    shoulder = np.asarray(model.link_inertia[model.link_index("shoulder")])
    np.testing.assert_allclose(np.linalg.eigvalsh(shoulder), [0.00105, 0.00205, 0.0031], rtol=1e-12)
    assert float(model.link_mass[model.link_index("shoulder")]) == 0.6


def test_massless_bodies_get_the_documented_regularisation():
    model, _ = load(DEFECTS / "massless_finger.urdf")
    for name in ("finger", "fingertip"):
        i = model.link_index(name)
        assert float(model.link_mass[i]) == pytest.approx(1e-4 * 1.0)
        np.testing.assert_allclose(np.asarray(model.link_inertia[i]), 1e-4 * 0.1 * np.eye(3), rtol=1e-12)


def test_consistent_moments_follow_the_documented_rule():
    d = 0.1 / 3  # (l3 - l1 - l2) / 3
    np.testing.assert_allclose(consistency.consistent_moments(np.array([0.1, 0.1, 0.3])), [0.1 + d, 0.1 + d, 0.3 - d], rtol=1e-12)
    floor = 1e-6 * 0.3
    d = (0.3 - 0.1 - floor) / 3
    np.testing.assert_allclose(consistency.consistent_moments(np.array([-0.1, 0.1, 0.3])), [floor + d, 0.1 + d, 0.3 - d], rtol=1e-12)
    np.testing.assert_array_equal(consistency.consistent_moments(np.array([-1.0, -1.0, -1.0])), [0.0, 0.0, 0.0])
    rng = np.random.default_rng(1)
    for moments in np.sort(rng.uniform(-0.2, 1.0, (100, 3)), axis=1):
        fixed = consistency.consistent_moments(moments)
        assert consistency.is_consistent(fixed) and np.all(np.diff(fixed) >= -1e-15)


def test_consistency_tolerates_rounding_noise_at_the_model_scale():
    for moments in ([0.0, 0.0, 0.0], [0.0, 1.0, 1.0], [0.1, 0.2, 0.3], [1.0, 1.0, 1.0]):
        assert consistency.is_consistent(np.array(moments))
    assert consistency.is_consistent(np.array([-1e-20, 0.0, 1e-18]), scale=0.1)
    assert not consistency.is_consistent(np.array([-1e-20, 0.0, 1e-18]))
    assert not consistency.is_consistent(np.array([0.1, 0.1, 0.2 * 1.001]), scale=0.2)


def test_a_model_without_any_mass_cannot_be_regularised():
    urdf = (
        '<robot name="r"><link name="world"/><link name="a"/>'
        '<joint name="weld" type="fixed"><parent link="world"/><child link="a"/></joint>'
        '<link name="b"/><joint name="j" type="continuous"><parent link="a"/><child link="b"/></joint></robot>'
    )
    with pytest.raises(js.ModelLoadError, match="no link has mass"):
        js.load_model(urdf)


def test_xacro_files_and_templates_are_rejected_with_a_hint():
    with pytest.raises(js.ModelLoadError, match=r"robot\.urdf\.xacro: a xacro file is a template.*expand it first"):
        js.load_model(DEFECTS / "robot.urdf.xacro")
    text = (DEFECTS / "robot.urdf.xacro").read_text()
    with pytest.raises(js.ModelLoadError, match=r"<string>:4: .*xacro element <xacro:property>.*expand it first"):
        js.load_model(text)


def test_leading_whitespace_keeps_line_numbers():
    text = (DEFECTS / "leading_whitespace.urdf").read_text().replace('<mass value="1.0"/>', '<mass value="x"/>')
    with pytest.raises(js.ModelLoadError) as error:
        js.load_model(text)
    assert error.value.line == next(n for n, line in enumerate(text.splitlines(), 1) if 'value="x"' in line)


def test_missing_mesh_keeps_the_other_points():
    model, _ = load(DEFECTS / "missing_mesh.urdf")
    assert len(model.point_link) == 8


def test_load_world_strict_raises_on_a_mimic_of_a_missing_joint(tmp_path: Path):
    model = (
        '<model name="m"><link name="a"><inertial><mass>1</mass></inertial></link>'
        '<link name="b"><inertial><mass>1</mass></inertial></link>'
        '<joint name="j" type="revolute"><parent>a</parent><child>b</child>'
        '<axis><xyz>0 0 1</xyz><limit><lower>-1</lower><upper>1</upper></limit><mimic joint="elbow"/></axis></joint></model>'
    )
    world = tmp_path / "world.sdf"
    world.write_text(f'<sdf version="1.11"><world name="w">\n{model}</world></sdf>')
    with pytest.warns(js.ModelLoadWarning, match=r"world\.sdf:2: <joint name=\"j\">: mimic refers to invalid joint 'elbow'"):
        loaded = js.load_world(world)
    assert loaded.models[0].joint("j").mimic is None
    with pytest.raises(js.ModelLoadError, match="mimic refers to invalid joint 'elbow'"):
        js.load_world(world, strict=True)


def test_mimic_joints_load_as_couplings_and_a_cycle_of_them_is_an_error():
    model, _ = load(DEFECTS / "mimic_gripper.urdf")
    assert (model.couplings.follower, model.couplings.leader) == ((1,), (0,))
    text = (DEFECTS / "mimic_gripper.urdf").read_text().replace(
        '<limit lower="0" upper="0.04" effort="20" velocity="0.2"/>\n  </joint>',
        '<limit lower="0" upper="0.04" effort="20" velocity="0.2"/>\n    <mimic joint="right_finger_joint"/>\n  </joint>',
        1,
    )
    with pytest.raises(js.ModelLoadError, match="mimic joints form a cycle \\('left_finger_joint' -> 'right_finger_joint' -> 'left_finger_joint'\\)"):
        js.load_model(text)


def test_static_models_of_zero_mass_are_welded_and_keep_their_shapes():
    tray, _ = load(DEFECTS / "static_tray.urdf")
    assert (tray.dofs, tray.floating_base, len(tray.point_link)) == (0, False, 16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", js.ModelLoadWarning)
        description = parse_urdf(DEFECTS / "static_plane.urdf")
    (collision,) = description.link("floor").collisions
    assert description.static and description.fixed_to_world
    assert (collision.geometry.type, collision.geometry.normal) == ("plane", (0.0, 0.0, 1.0))


def test_unlimited_after_lower_above_upper():
    model, _ = load(DEFECTS / "lower_above_upper.urdf")
    assert np.isinf(np.asarray([model.position_limit_lower, model.position_limit_upper])).all()
