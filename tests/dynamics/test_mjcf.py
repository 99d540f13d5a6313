"""MJCF through MuJoCo's compiler: the mass matrix and the inverse dynamics agree with MuJoCo's own
``mj_fullM`` and ``mj_rne`` at 1e-9 at random states on files the ``mujoco-mjx`` wheel and
dm_control's suite ship,
forward dynamics (armature included), collision shapes are the model's geoms, and
what the model cannot represent is a ModelLoadError naming it."""

from __future__ import annotations

import importlib.util
import warnings
import zlib
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import dynamics as D
from jaxsim_like.dynamics import configuration
from jaxsim_like.parsers import parse_mjcf

from .conftest import assert_close

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")
DATA = Path(mujoco.__file__).resolve().parent / "mjx" / "test_data"
GRAVITY = np.array([0.0, 0.0, -9.81])  # our default gravity
CASES = {
    "humanoid/humanoid.xml": "free base, bodies with three hinges each, armature, damping",
    "barkour_v0/assets/barkour_v0_mjx.xml": "free base quadruped with meshes and armature",
    "shadow_hand/right_hand.xml": "fixed-base hand on the world, 24 hinges, meshes, armature",
    "tendon/no_tendon.xml": "fixed-base hinge chain, no armature",
    "dm_control/humanoid.xml": "dm_control's suite: sites named like their bodies",
    "dm_control/swimmer.xml": "dm_control's suite: a planar free body (slides and a hinge), sites named like bodies",
    "dm_control/point_mass.xml": "dm_control's suite: two slides driven by motors on fixed tendons",
    "dm_control/fish.xml": "dm_control's suite: a free body whose fins are coupled by fixed tendons, one with a spring",
    "dm_control/manipulator.xml": "dm_control's suite: a planar arm whose fingers are coupled by a tendon equality",
    "gymnasium/humanoid.xml": "gymnasium's humanoid: free base, fixed tendons between hips and knees",
    "sensor/model.xml": "fixed base, hinges, slides and two ball joints (one with an anchor off the body origin)",
}
_DM_CONTROL = importlib.util.find_spec("dm_control")  # its files only: the package is not imported
_GYMNASIUM = importlib.util.find_spec("gymnasium")
SUITES = {
    "dm_control": Path(_DM_CONTROL.submodule_search_locations[0]) / "suite" if _DM_CONTROL else None,
    "gymnasium": Path(_GYMNASIUM.submodule_search_locations[0], "envs", "mujoco", "assets") if _GYMNASIUM else None,
}


def path_of(name: str) -> Path:
    """``dm_control/<file>`` in dm_control's suite and ``gymnasium/<file>`` in gymnasium's MuJoCo
    assets (a skip without the package), else in MJX's test data."""
    package, _, file = name.partition("/")
    if package not in SUITES:
        return DATA / name
    if SUITES[package] is None:
        pytest.skip(f"{package}'s files come with the {package} package (test extra)")
    return SUITES[package] / file


def load(name: str) -> js.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", js.ModelLoadWarning)  # contact pairs of the humanoid
        return js.load_model(path_of(name))


@jax.jit
def dynamics(model: js.Model, state: js.State, nu_dot: jax.Array, tau: jax.Array) -> dict:
    base, joints = (nu_dot[:6], nu_dot[6:]) if model.floating_base else (None, nu_dot)
    wrench, torques = D.inverse_dynamics(model, state, base_acceleration=base, joint_accelerations=joints)
    base_acc, joint_acc = D.forward_dynamics(model, state, joint_torques=tau)
    stack = (lambda b, j: jnp.concatenate([b, j])) if model.floating_base else (lambda b, j: j)
    return {"mass_matrix": D.mass_matrix(model, state), "rnea": stack(wrench, torques), "aba": stack(base_acc, joint_acc)}


def joint_id(m, name: str) -> int:
    """MuJoCo's id of our joint ``name`` (unnamed MuJoCo joints are ``joint<id>`` here, with underscores appended when the file names another joint so)."""
    j = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)
    return j if j >= 0 else int(name.removeprefix("joint").rstrip("_"))


