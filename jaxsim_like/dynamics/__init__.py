"""Pure rigid-body dynamics: functions of ``(model, state, ...)`` that jit, vmap and differentiate."""

from .aba import forward_dynamics
from .centroidal import (
    centroidal_momentum,
    centroidal_momentum_matrix,
    com_bias_acceleration,
    com_jacobian,
    com_position,
    com_velocity,
    kinetic_energy,
    mechanical_energy,
    potential_energy,
)
from .crba import mass_matrix
from .jacobians import (
    frame_bias_acceleration,
    frame_jacobian,
    jacobian,
    link_accelerations,
    link_bias_accelerations,
    link_jacobians,
    link_velocities,
)
from .kinematics import forward_kinematics, frame_poses, link_poses, with_velocity_representation
from .model import JointKind, Model, build_model, reduce
from .rnea import bias_forces, gravity_forces, inverse_dynamics
from .state import State

__all__ = [
    "JointKind",
    "Model",
    "State",
    "bias_forces",
    "build_model",
    "centroidal_momentum",
    "centroidal_momentum_matrix",
    "com_bias_acceleration",
    "com_jacobian",
    "com_position",
    "com_velocity",
    "forward_dynamics",
    "forward_kinematics",
    "frame_bias_acceleration",
    "frame_jacobian",
    "frame_poses",
    "gravity_forces",
    "inverse_dynamics",
    "jacobian",
    "kinetic_energy",
    "link_accelerations",
    "link_bias_accelerations",
    "link_jacobians",
    "link_poses",
    "link_velocities",
    "mass_matrix",
    "mechanical_energy",
    "potential_energy",
    "reduce",
    "with_velocity_representation",
]
