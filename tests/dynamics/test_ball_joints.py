"""Ball joints in the dynamics core, on two MJCF models (a fixed chain: ball, hinge, ball with an
anchor away from the body origin and armature; a free body with a ball child and a hinge
grandchild): the link poses, mass matrix, bias forces and forward dynamics equal MuJoCo's, the
mass matrix, bias forces, forward and inverse dynamics equal Pinocchio's (its MJCF reader makes
each ball a ``JointModelSpherical``) at 1e-9 at random states; forward dynamics inverts inverse
dynamics; link Jacobians equal central differences of the kinematics on the manifold; the
configuration helpers (integration, difference, rotation vectors) invert each other."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pinocchio as pin
import pytest

import jaxsim_like as js
from jaxsim_like import dynamics as D
from jaxsim_like.dynamics import configuration, spatial

from .conftest import assert_close

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")
BALL, FREE = int(mujoco.mjtJoint.mjJNT_BALL), int(mujoco.mjtJoint.mjJNT_FREE)

CHAIN = """<mujoco model="ball_chain"><worldbody>
  <body name="a" pos="0 0 1">
    <joint name="j1" type="ball" pos="0 0 0.1"/>
    <geom type="capsule" fromto="0 0 0 0.3 0.1 -0.4" size="0.05" mass="1.3"/>
    <body name="b" pos="0.3 0.1 -0.4" quat="0.9 0.1 0.3 0.2">
      <joint name="h" type="hinge" axis="0.3 1 0.2" pos="0.01 0 0"/>
      <geom type="box" size="0.1 0.05 0.2" pos="0 0.1 -0.2" mass="0.7"/>
      <body name="c" pos="0 0 -0.4">
        <joint name="j2" type="ball" pos="0.02 0.03 0.05" armature="0.01"/>
        <geom type="ellipsoid" size="0.1 0.2 0.15" pos="0.1 0 -0.1" mass="0.5"/>
      </body>
    </body>
  </body></worldbody></mujoco>"""

FLOATING = """<mujoco model="ball_floating"><worldbody>
  <body name="torso">
    <freejoint name="root"/>
    <geom type="box" size="0.2 0.1 0.05" mass="2"/>
    <body name="arm" pos="0.2 0 0" quat="0.8 0 0.6 0">
      <joint name="shoulder" type="ball" pos="0.01 0.02 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04" mass="0.6"/>
      <body name="hand" pos="0.3 0 0">
        <joint name="wrist" type="hinge" axis="0 0.6 0.8"/>
        <geom type="sphere" size="0.05" pos="0.05 0 0" mass="0.2"/>
      </body>
    </body>
  </body></worldbody></mujoco>"""

SAMPLES = 2
LINKS = {"ball_chain": ("a", "b", "c"), "ball_floating": ("torso", "arm", "hand")}


@jax.jit
def evaluate(model: js.Model, state: js.State, nu_dot: jax.Array, tau: jax.Array) -> dict:
    base, joints = (nu_dot[:6], nu_dot[6:]) if model.floating_base else (None, nu_dot)
    wrench, torques = D.inverse_dynamics(model, state, base_acceleration=base, joint_accelerations=joints)
    base_acc, joint_acc = D.forward_dynamics(model, state, joint_torques=tau[6:] if model.floating_base else tau,
                                             link_wrenches=None)
    stack = (lambda b, j: jnp.concatenate([b, j])) if model.floating_base else (lambda b, j: j)
    # Inverse dynamics of the forward dynamics' accelerations gives the torques back.
    _, round_trip = D.inverse_dynamics(model, state, base_acceleration=base_acc, joint_accelerations=joint_acc)
    return {
        "mass_matrix": D.mass_matrix(model, state),
        "bias": D.bias_forces(model, state),
        "rnea": stack(wrench, torques),
        "aba": stack(base_acc, joint_acc),
        "round_trip": round_trip,
        "poses": D.forward_kinematics(model, state),
        "jacobians": D.link_jacobians(model, state, velocity_representation="mixed"),
    }


@jax.jit
def poses_at(model: js.Model, state: js.State, base_twists: jax.Array, joint_velocities: jax.Array) -> jax.Array:
    """``W_H_L (k, N, 4, 4)`` after moving ``state`` for unit time at each mixed base twist ``(k, 6)``
    (``[p_dot; W_omega]``) and joint velocities ``(k, n)``, on the manifold."""

    def one(twist, velocities):
        moved = state.replace(
            base_position=state.base_position + twist[:3],
            base_quaternion=spatial.integrate_quaternion(state.base_quaternion, twist[3:], 1.0),
            joint_positions=configuration.integrate_positions(model, state.joint_positions, velocities, 1.0),
        )
        return D.forward_kinematics(model, moved)

    return jax.vmap(one)(base_twists, joint_velocities)


class BallCase:
    """A model, MuJoCo's and Pinocchio's, the random samples and our results at them."""

    def __init__(self, xml: str, tmp_path_factory):
        self.model = js.load_model(xml)
        self.m = mujoco.MjModel.from_xml_string(xml)
        self.d = mujoco.MjData(self.m)
        path = tmp_path_factory.mktemp("mjcf") / "model.xml"
        path.write_text(xml)
        self.pin = pin.buildModelFromMJCF(str(path))
        self.pin_data = self.pin.createData()
        rng = np.random.default_rng(7)
        self.samples = []
        for _ in range(SAMPLES):
            qpos = rng.normal(size=self.m.nq)
            for j in range(self.m.njnt):
                if int(self.m.jnt_type[j]) in (BALL, FREE):
                    start = self.m.jnt_qposadr[j] + (3 if self.m.jnt_type[j] == FREE else 0)
                    qpos[start : start + 4] /= np.linalg.norm(qpos[start : start + 4])
            qvel, qacc, tau = rng.normal(size=(3, self.m.nv))
            self.samples.append((qpos, qvel, qacc, tau))

    @property
    def floating(self) -> bool:
        return self.model.floating_base

    def state(self, qpos: np.ndarray, qvel: np.ndarray) -> js.State:
        """Our state at MuJoCo's ``qpos``, ``qvel`` with the base velocity in the body representation
        (MuJoCo's free joint: ``[W_p_dot; B_omega]``; Pinocchio's: ``[B_v; B_omega]``)."""
        if not self.floating:
            return js.State.build(self.model, joint_positions=qpos, joint_velocities=qvel)
        R = spatial.quaternion_to_rotation(jnp.asarray(qpos[3:7]))
        base_velocity = np.concatenate([np.asarray(R).T @ qvel[:3], qvel[3:6]])
        return js.State.build(
            self.model, base_position=qpos[:3], base_quaternion=qpos[3:7], base_velocity=base_velocity,
            joint_positions=qpos[7:], joint_velocities=qvel[6:], velocity_representation="body",
        )

    def velocity_map(self, qpos: np.ndarray) -> np.ndarray:
        """``P (nv, nv)``: MuJoCo's ``qvel = P nu`` for our body-representation ``nu``."""
        P = np.eye(self.m.nv)
        if self.floating:
            P[:3, :3] = np.asarray(spatial.quaternion_to_rotation(jnp.asarray(qpos[3:7])))
        return P

    def pin_q(self, qpos: np.ndarray) -> np.ndarray:
        """Pinocchio's ``q``: MuJoCo's with every quaternion xyzw."""
        q = qpos.copy()
        for j in range(self.m.njnt):
            if int(self.m.jnt_type[j]) in (BALL, FREE):
                start = self.m.jnt_qposadr[j] + (3 if self.m.jnt_type[j] == FREE else 0)
                q[start : start + 4] = np.r_[qpos[start + 1 : start + 4], qpos[start]]
        return q