class MuJoCo:
    """MuJoCo's model of the file and the map from our variables to its ``qpos``, ``qvel``."""

    def __init__(self, model: js.Model, path: Path):
        self.m = mujoco.MjModel.from_xml_path(str(path))
        self.m.opt.gravity[:] = GRAVITY
        self.m.opt.disableflags &= ~int(mujoco.mjtDisableBit.mjDSBL_GRAVITY)  # fish.xml turns it off
        self.d = mujoco.MjData(self.m)
        self.model = model
        # A ball joint's degrees of freedom (name:x, :y, :z) are its joint's three; its quaternion is stored as is.
        ball_of = {start + k: (start, k) for start in model.ball_dofs for k in range(3)}
        ids = [joint_id(self.m, name[:-2] if k in ball_of else name) for k, name in enumerate(model.joint_names)]
        offsets = [ball_of[k][1] if k in ball_of else 0 for k in range(model.dofs)]
        self.dof_adr = np.array([self.m.jnt_dofadr[j] + o for j, o in zip(ids, offsets)], dtype=int)
        layout = configuration.position_layout(model)
        self.scalar_qpos = np.array([self.m.jnt_qposadr[ids[k]] for k in layout.scalar_dofs], dtype=int)
        self.scalar_positions = layout.scalar_positions
        self.ball_qpos = np.array([self.m.jnt_qposadr[ids[start]] for start in model.ball_dofs], dtype=int)
        self.ball_positions = layout.ball_positions

    def velocity_map(self, R: np.ndarray) -> np.ndarray:
        """``P (nv, nv)``: MuJoCo's ``qvel = P nu`` for our ``nu`` (base velocity mixed: [p_dot; W_omega])."""
        n, nv = self.model.dofs, self.m.nv
        P = np.zeros((nv, self.model.generalized_velocity_size))
        offset = 6 if self.model.floating_base else 0
        if self.model.floating_base:  # MuJoCo's free joint: [world linear velocity; body angular velocity]
            P[:3, :3], P[3:6, 3:6] = np.eye(3), R.T
        P[self.dof_adr, offset + np.arange(n)] = 1.0
        return P

    def set(self, position, quaternion, q, nu) -> np.ndarray:
        d = self.d
        d.qpos[:] = self.m.qpos0
        if self.model.floating_base:
            d.qpos[:3], d.qpos[3:7] = position, quaternion
        d.qpos[self.scalar_qpos] = self.m.qpos0[self.scalar_qpos] + q[self.scalar_positions]
        for adr, start in zip(self.ball_qpos, self.ball_positions):
            d.qpos[adr : adr + 4] = q[start : start + 4]
        R = np.zeros(9)
        mujoco.mju_quat2Mat(R, np.asarray(quaternion, dtype=float))
        P = self.velocity_map(R.reshape(3, 3))
        d.qvel[:] = P @ nu
        mujoco.mj_forward(self.m, d)
        return P

    def reference(self, P: np.ndarray, nu_dot: np.ndarray, tau: np.ndarray) -> dict:
        m, d = self.m, self.d
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        d.qacc[:] = P @ nu_dot
        rne = np.zeros(m.nv)
        mujoco.mj_rne(m, d, 1, rne)  # M_rigid qacc + bias: MuJoCo adds the armature separately
        rne += m.dof_armature * d.qacc
        bias = d.qfrc_bias.copy()
        out = {"mass_matrix": P.T @ M @ P, "rnea": P.T @ rne}
        forces = np.linalg.solve(P.T, np.concatenate([np.zeros(6), tau]) if self.model.floating_base else tau)
        out["aba"] = np.linalg.solve(P, np.linalg.solve(M, forces - bias))
        return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_dynamics_agree_with_mujoco(name: str):
    model = load(name)
    reference = MuJoCo(model, path_of(name))
    assert reference.m.nv == model.generalized_velocity_size
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    for k in range(2):
        quaternion = rng.normal(size=4)
        quaternion /= np.linalg.norm(quaternion)
        position = rng.normal(size=3)
        lower = np.maximum(np.asarray(model.position_limit_lower), -np.pi)
        upper = np.minimum(np.asarray(model.position_limit_upper), np.pi)
        # Each ball joint turned by a random rotation vector (its three "limits" are infinite).
        q = np.asarray(configuration.integrate_positions(model, configuration.neutral_positions(model, float), rng.uniform(lower, upper), 1.0))
        nu, nu_dot = rng.normal(size=(2, model.generalized_velocity_size))
        tau = rng.normal(size=model.dofs)
        state = js.State.build(  # a fixed base stays where the file welds it
            model,
            base_position=position if model.floating_base else None,
            base_quaternion=quaternion if model.floating_base else None,
            base_velocity=nu[:6] if model.floating_base else None,
            joint_positions=q,
            joint_velocities=nu[-model.dofs :] if model.dofs else None,
            velocity_representation="mixed",
        )
        P = reference.set(position, quaternion, q, nu)
        expected = reference.reference(P, nu_dot, tau)
        ours = jax.tree.map(np.asarray, dynamics(model, state, jnp.asarray(nu_dot), jnp.asarray(tau)))
        where = f"{name} sample {k}"
        assert_close(ours["mass_matrix"], expected["mass_matrix"], "mass_matrix [MJCF]", where=where)
        assert_close(ours["rnea"], expected["rnea"], "rnea [MJCF]", where=where)
        assert_close(ours["aba"], expected["aba"], "aba [MJCF]", where=where)


