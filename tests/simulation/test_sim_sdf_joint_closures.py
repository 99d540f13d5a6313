"""SDF joints that close a loop hold exactly their joint's rows (:mod:`jaxsim_like.dynamics.loops`):
a body free to move (three prismatic joints through massless links, then a ball joint) whose loop
is closed by a revolute, prismatic or screw joint moves as the same body on that joint in the
tree, over 1 s at dt 1 ms (semi-implicit Euler, the default closure reference), the loop held
closed (these joints' rows are linear along their motion: the step's path term is exact); closed
by a universal joint, whose axis row curves along the motion, it moves as on the tree joint
within the first-order difference of the two discretisations (half as large at half the step);
each kind's rows move at the central differences of their violations; a gradient through one
closed chain equals central differences."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics.kinematics import kinematics
from jaxsim_like.dynamics.loops import loop_rows
from jaxsim_like.dynamics.model import build_model
from jaxsim_like.parsers.errors import ModelLoadError
from jaxsim_like.parsers.sdf import parse_sdf

# The closing screws here have no limits, which warns at their joint (its own test below checks
# the warning); the other tests read these models as they are.
pytestmark = pytest.mark.filterwarnings("ignore:.*screw joint .* closes a loop:jaxsim_like.parsers.errors.ModelLoadWarning")

DT, STEPS = 0.001, 1000
MASSLESS = "<inertial><mass>0</mass><inertia><ixx>0</ixx><iyy>0</iyy><izz>0</izz></inertia></inertial>"
BODY = """<link name="body"><pose>0.1 -0.2 0.8 0.2 -0.1 0.3</pose><inertial><pose>0.12 0.05 -0.15 0 0 0</pose><mass>1.3</mass>
      <inertia><ixx>0.02</ixx><iyy>0.03</iyy><izz>0.015</izz><ixy>0.001</ixy><ixz>0.002</ixz><iyz>-0.001</iyz></inertia></inertial></link>"""
JOINT = """<joint name="{name}" type="{type}"><pose>0.03 0.02 0.01 0.4 0.3 -0.2</pose><parent>ground</parent><child>body</child>
      <axis><xyz>0.3 1 0.2</xyz></axis><axis2><xyz>{axis2}</xyz></axis2><screw_thread_pitch>0.2</screw_thread_pitch></joint>"""
FREE = "".join(
    f'<link name="{link}"><pose>0.1 -0.2 0.8 0 0 0</pose>{MASSLESS}</link>'
    f'<joint name="{link}_joint" type="prismatic"><parent>{parent}</parent><child>{link}</child><axis><xyz>{xyz}</xyz></axis></joint>'
    for link, parent, xyz in (("sx", "ground", "1 0 0"), ("sy", "sx", "0 1 0"), ("sz", "sy", "0 0 1"))
)
AXIS2 = " ".join(str(value) for value in np.cross([0.3, 1.0, 0.2], [0.0, 0.0, 1.0]))  # normal to <axis>


def source(joint_type: str, closed: bool) -> str:
    """The body on a ``joint_type`` joint from the ground (welded to the world): in the tree, or
    on a ball joint at the joint's origin below three prismatic joints, closed by the joint."""
    tree = JOINT.format(name="joint", type=joint_type, axis2=AXIS2)
    if closed:
        ball = JOINT.format(name="ball", type="ball", axis2=AXIS2).replace("<parent>ground</parent>", "<parent>sz</parent>")
        tree = FREE + ball + tree
    return f"""<sdf version="1.10"><model name="m"><link name="ground"/>{BODY}
      <joint name="weld" type="fixed"><parent>world</parent><child>ground</child></joint>{tree}</model></sdf>"""


CHAIN = """<sdf version="1.10"><model name="chain">{links}
  <joint name="close" type="{type}"><pose>0.1 0.2 -0.1 0.3 0.2 0.1</pose><parent>l0</parent><child>l3</child>
    <axis><xyz>0.3 1 0.2</xyz></axis><axis2><xyz>{axis2}</xyz></axis2><screw_thread_pitch>0.3</screw_thread_pitch></joint></model></sdf>"""
