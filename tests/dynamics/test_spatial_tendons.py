"""MJCF spatial tendons through sites and pulleys, around spheres and cylinders (issues 30 and
31): their lengths and rows ``dL/dnu`` equal MuJoCo's ``ten_length``, ``ten_J`` and
``ten_velocity`` at random states (1e-9) on a fixed-base chain (sites on the world, on a body
lumped into its parent, named like a body, behind a pulley; beside a fixed tendon), on a free
body and on MJX's wrapping chains (side sites are errors naming them:
tests/dynamics/test_mjcf.py); ``reduce`` keeps a spatial tendon on the sites of the bodies it
lumps."""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics import kinematics
from jaxsim_like.dynamics.tendon_kinematics import tendon_kinematics

from .conftest import random_mixed_state
from .test_mjcf import DATA, MuJoCo

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

CHAIN = """<mujoco model="chain"><worldbody>
  <site name="anchor" pos="0.1 0.2 1.5"/>
  <body name="a" pos="0 0 1"><joint name="j1" type="hinge" axis="0 1 0" ref="0.2"/>
    <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.03"/><site name="s1" pos="0.05 0 -0.2"/>
    <body name="welded" pos="0 0.1 -0.4"><geom type="sphere" size="0.04"/><site name="s2" pos="0.02 0.03 0"/></body>
    <body name="b" pos="0 0 -0.4"><joint name="j2" type="hinge" axis="1 0 0"/><joint name="j3" type="slide" axis="0 0 1"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03"/><site name="s3" pos="0 0.05 -0.3"/><site name="b" pos="0.03 0 -0.1"/>
    </body>
  </body></worldbody>
  <tendon>
    <spatial name="rope" limited="true" range="0 2" stiffness="30" damping="0.5">
      <site site="anchor"/><site site="s1"/><site site="s2"/><pulley divisor="2"/><site site="s2"/><site site="s3"/>
    </spatial>
    <spatial name="short"><site site="s1"/><site site="b"/></spatial>
    <fixed name="fixed"><joint joint="j1" coef="0.5"/><joint joint="j2" coef="-1"/></fixed>
  </tendon></mujoco>"""
FREE = """<mujoco model="free"><worldbody>
  <body name="torso" pos="0 0 1"><freejoint/><geom type="box" size="0.2 0.1 0.05"/><site name="front" pos="0.2 0.05 0.02"/>
    <body name="arm" pos="0.2 0 0"><joint name="elbow" type="hinge" axis="0 0 1"/><geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
      <site name="tip" pos="0.3 0.02 0"/></body>
    <site name="back" pos="-0.2 0.05 0"/></body></worldbody>
  <tendon><spatial name="cable"><site site="back"/><site site="front"/><site site="tip"/></spatial></tendon></mujoco>"""


@jax.jit
def evaluate(model: js.Model, state: js.State):
    """The tendons' lengths, joint rows and rates at ``state``."""
    kin = kinematics.kinematics(model, state)
    tendons = tendon_kinematics(model, kin, state.joint_positions)
    return tendons.length, tendons.joints, tendons.joints @ state.joint_velocities


def dense_jacobian(m, d) -> np.ndarray:
    """MuJoCo's ``ten_J (t, nv)`` (stored sparse)."""
    J = np.zeros((m.ntendon, m.nv))
    mujoco.mju_sparse2dense(J, d.ten_J, m.ten_J_rownnz, m.ten_J_rowadr, m.ten_J_colind)
    return J


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("tendons")
    paths = {"chain": folder / "chain.xml", "free": folder / "free.xml"}
    paths["chain"].write_text(CHAIN)
    paths["free"].write_text(FREE)
    return paths


def test_the_chain_reads_its_paths(files):
    model = js.load_model(files["chain"])
    tendons = model.tendons
    assert tendons.names == ("rope", "short", "fixed") and tendons.spatial == (0, 1) and tendons.limited == (0,)
    assert tendons.paths.frame_a == ("anchor", "s1", "s2", "s1") and tendons.paths.frame_b == ("s1", "s2", "s3", "b::site")
    np.testing.assert_array_equal(tendons.paths.scale, [1.0, 1.0, 0.5, 1.0])
    np.testing.assert_array_equal(tendons.coefficients[:2], 0.0)


@pytest.mark.parametrize("name", ["chain", "free"])
def test_lengths_and_rows_equal_mujocos(files, name: str):
    model = js.load_model(files[name])
    reference = MuJoCo(model, files[name])
    m, d = reference.m, reference.d
    rng = np.random.default_rng(3)
    for _ in range(3):
        state, (position, quaternion, q, nu) = random_mixed_state(model, rng)
        P = reference.set(position, quaternion, q, nu)
        length, joints, rate = (np.asarray(x) for x in evaluate(model, state))
        np.testing.assert_allclose(length, d.ten_length, rtol=0, atol=1e-9)
        np.testing.assert_allclose(rate, d.ten_velocity, rtol=0, atol=1e-9)
        J = dense_jacobian(m, d) @ P  # on our generalised velocity
        np.testing.assert_allclose(joints, J[:, -model.dofs :], rtol=0, atol=1e-9)
        np.testing.assert_allclose(J[:, : J.shape[1] - model.dofs], 0.0, rtol=0, atol=1e-12)  # a free base: no column
        assert np.abs(d.ten_velocity).min() > 1e-3  # every tendon moves


def test_wrapped_lengths_and_rows_equal_mujocos():
    """MJX's chain of four hinges whose tendons wrap around spheres and a cylinder, behind
    pulleys: at random states (most with a wrap engaged) the lengths and rows as MuJoCo's."""
    path = DATA / "tendon" / "pulley_site_wrap.xml"
    model = js.load_model(path)
    assert set(model.tendons.paths.wrap_kind) == {"", "sphere", "cylinder"}
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    rng = np.random.default_rng(5)
    engaged = 0
    for _ in range(8):
        q = rng.uniform(-1.5, 1.5, model.dofs)
        d.qpos[:] = m.qpos0 + q
        mujoco.mj_forward(m, d)
        state = js.State.build(model, joint_positions=q)
        length, joints, _ = (np.asarray(x) for x in evaluate(model, state))
        np.testing.assert_allclose(length, d.ten_length, rtol=0, atol=1e-9)
        np.testing.assert_allclose(joints, dense_jacobian(m, d), rtol=0, atol=1e-9)
        engaged += int(np.any(d.wrap_obj.reshape(-1)[: d.ten_wrapnum.sum()] >= 0))  # MuJoCo's path through a geom's tangent points
    assert engaged >= 4


def test_reduce_keeps_a_spatial_tendon_on_lumped_sites(files):
    """Locking ``j2`` and ``j3`` lumps body ``b`` (and its sites) into ``a``: the lengths at the
    locked positions are unchanged."""
    model = js.load_model(files["chain"])
    locked = {"j2": 0.3, "j3": -0.1}
    reduced = js.dynamics.reduce(model, ["j1"], locked)
    assert reduced.tendons.names == ("rope", "short", "fixed") and reduced.tendons.paths.frame_b[-1] == "b::site"
    q = np.array([0.4, 0.3, -0.1])
    full = evaluate(model, js.State.build(model, joint_positions=q))[0]
    lumped = evaluate(reduced, js.State.build(reduced, joint_positions=q[:1]))[0]
    np.testing.assert_allclose(lumped, full, rtol=0, atol=1e-12)
