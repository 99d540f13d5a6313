"""System identification: recover a box's mass and its friction coefficient from a recorded slide.

A 0.2 x 0.3 x 0.1 m box (tests/assets/free_box.urdf) of 1.3 kg, with Coulomb friction 0.6
against the ground, is pushed along x by a known force 8 + 6 sin(2 pi t / 0.4) N at its COM:
it alternately sticks and slides. The recorded trajectory (base position and linear velocity,
a jaxsim_like.recording.Recording) is then fitted from wrong guesses (1.0 kg, 0.4) by L-BFGS
(optax.lbfgs with a backtracking line search) on the log of both parameters, through
``model.replace(link_mass=...)`` and ``params.replace(contact=params.contact.replace(friction=...))``;
the contact stiffness and damping stay those of the nominal model.

    python examples/system_identification.py [--quick] [--plot DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax

jax.config.update("jax_enable_x64", True)

try:
    import jaxsim_like as js
except ImportError:  # a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import jaxsim_like as js
from jaxsim_like import optimization
from jaxsim_like.plots import require_matplotlib
from jaxsim_like.recording import Recording

BOX = Path(__file__).resolve().parents[1] / "tests" / "assets" / "free_box.urdf"
TRUE_MASS, TRUE_FRICTION = 1.3, 0.6
GUESS_MASS, GUESS_FRICTION = 1.0, 0.4


def settings(quick: bool) -> dict:
    """Step [s], recorded steps, integrator, maximum L-BFGS iterations."""
    if quick:
        return {"dt": 0.001, "steps": 250, "integrator": "semi_implicit_euler", "iterations": 30}
    return {"dt": 0.001, "steps": 1500, "integrator": "implicit_euler", "iterations": 60}


def run(quick: bool = False, plot: str | None = None, verbose: bool = True) -> dict:
    """Record, then fit; returns the figures reached (and writes plots to the folder ``plot``)."""
    if plot is not None:
        require_matplotlib()  # now, not after the run
    config = settings(quick)
    dt, steps = config["dt"], config["steps"]
    model = js.load_model(BOX)
    params = js.SimulationParams.build(model, dt=dt, integrator=config["integrator"])
    start = js.State.build(model, base_position=[0.0, 0.0, 0.05])
    time_s = dt * np.arange(steps)
    push = np.zeros((steps, model.number_of_links, 6))
    push[:, 0, 0] = 8.0 + 6.0 * np.sin(2 * np.pi * time_s / 0.4)
    push = jnp.asarray(push)

    def simulate(log_mass_friction, checkpoint):
        mass, friction = jnp.exp(log_mass_friction)
        box = model.replace(link_mass=jnp.full(model.number_of_links, mass))
        contact = params.replace(contact=params.contact.replace(friction=friction))
        no_joints = jnp.zeros((steps, model.dofs))
        return js.rollout(box, start, no_joints, params=contact, link_wrenches=push, link_wrenches_at_com=True, checkpoint=checkpoint)

    truth = jnp.log(jnp.array([TRUE_MASS, TRUE_FRICTION]))
    _, (states, outputs) = jax.jit(lambda x: simulate(x, False))(truth)
    recording = Recording.from_rollout(model, states, outputs, dt, push="8 + 6 sin(2 pi t / 0.4) N along x at the COM")
    measured = jnp.concatenate([jnp.asarray(recording.base_position), jnp.asarray(recording.base_velocity[:, :3])], axis=1)
    scale = jnp.std(measured, axis=0) + 1e-6

    def loss(log_mass_friction):
        _, (fitted, _) = simulate(log_mass_friction, True)
        prediction = jnp.concatenate([fitted.base_position, fitted.base_velocity[:, :3]], axis=1)
        return jnp.mean(((prediction - measured) / scale) ** 2)

    optimizer = optax.lbfgs(linesearch=optax.scale_by_backtracking_linesearch(max_backtracking_steps=20))
    guess = jnp.log(jnp.array([GUESS_MASS, GUESS_FRICTION]))
    estimates = []
    began = time.perf_counter()
    result = optimization.optimize(
        loss,
        guess,
        optimizer,
        iterations=config["iterations"],
        target_loss=1e-12,
        callback=lambda k, value, x: estimates.append(np.exp(np.asarray(x))),
    )
    seconds = time.perf_counter() - began
    mass, friction = np.exp(np.asarray(result.best_params))
    figures = {
        "slid_m": float(recording.base_position[-1, 0] - recording.base_position[0, 0]),
        "mass_kg": float(mass),
        "friction": float(friction),
        "mass_error": float(abs(mass - TRUE_MASS) / TRUE_MASS),
        "friction_error": float(abs(friction - TRUE_FRICTION) / TRUE_FRICTION),
        "initial_loss": float(result.losses[0]),
        "final_loss": result.best_loss,
        "iterations": len(result.losses),
        "seconds": seconds,
    }
    if plot:
        from jaxsim_like.plots import plot_losses, plot_recording

        folder = Path(plot)
        folder.mkdir(parents=True, exist_ok=True)
        plot_losses(result.losses, folder / "system_identification_losses.png", title="system identification: trajectory error")
        relative = np.abs(np.asarray(estimates) / np.array([TRUE_MASS, TRUE_FRICTION]) - 1).max(axis=1)
        plot_losses(relative, folder / "system_identification_errors.png", title="largest relative error of mass and friction")
        plot_recording(recording, folder / "system_identification_recording.png")
        figures["plots"] = str(folder)
    if verbose:
        for name, value in figures.items():
            print(f"{name:24s} {value:.6g}" if isinstance(value, float) else f"{name:24s} {value}")
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a shorter recording, stepped explicitly (seconds)")
    parser.add_argument("--plot", metavar="DIR", help="save the loss curve, the errors and the recording as PNGs in DIR (needs matplotlib)")
    args = parser.parse_args(argv)
    figures = run(quick=args.quick, plot=args.plot)
    return 0 if max(figures["mass_error"], figures["friction_error"]) < 0.01 else 1


if __name__ == "__main__":
    sys.exit(main())