CHAIN_LINKS = "".join(
    f'<link name="l{k}"><pose>{0.2 * k} {0.05 * k} {0.03 * k} 0 0 0</pose><inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.2</iyy><izz>0.3</izz></inertia></inertial></link>'
    f'<joint name="j{k}" type="revolute"><parent>{"world" if k == 0 else f"l{k - 1}"}</parent><child>l{k}</child><axis><xyz>{xyz}</xyz></axis></joint>'
    for k, xyz in enumerate(("0 0 1", "1 0 0", "0 1 0", "1 1 0.3"))
)


@pytest.mark.parametrize("joint_type", ["revolute", "prismatic", "universal", "screw"])
def test_each_kinds_rows_move_at_the_derivatives_of_their_violations(joint_type):
    """On a fixed chain of four hinges closed by the joint (the loop open), at a random state moving
    at constant joint velocities: the rows' rate and path bias equal the first and second central
    differences of their violations (step 1e-4: the differences' own error is below 1e-7)."""
    model = js.load_model(CHAIN.format(links=CHAIN_LINKS, type=joint_type, axis2=AXIS2))
    rng = np.random.default_rng(3)
    q, qd = rng.normal(scale=0.4, size=model.dofs), rng.normal(size=model.dofs)
    state = js.State.build(model)

    @jax.jit  # one program for the three times (run eagerly, each operation compiles on its own)
    def rows_at(t):
        moved = state.replace(joint_positions=jnp.asarray(q) + t * jnp.asarray(qd), joint_velocities=jnp.asarray(qd))
        return loop_rows(model, kinematics(model, moved), euler=False)

    h = 1e-4
    rows, ahead, behind = rows_at(0.0), rows_at(h).violation, rows_at(-h).violation
    assert np.abs(rows.violation).max() > 1e-2 and np.abs(rows.path_bias).max() > 1e-2
    np.testing.assert_allclose(rows.rate, (ahead - behind) / (2 * h), atol=1e-7)
    np.testing.assert_allclose(rows.path_bias, (ahead - 2 * rows.violation + behind) / h**2, atol=1e-6)


def body_poses(model: js.Model, state: js.State, dt: float | tuple[float, ...] = DT, steps: int = STEPS) -> tuple[np.ndarray, np.ndarray]:
    """The body's pose ``(T, 4, 4)`` after each of ``steps`` steps of ``dt`` and the closures'
    violations ``(T, r)``; for several ``dt``, a stack of each ``(D, T, ...)`` from one compiled
    rollout (the step size is traced)."""
    body = model.link_names.index("body")

    @jax.jit
    def run(state, params):
        _, (states, _) = js.rollout(model, state, jnp.zeros((steps, model.dofs)), params=params)
        kin = jax.vmap(lambda s: kinematics(model, s))(states)
        violations = jax.vmap(lambda s: loop_rows(model, kinematics(model, s)).violation)(states)
        return kin.G_H_L[:, body], violations

    runs = [run(state, js.SimulationParams.build(model, dt=h, integrator="semi_implicit_euler")) for h in np.atleast_1d(dt)]
    poses, violations = (np.stack([np.asarray(r[k]) for r in runs]) for k in (0, 1))
    return (poses, violations) if np.ndim(dt) else (poses[0], violations[0])


@pytest.mark.parametrize(("joint_type", "kind"), [("revolute", "hinge"), ("prismatic", "slider"), ("screw", "screw")])
def test_a_joint_closing_a_loop_moves_as_the_joint_in_the_tree(joint_type, kind, figures):
    closed = js.load_model(source(joint_type, closed=True))
    tree = js.load_model(source(joint_type, closed=False))
    assert closed.loops.kind == (kind,) and closed.dofs == 6
    poses, violations = body_poses(closed, js.State.build(closed))
    reference, _ = body_poses(tree, js.State.build(tree))
    assert np.abs(reference - reference[0]).max() > 0.1
    difference = figures(f"body closed by a {joint_type} joint vs on it, max pose difference over 1 s", float(np.abs(poses - reference).max()))
    assert difference < 1e-8
    assert figures(f"body closed by a {joint_type} joint: max violation over 1 s", float(np.abs(violations).max())) < 1e-6