@pytest.fixture(scope="module", params=["chain", "floating"])
def ball_case(request, tmp_path_factory):
    return BallCase(CHAIN if request.param == "chain" else FLOATING, tmp_path_factory)


@pytest.fixture(scope="module")
def results(ball_case):
    out = []
    for qpos, qvel, qacc, tau in ball_case.samples:
        out.append(jax.tree.map(np.asarray, evaluate(ball_case.model, ball_case.state(qpos, qvel), jnp.asarray(qacc), jnp.asarray(tau))))
    return out


def test_the_layout_of_positions_and_velocities(ball_case):
    model = ball_case.model
    assert model.joint_position_size == ball_case.m.nq - (7 if ball_case.floating else 0)
    assert model.generalized_velocity_size == ball_case.m.nv
    names = [n for n in model.link_names if "::" not in n and n != "world"]
    assert names == list(LINKS[model.name])  # the two links per ball are named after it
    assert model.ball_joint_names == (("j1", "j2") if model.name == "ball_chain" else ("shoulder",))


def test_dynamics_agree_with_mujoco(ball_case, results):
    m, d = ball_case.m, ball_case.d
    for (qpos, qvel, qacc, tau), ours in zip(ball_case.samples, results):
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qpos, qvel, 0.0
        d.qfrc_applied[6 if ball_case.floating else 0 :] = tau[6 if ball_case.floating else 0 :]
        mujoco.mj_forward(m, d)
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        P = ball_case.velocity_map(qpos)
        nu = np.linalg.solve(P, qvel)
        # qvel = P nu, so qacc = P nu_dot + P_dot nu, with P_dot nu = [R (B_omega x B_v); 0].
        P_dot_nu = np.zeros(m.nv)
        if ball_case.floating:
            P_dot_nu[:3] = P[:3, :3] @ np.cross(nu[3:6], nu[:3])
        assert_close(ours["mass_matrix"], P.T @ M @ P, "ball: mass matrix vs MuJoCo")
        assert_close(ours["bias"], P.T @ (d.qfrc_bias + M @ P_dot_nu), "ball: bias forces vs MuJoCo")
        assert_close(ours["aba"], np.linalg.solve(P, d.qacc - P_dot_nu), "ball: forward dynamics vs MuJoCo")
        for name in LINKS[ball_case.model.name]:
            W_H = ours["poses"][ball_case.model.link_index(name)]
            assert_close(W_H[:3, 3], d.xpos[m.body(name).id], "ball: link positions vs MuJoCo", where=name)
            assert_close(W_H[:3, :3], d.xmat[m.body(name).id].reshape(3, 3), "ball: link rotations vs MuJoCo", where=name)


