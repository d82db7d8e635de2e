"""The BIM-Edit verifier: IFC diff into edit sets, then geometry, semantic and topology scores.

One module per step (paper App. E; spec section 3):

* :mod:`.model` — an IFC file as a typed property graph (nodes, relation edges, signatures);
* :mod:`.diff` — added / removed / modified nodes and the per-operation edit sets;
* :mod:`.shapes` — on-demand world-space tessellation (metres) and oriented boxes;
* :mod:`.geometry` — median-Chamfer geometry score and the extra diagnostics;
* :mod:`.semantics` — Hungarian matching on OBB-IoU, class and property agreement;
* :mod:`.topology` — node and relation edit F1 with the no-change special case;
* :mod:`.validity` — schema checks on edited entities and unit remarks.

:func:`buildbench.suites.bimedit.check.edit.score_edit` puts them together.
"""

from buildbench.suites.bimedit.check.diff import (
    EditSets,
    NodeChanges,
    align_nodes,
    build_edit_sets,
    node_changes,
)
from buildbench.suites.bimedit.check.geometry import GeometryResult, geometry_score, sample_edit_set
from buildbench.suites.bimedit.check.model import RELATION_TYPES, IfcModel, ModelError, load_model
from buildbench.suites.bimedit.check.semantics import SemanticResult, semantic_score
from buildbench.suites.bimedit.check.topology import TopologyResult, topology_score

__all__ = [
    "RELATION_TYPES",
    "EditSets",
    "GeometryResult",
    "IfcModel",
    "ModelError",
    "NodeChanges",
    "SemanticResult",
    "TopologyResult",
    "align_nodes",
    "build_edit_sets",
    "geometry_score",
    "load_model",
    "node_changes",
    "sample_edit_set",
    "semantic_score",
    "topology_score",
]