def test_a_universal_joint_closing_a_loop_moves_as_the_joint_within_the_first_order_difference(figures):
    """Over 0.25 s at dt 1 ms and 0.5 ms: the origins held to rounding; the axis row's largest
    violation and the pose difference to the tree's universal joint halve with the step."""
    closed = js.load_model(source("universal", closed=True))
    tree = js.load_model(source("universal", closed=False))
    assert closed.loops.kind == ("universal",) and closed.dofs == 6
    # 500 steps of 1 and 0.5 ms from one compiled rollout per model: the first 250 of 1 ms, and all of 0.5 ms, cover 0.25 s.
    poses, violations = body_poses(closed, js.State.build(closed), (DT, DT / 2), 500)
    reference, _ = body_poses(tree, js.State.build(tree), (DT, DT / 2), 500)
    assert np.abs(violations[:, :, :3]).max() < 1e-10
    axis_rows = [float(np.abs(violations[0, :250, 3]).max()), float(np.abs(violations[1, :, 3]).max())]
    differences = [float(np.abs(poses[0, :250] - reference[0, :250]).max()), float(np.abs(poses[1] - reference[1]).max())]
    for dt, axis_row, difference in zip(("1 ms", "0.5 ms"), axis_rows, differences):
        figures(f"body closed by a universal joint at {dt}: axis row's max violation over 0.25 s", axis_row)
        figures(f"body closed by a universal joint at {dt} vs on it: max pose difference over 0.25 s", difference)
    assert axis_rows[0] < 1e-4 and differences[0] < 1e-3
    assert 1.8 < axis_rows[0] / axis_rows[1] < 2.2 and 1.8 < differences[0] / differences[1] < 2.2


def test_the_gradient_through_a_loop_closed_by_a_screw_equals_central_differences(figures):
    """The body's height after 0.1 s, closed by a screw joint, against the screw's pitch (traced),
    in forward mode: one program gives the derivative and the values the differences take (reverse
    mode through closures: the four-bar's and the soft connect's gradients, test_sim_loops.py)."""
    model = js.load_model(source("screw", closed=True))
    params = js.SimulationParams.build(model, dt=DT, integrator="semi_implicit_euler")
    body = model.link_names.index("body")
    state = js.State.build(model)

    def height(pitch):
        closed = model.replace(loops=model.loops.replace(pitch=pitch))
        final, _ = js.rollout(closed, state, jnp.zeros((100, model.dofs)), params=params)
        return kinematics(closed, final).G_H_L[body, 2, 3]

    height_and_derivative = jax.jit(lambda pitch: jax.jvp(height, (pitch,), (jnp.ones_like(pitch),)))
    pitch = model.loops.pitch
    gradient = float(height_and_derivative(pitch)[1])
    step = 1e-6
    central = float((height_and_derivative(pitch + step)[0] - height_and_derivative(pitch - step)[0]) / (2 * step))
    assert abs(central) > 1e-3
    assert figures("screw-closed chain: d height / d pitch vs central differences (relative)", abs(gradient - central) / abs(central)) < 1e-6


def test_a_closure_of_an_unknown_kind_is_refused_at_its_joint():
    description = parse_sdf(source("revolute", closed=True))
    description.loops[0].kind = "hing"
    with pytest.raises(ModelLoadError, match="loop closure 'joint': kind 'hing' is not one of") as caught:
        build_model(description)
    assert caught.value.line is not None


def test_a_screw_closure_whose_limits_allow_more_than_half_a_turn_warns_at_its_joint():
    """The turn is read from the frames' relative rotation (within half a turn either way):
    an unlimited closing screw warns at its line; one limited to (-3, 3) rad does not."""
    closing = source("screw", closed=True)
    with pytest.warns(js.ModelLoadWarning, match=r":\d+: <joint name=\"joint\">: screw joint 'joint' closes a loop: .* \(-inf, inf\) rad allow more"):
        parse_sdf(closing)
    at = closing.rindex("<axis><xyz>0.3 1 0.2</xyz>") + len("<axis><xyz>0.3 1 0.2</xyz>")
    limited = closing[:at] + "<limit><lower>-3</lower><upper>3</upper></limit>" + closing[at:]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parse_sdf(limited).loops[0].kind == "screw"