def test_the_humanoid_keeps_the_file_joint_data():
    model = load("humanoid/humanoid.xml")
    m = mujoco.MjModel.from_xml_path(str(DATA / "humanoid/humanoid.xml"))
    assert model.floating_base and model.dofs == m.nv - 6
    assert float(model.total_mass) == pytest.approx(float(m.body_mass.sum()), rel=1e-12)
    for k, name in enumerate(model.joint_names):
        j = joint_id(m, name)
        dof = m.jnt_dofadr[j]
        assert float(model.joint_damping[k]) == m.dof_damping[dof] and float(model.joint_armature[k]) == m.dof_armature[dof]
        assert float(model.position_limit_lower[k]) == pytest.approx(m.jnt_range[j][0] - m.qpos0[m.jnt_qposadr[j]])
    # Bodies with several hinges: one massless link per joint but the last.
    assert {"thigh_right::hip_x_right", "thigh_right::hip_z_right", "thigh_right"} <= set(model.link_names)
    assert float(model.link_mass[model.link_index("thigh_right::hip_x_right")]) == 0.0


def test_redundant_joints_in_one_body_are_regularised():
    """Four slides in one body, one along (1, 1, 0): MuJoCo's mass matrix is singular; ours gets a
    small mass on the massless links between the joints, with one warning each (after the one
    naming the actuators with activation dynamics, which are dropped)."""
    with pytest.warns(js.ModelLoadWarning, match="so the mass matrix would be singular; given 0.0001 of body 'box'") as record:
        model = js.load_model(DATA / "actuator/general_dyntype.xml")
    names = [w.message.element for w in record if issubclass(w.category, js.ModelLoadWarning)]
    assert names == ["<general>", '<joint name="slide1">', '<joint name="slide2">', '<joint name="slide3">']
    M = np.asarray(jax.jit(D.mass_matrix)(model, js.State.build(model)))
    assert np.linalg.eigvalsh(M).min() > 1e-5
    np.testing.assert_allclose(np.diag(M), [1.0003, 1.0002, 1.0001, 1.0], rtol=1e-12)