def test_dynamics_agree_with_pinocchio(ball_case, results):
    model, data = ball_case.pin, ball_case.pin_data
    assert sum(joint.shortname() == "JointModelSpherical" for joint in model.joints) == len(ball_case.model.ball_dofs)
    for (qpos, qvel, qacc, tau), ours in zip(ball_case.samples, results):
        q = ball_case.pin_q(qpos)
        v = np.linalg.solve(ball_case.velocity_map(qpos), qvel)  # Pinocchio's (and our body) base velocity
        M = pin.crba(model, data, q)
        assert_close(ours["mass_matrix"], np.triu(M) + np.triu(M, 1).T, "ball: mass matrix vs Pinocchio")
        assert_close(ours["bias"], pin.nle(model, data, q, v), "ball: bias forces vs Pinocchio")
        assert_close(ours["rnea"], pin.rnea(model, data, q, v, qacc), "ball: inverse dynamics vs Pinocchio")
        torques = tau.copy()
        if ball_case.floating:
            torques[:6] = 0.0
        assert_close(ours["aba"], pin.aba(model, data, q, v, torques), "ball: forward dynamics vs Pinocchio")
        assert_close(ours["round_trip"], tau[6:] if ball_case.floating else tau, "ball: inverse of forward dynamics")


def test_jacobians_equal_central_differences_on_the_manifold(ball_case, results):
    model = ball_case.model
    qpos, qvel, _, _ = ball_case.samples[0]
    state = ball_case.state(qpos, qvel)
    nv, n, eps = model.generalized_velocity_size, model.dofs, 1e-6
    directions = np.concatenate([np.eye(nv), -np.eye(nv)]) * eps
    base = directions[:, : nv - n] if ball_case.floating else np.zeros((2 * nv, 6))
    poses = np.asarray(poses_at(model, state, jnp.asarray(base), jnp.asarray(directions[:, nv - n :])))
    plus, minus = poses[:nv], poses[nv:]
    linear = (plus[..., :3, 3] - minus[..., :3, 3]) / (2 * eps)  # (nv, N, 3)
    relative = plus[..., :3, :3] @ np.swapaxes(minus[..., :3, :3], -1, -2)
    angular = np.asarray(spatial.quaternion_log(spatial.rotation_to_quaternion(jnp.asarray(relative)))) / (2 * eps)
    expected = np.concatenate([linear, angular], axis=-1).transpose(1, 2, 0)  # (N, 6, nv)
    # The bodies' links (a ball's two massless links carry part of its motion only).
    links = [model.link_index(name) for name in LINKS[model.name]]
    assert_close(results[0]["jacobians"][links], expected[links], "ball: Jacobians vs central differences", tolerance=1e-8)


