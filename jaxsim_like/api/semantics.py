"""The SRDF of a model, on its handle: groups, named group states, end effectors, collision pairs.

Follows srdfdom's ``srdf::Model`` (see :mod:`jaxsim_like.parsers.srdf`). Applying a group state
resets the joints of the group (at the next run, as every reset) and, for joints controlled in
position, moves their targets too so that the controllers hold the new configuration.
"""

from __future__ import annotations

import os

from ..parsers import parse_srdf
from ..parsers.srdf import SRDF, EndEffector
from . import errors
from .calls import scenario_methods
from .types import JointControlMode


@scenario_methods
class Semantics:
    """SRDF methods of :class:`~jaxsim_like.api.model.Model` (mixed in)."""

    def load_srdf(self, srdf: str | os.PathLike) -> bool:
        """Attach an SRDF (path or XML string), checked against the model's links and joints."""
        entry = self._entry
        entry.srdf = parse_srdf(srdf, entry.description)  # the world's collision table follows it
        return True

    def srdf(self) -> SRDF | None:
        """The SRDF of the model, or None."""
        return self._entry.srdf

    def _semantics(self) -> SRDF:
        semantics = self._entry.srdf
        if semantics is None:
            raise errors.ModelError("the model has no SRDF (insert it with srdf=... or call load_srdf)", self._model_name)
        return semantics

    def group_names(self) -> tuple[str, ...]:
        """The names of the SRDF groups."""
        return tuple(group.name for group in self._semantics().groups)

    def _group(self, group: str) -> None:
        if group not in self.group_names():
            raise errors.ModelError(f"no SRDF group named '{group}'; the groups are {self.group_names()}", self._model_name)

    def group_joints(self, group: str) -> tuple[str, ...]:
        """The moving joints of ``group`` (subgroups, chains and links expanded), in tree order."""
        self._group(group)
        joints = self._semantics().group_joints(group, self._entry.description)
        return tuple(name for name in joints if name in self._entry.model.joint_names)

    def group_links(self, group: str) -> tuple[str, ...]:
        """The links of ``group`` in tree order, as named in the description."""
        self._group(group)
        return tuple(self._semantics().group_links(group, self._entry.description))

    def group_state_names(self, group: str) -> tuple[str, ...]:
        """The names of the states defined for ``group``."""
        self._group(group)
        return tuple(state.name for state in self._semantics().group_states if state.group == group)

    def group_state(self, group: str, state: str) -> dict[str, float]:
        """The joint positions of state ``state`` of ``group`` (moving joints only)."""
        self._group(group)
        try:
            values = self._semantics().group_state(group, state).joint_values
        except KeyError:
            raise errors.ModelError(
                f"group '{group}' has no state '{state}'; its states are {self.group_state_names(group)}", self._model_name
            ) from None
        return {name: float(value[0]) for name, value in values.items() if name in self._entry.model.joint_names and value}

    def apply_group_state(self, group: str, state: str) -> bool:
        """Reset the joints of a group state at the next run; joints in position modes get it as target."""
        positions = self.group_state(group, state)
        names = list(positions)
        self.reset_joint_positions([positions[name] for name in names], names)
        for name in names:
            joint = self.get_joint(name)
            if joint.control_mode() in (JointControlMode.position, JointControlMode.position_interpolated):
                joint.set_position_target(positions[name])
        return True

    def end_effectors(self) -> tuple[EndEffector, ...]:
        """The SRDF end effectors (name, parent link, component group, parent group)."""
        return tuple(self._semantics().end_effectors)

    def disabled_collision_pairs(self) -> tuple[tuple[str, str], ...]:
        """The link pairs whose collisions the SRDF disables."""
        return tuple((pair.link1, pair.link2) for pair in self._semantics().disabled_collision_pairs)

    def collision_disabled(self, link_a: str, link_b: str) -> bool:
        """Whether the SRDF disables collisions between two links (pairs, then per-link defaults)."""
        return self._semantics().collision_disabled(link_a, link_b)