def test_collision_shapes_are_the_model_geoms():
    name = "shadow_hand/right_hand.xml"
    model = load(name)
    reference = MuJoCo(model, DATA / name)
    reference.set(np.zeros(3), np.array([1.0, 0, 0, 0]), np.zeros(model.dofs), np.zeros(model.dofs))
    m, d = reference.m, reference.d
    kinds = {2: "sphere", 3: "capsule", 5: "cylinder", 6: "box"}
    solid = [g for g in range(m.ngeom) if m.geom_type[g] in kinds and (m.geom_contype[g] or m.geom_conaffinity[g]) and m.geom_bodyid[g]]
    primitive = [s for s, kind in enumerate(model.shape_kind) if kind != "hull"]
    assert len(primitive) == len(solid) > 10
    W_H_L = np.asarray(jax.jit(D.forward_kinematics)(model, js.State.build(model)))
    W_H_S = W_H_L[list(model.shape_link)] @ np.asarray(model.shape_transform)
    for g in solid:
        s = primitive[int(np.argmin(np.linalg.norm(W_H_S[primitive, :3, 3] - d.geom_xpos[g], axis=1)))]
        assert model.shape_kind[s] == kinds[int(m.geom_type[g])]
        np.testing.assert_allclose(W_H_S[s, :3, 3], d.geom_xpos[g], atol=1e-12)
        np.testing.assert_allclose(W_H_S[s, :3, :3], d.geom_xmat[g].reshape(3, 3), atol=1e-12)
        size = np.asarray(model.shape_size[s])
        round_ = [m.geom_size[g][0], m.geom_size[g][1], 0]
        expected = {"sphere": [m.geom_size[g][0], 0, 0], "capsule": round_, "cylinder": round_, "box": m.geom_size[g]}
        np.testing.assert_allclose(size, expected[model.shape_kind[s]], rtol=1e-12)
    meshes = [g for g in range(m.ngeom) if m.geom_type[g] == 7 and (m.geom_contype[g] or m.geom_conaffinity[g])]
    assert meshes and model.shape_kind.count("hull") == len(meshes)  # meshes are hulls by default


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("tendon/wrap_sidesite.xml", r"wrap_sidesite\.xml:\d+: <spatial>: spatial tendon 'tendon0' wraps around geom 'sphere0' with the side site 'inside_sidesite0': side sites are not supported yet"),
        ("constraints.xml", r"tendon equality 'tendon' with a nonlinear polycoef \(0\.5 -1 0\.1 0\.15 0\.2\) is not supported yet"),
    ],
)
def test_what_the_model_cannot_represent_is_an_error(name: str, match: str):
    with pytest.raises(js.ModelLoadError, match=match):
        js.load_model(DATA / name)


def test_a_weld_between_two_trees_is_a_closure_of_the_world(tmp_path: Path):
    path = tmp_path / "weld.xml"
    path.write_text(
        '<mujoco><worldbody><body name="a"><freejoint/><geom size="0.1"/></body>'
        '<body name="b"><freejoint/><geom size="0.1"/></body></worldbody>'
        '<equality><weld name="coupling" body1="a" body2="b"/></equality></mujoco>'
    )
    world = js.load_world(path)
    (closure,) = world.closures
    assert (closure.name, closure.model1, closure.model2, closure.location.file) == ("coupling", "a", "b", str(path))
    assert not any(model.loops for model in world.models)


def test_joint_springs_and_contact_pairs_load_without_a_warning():
    """The humanoid's 19 joint springs load with MuJoCo's stiffness and reference (``qpos_spring
    - qpos0``); its contact pairs (its feet with the floor, whose geoms collide with nothing
    else) and excludes are read, so ``strict=True`` loads it (the rules themselves:
    tests/simulation/test_mjcf_contact_rules.py)."""
    m = mujoco.MjModel.from_xml_path(str(DATA / "humanoid/humanoid.xml"))
    model = js.load_model(DATA / "humanoid/humanoid.xml", strict=True)
    feet = {"foot1_left", "foot1_right", "foot2_left", "foot2_right"}
    assert set(model.shape_collision) == set(model.point_collision) == feet
    assert np.all(np.asarray(model.point_terrain) == 1.0)
    assert model.collision_rules.excludes == (("waist_lower", "thigh_left"), ("waist_lower", "thigh_right"))
    springs = 0
    for k, name in enumerate(model.joint_names):
        j = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)
        address = m.jnt_qposadr[j]
        assert float(model.joint_stiffness[k]) == m.jnt_stiffness[j]
        assert float(model.joint_spring_reference[k]) == pytest.approx(m.qpos_spring[address] - m.qpos0[address], abs=1e-15)
        springs += m.jnt_stiffness[j] > 0
    assert springs == 19


