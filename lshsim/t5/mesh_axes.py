"""The mesh's axis names and the logical-axis rules: the one table from parameter axes to mesh axes.

Below the model: :mod:`lshsim.t5.sharded_lookup` (inside the model) reads the axis names,
:mod:`lshsim.t5.sharding` (above the model: meshes, placements, state shardings) the rules too.
"""

from __future__ import annotations

__all__ = ["DATA_AXIS", "MESH_AXES", "MODEL_AXIS", "RULES"]

#: Name of the mesh axis that splits the batch.
DATA_AXIS = "data"
#: Name of the mesh axis that splits parameters.
MODEL_AXIS = "model"
#: The mesh's axes, in order.
MESH_AXES = (DATA_AXIS, MODEL_AXIS)

#: Logical axis name -> mesh axis (``None``: never split). The one rule table.
RULES: tuple[tuple[str, str | None], ...] = (
    ("batch", DATA_AXIS),
    ("vocab", MODEL_AXIS),
    ("mlp", MODEL_AXIS),
    ("heads", MODEL_AXIS),
    ("buckets", MODEL_AXIS),
    ("embed", None),
    ("kv", None),
    ("rank", None),
    ("keys", None),
    ("layers", None),
    ("length", None),
)
