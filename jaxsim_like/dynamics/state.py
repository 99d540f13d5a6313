"""The state pytree: base pose and velocity, joint positions and velocities."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..pytree import pytree_dataclass
from . import configuration, spatial
from .model import Model

VELOCITY_REPRESENTATIONS = ("body", "inertial", "mixed")


def check_representation(representation: str) -> str:
    """``representation`` if it is one of body, inertial, mixed; ValueError otherwise."""
    if representation not in VELOCITY_REPRESENTATIONS:
        raise ValueError(f"velocity_representation must be one of {VELOCITY_REPRESENTATIONS}, not {representation!r}")
    return representation


@pytree_dataclass(static=["velocity_representation"])
class State:
    """Base position ``W_o_B (3,)`` [m], base quaternion ``W_Q_B (4,)`` wxyz, base velocity ``(6,)``
    ``[linear; angular]`` in ``velocity_representation``, joint positions ``(nq,)`` and velocities
    ``(n,)`` (``nq = n`` without ball joints; see :mod:`.configuration`).

    ``body``: ``B_v_WB``; ``inertial``: ``W_v_WB``; ``mixed``: ``[d/dt W_o_B; W_omega_WB]``.
    A fixed-base model keeps the base pose (where it is welded) and a zero base velocity.
    ``contact_deformation (P, 3)`` [m] is the tangential deformation of the soft contact at
    each collidable point (world axes), the memory that lets a contact stick;
    ``pair_deformation (K, 3)`` [m], that of the candidate slots of the contacts between the
    model's own links, which the step of a model with self-collisions keeps
    (:func:`~jaxsim_like.simulation.step.step`; None: no memory, as :meth:`build` makes).
    """

    base_position: jax.Array
    base_quaternion: jax.Array
    base_velocity: jax.Array
    joint_positions: jax.Array
    joint_velocities: jax.Array
    contact_deformation: jax.Array
    pair_deformation: jax.Array | None = None
    velocity_representation: str = "mixed"

    @staticmethod
    def build(
        model: Model,
        *,
        base_position: Any = None,
        base_quaternion: Any = None,
        base_velocity: Any = None,
        joint_positions: Any = None,
        joint_velocities: Any = None,
        contact_deformation: Any = None,
        velocity_representation: str = "mixed",
    ) -> "State":
        """A state of ``model``; missing values are zero (ball joints: the identity quaternion)
        and the base pose defaults to the file's.

        Raises ValueError naming the argument whose shape is wrong.
        """
        check_representation(velocity_representation)
        dtype = model.link_mass.dtype

        def value(name: str, given: Any, default: Any, *shape: int) -> jax.Array:
            array = jnp.asarray(default if given is None else given, dtype=dtype)
            if array.shape != shape:
                raise ValueError(f"{name} must have shape {shape} for model {model.name!r}, got {tuple(array.shape)}")
            return array

        W_H_B = model.base_transform
        default_quaternion = spatial.rotation_to_quaternion(W_H_B[:3, :3])
        base_velocity = value("base_velocity", base_velocity, jnp.zeros(6), 6)
        if not model.floating_base and not isinstance(base_velocity, jax.core.Tracer) and np.any(np.asarray(base_velocity) != 0):
            raise ValueError(f"model {model.name!r} has a fixed base: base_velocity must be zero")
        quaternion = value("base_quaternion", base_quaternion, default_quaternion, 4)
        return State(
            base_position=value("base_position", base_position, W_H_B[:3, 3], 3),
            base_quaternion=spatial.normalize(quaternion),
            base_velocity=base_velocity,
            joint_positions=value(
                "joint_positions", joint_positions, configuration.neutral_positions(model, dtype), model.joint_position_size
            ),
            joint_velocities=value("joint_velocities", joint_velocities, np.zeros(model.dofs, dtype), model.dofs),
            contact_deformation=value(
                "contact_deformation", contact_deformation, np.zeros((len(model.point_link), 3), dtype), len(model.point_link), 3
            ),
            velocity_representation=velocity_representation,
        )

    @property
    def base_transform(self) -> jax.Array:
        """``W_H_B (4, 4)``."""
        return spatial.pose_to_transform(self.base_position, self.base_quaternion)

    def generalized_velocity(self, model: Model) -> jax.Array:
        """``nu = [base_velocity; joint_velocities]`` with a floating base, else the joint velocities."""
        if model.floating_base:
            return jnp.concatenate([self.base_velocity, self.joint_velocities])
        return self.joint_velocities