def test_a_missing_mujoco_is_a_clear_error(monkeypatch):
    import builtins

    real = builtins.__import__

    def without_mujoco(name, *args, **kwargs):
        if name == "mujoco":
            raise ImportError("no mujoco")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_mujoco)
    with pytest.raises(ImportError, match=r"pip install 'jaxsim_like\[mjcf\]'"):
        js.load_model(DATA / "tendon/no_tendon.xml")


def test_sites_bodies_and_geoms_have_separate_namespaces():
    xml = (
        '<mujoco><worldbody><body name="torso"><freejoint/><geom name="torso" size="0.1"/><site name="torso" pos="0 0 0.2"/>'
        '<site name="tip"/></body></worldbody></mujoco>'
    )
    description = parse_mjcf(xml)
    assert [frame.name for frame in description.frames] == ["torso::site", "tip"]
    assert description.frames[0].L_H_F[2, 3] == 0.2 and description.link("torso").collisions[0].name == "torso"


def test_every_unsupported_element_is_listed_in_one_error(tmp_path: Path):
    path = tmp_path / "many.xml"
    path.write_text(
        '<mujoco><option density="1.2"/>\n<worldbody>\n'
        '<body name="a"><joint name="ball" type="ball" range="0 30"/><geom name="blob" size="0.1"/><site name="s1"/>\n'
        '<body name="b"><joint name="ball2" type="ball"/><geom size="0.1"/></body></body>\n'
        '<body name="c"><joint name="j" type="hinge"/><joint name="k" type="hinge"/><geom size="0.1"/><geom name="w" size="0.05" pos="0.5 0 0"/><site name="s2" pos="0 0 1"/></body>\n'
        "</worldbody>\n"
        '<tendon><fixed name="t"><joint joint="j" coef="1"/></fixed>\n<spatial name="rope"><site site="s1"/><geom geom="w" sidesite="s1"/><site site="s2"/></spatial></tendon>\n'
        '<equality><connect name="coupling" body1="a" body2="c" anchor="0 0 0"/>\n<tendon name="taut" tendon1="rope"/></equality>\n</mujoco>'
    )
    with pytest.raises(js.ModelLoadError) as error:
        js.load_model(path)
    assert (error.value.line, error.value.element) == (8, '<spatial name="rope">')
    assert error.value.reason == (
        "spatial tendon 'rope' wraps around geom 'w' with the side site 's1': side sites are not supported yet; tendon equality "
        "'taut' on a spatial tendon is not supported yet (line 10, <tendon name=\"taut\">) [2 unsupported elements]"
    )


def test_several_trees_load_as_a_world_and_load_model_names_the_tree_it_took():
    path = DATA / "convex.xml"
    with pytest.warns(js.ModelLoadWarning, match=r"convex\.xml:\d+: <body name=\"tetrahedron\">: the file has 4 trees "
                      r"\('tetrahedron', 'dodecahedron', 'box', 'pyramid'\): the model is tree 'tetrahedron'"):
        model = js.load_model(path)
    assert model.floating_base and model.link_names == ("tetrahedron",)
    world = js.load_world(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    assert [model.name for model in world.models] == ["tetrahedron", "dodecahedron", "box", "pyramid"]
    assert world.physics.step_size == m.opt.timestep and world.physics.integrator == "semi_implicit_euler"
    np.testing.assert_array_equal(world.gravity, m.opt.gravity)
    for model in world.models:
        b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, model.name)
        np.testing.assert_allclose(model.M_H_root[:3, 3], m.body_pos[b], rtol=0, atol=1e-15)