@jax.jit
def helpers(model: js.Model, q: jax.Array, v: jax.Array) -> dict:
    """The configuration helpers at positions ``q (nq,)`` and velocities ``v (n,)``."""
    moved = configuration.integrate_positions(model, q, v, 0.3)
    neutral = configuration.neutral_positions(model, q.dtype)
    starts = configuration.position_layout(model).ball_positions
    flipped = q.at[starts[:, None] + np.arange(4)].multiply(-1.0)
    return {
        "difference": configuration.position_difference(model, q, moved),
        "rotation_vectors": configuration.dof_positions(model, configuration.integrate_positions(model, neutral, v, 1.0)),
        "poses": D.link_poses(model, jnp.eye(4, dtype=q.dtype), q),
        "flipped_poses": D.link_poses(model, jnp.eye(4, dtype=q.dtype), flipped),
    }


def test_configuration_helpers_invert_each_other(ball_case):
    model = ball_case.model
    qpos, qvel, _, _ = ball_case.samples[0]
    q = jnp.asarray(qpos[7:] if ball_case.floating else qpos)
    v = jnp.asarray(qvel[6:] if ball_case.floating else qvel)
    out = helpers(model, q, v)
    assert_close(out["difference"], 0.3 * v, "ball: difference of integrated positions")
    assert_close(out["rotation_vectors"], v, "ball: rotation vectors from the identity")
    # A quaternion and its opposite are the same rotation: the same poses.
    assert_close(out["flipped_poses"], out["poses"], "ball: opposite quaternions")


@jax.jit
def mass_and_bias(model: js.Model, state: js.State) -> tuple[jax.Array, jax.Array]:
    return D.mass_matrix(model, state), D.bias_forces(model, state)


def test_an_sdf_ball_joint_is_the_mjcf_one():
    """SDF ``ball``: the rotation about the joint frame's origin (in the child link), the angular
    velocity in the child's axes; the same mass matrix and bias forces as the MJCF model."""
    sdf = """<sdf version="1.9"><model name="m"><link name="base"/>
      <link name="bob"><pose>0.1 0.2 1.0 0.3 0.2 0.1</pose>
        <inertial><pose>0.2 0.1 -0.1 0 0 0</pose><mass>2</mass>
          <inertia><ixx>0.02</ixx><iyy>0.03</iyy><izz>0.04</izz></inertia></inertial></link>
      <joint name="base_weld" type="fixed"><parent>world</parent><child>base</child></joint>
      <joint name="ball" type="ball"><pose>0 0 0.5 0 0 0</pose><parent>base</parent><child>bob</child></joint>
      </model></sdf>"""
    rotation = np.asarray(spatial.rpy_to_rotation(jnp.array([0.3, 0.2, 0.1])))
    w, x, y, z = np.asarray(spatial.rotation_to_quaternion(jnp.asarray(rotation)))
    mjcf = f"""<mujoco><worldbody><body name="bob" pos="0.1 0.2 1.0" quat="{w} {x} {y} {z}">
      <joint name="ball" type="ball" pos="0 0 0.5"/>
      <inertial pos="0.2 0.1 -0.1" mass="2" diaginertia="0.02 0.03 0.04"/></body></worldbody></mujoco>"""
    ours, reference = js.load_model(sdf), js.load_model(mjcf)
    assert ours.ball_joint_names == ("ball",) and ours.joint_names == ("ball:x", "ball:y", "ball:z")
    quaternion = np.array([0.8, 0.2, -0.4, 0.3]) / np.linalg.norm([0.8, 0.2, -0.4, 0.3])
    values = []
    for model in (ours, reference):
        values.append(mass_and_bias(model, js.State.build(model, joint_positions=quaternion, joint_velocities=[0.3, -1.2, 0.7])))
    assert_close(values[0][0], values[1][0], "ball: SDF mass matrix vs MJCF")
    assert_close(values[0][1], values[1][1], "ball: SDF bias forces vs MJCF")