def test_a_robot_and_a_free_object_simulate_as_a_world():
    xml = (
        '<mujoco model="scene"><option timestep="0.005" gravity="0 0 -9" integrator="RK4"/><worldbody>'
        '<body name="arm"><joint name="shoulder" type="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/></body>'
        '<body name="ball" pos="1 0 1"><freejoint/><geom size="0.1"/></body></worldbody></mujoco>'
    )
    world = js.load_world(xml, strict=True)
    assert [(m.name, m.fixed_to_world) for m in world.models] == [("ball", False), ("scene", True)]
    assert (world.physics.step_size, world.physics.integrator) == (0.005, "rk4") and world.gravity[2] == -9.0
    ball = D.build_model(world.models[0])
    state = js.State.build(ball, base_position=world.models[0].M_H_root[:3, 3])
    base_acceleration, _ = D.forward_dynamics(ball, state, gravity=jnp.asarray(world.gravity))
    np.testing.assert_allclose(np.asarray(base_acceleration)[:3], [0.0, 0.0, -9.0], atol=1e-12)


def test_a_disabled_gravity_is_zero():
    world = js.load_world('<mujoco><option gravity="0 0 -3"><flag gravity="disable"/></option><worldbody><body><freejoint/><geom size="1"/></body></worldbody></mujoco>')
    np.testing.assert_array_equal(world.gravity, np.zeros(3))


@pytest.mark.parametrize("flag", ["contact", "constraint"])
def test_disabled_contacts_leave_every_geom_out(flag: str):
    """``<flag contact="disable"/>`` or ``constraint="disable"`` (dm_control's fish): no geom is
    a collision shape, as no geom touches anything in MuJoCo."""
    xml = f'<mujoco><option><flag {flag}="disable"/></option><worldbody><body><freejoint/><geom size="0.1"/></body></worldbody></mujoco>'
    assert js.load_model(xml).shape_kind == () and len(js.load_model(xml.replace(f'{flag}="disable"', f'{flag}="enable"')).shape_kind) == 1


def test_disabled_constraints_with_limits_warn_that_they_are_enforced():
    xml = '<mujoco>\n<option><flag constraint="disable"/></option><worldbody><body><joint range="-1 1"/><geom size="0.1"/></body></worldbody></mujoco>'
    with pytest.warns(js.ModelLoadWarning, match=r"<string>:2: <option>: constraints are disabled, but the 1 joint and tendon limits and equalities are enforced here"):
        js.load_model(xml)


def test_an_implicit_integrator_is_read_as_the_nearest_with_a_note():
    xml = '<mujoco>\n<option integrator="implicitfast"/><worldbody><body><freejoint/><geom size="0.1"/></body></worldbody></mujoco>'
    with pytest.warns(js.ModelLoadWarning, match=r"<string>:2: <option>: MuJoCo's integrator 'implicitfast' is read as the nearest here, 'implicit_euler'"):
        world = js.load_world(xml)
    assert world.physics.integrator == "implicit_euler"
    with pytest.raises(js.ModelLoadError, match="implicitfast"):
        js.load_world(xml, strict=True)


def test_what_mujoco_would_simulate_and_the_model_leaves_out_warns_located():
    xml = (
        '<mujoco>\n<option density="1.2" viscosity="0.002"/>\n<worldbody><body name="a"><joint name="float" type="free" damping="0.1"/>'
        '<geom name="g" size="0.1"/></body><body name="b" pos="1 0 0"><joint type="hinge"/><geom name="h" size="0.1"/></body></worldbody>\n'
        '<contact><exclude body1="a" body2="b"/></contact></mujoco>'
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        js.load_world(xml)
    found = [(w.message.line, w.message.element, w.message.reason) for w in caught if issubclass(w.category, js.ModelLoadWarning)]
    assert found == [
        (3, '<joint name="float">', "the damping and friction loss of free joint 'float' are not represented: ignored"),
        (2, "<option>", "MuJoCo's integrator 'euler' is read as the nearest here, 'semi_implicit_euler' (which forces each takes implicitly differs)"),
    ]
