// collision/box_features.hpp — one contact point of a box pair (box–box or box–plane)
// evaluated again from its feature id alone, for the backward pass.
//
// The narrow phase (narrow_phase.cpp: box_box, box_plane) reaches each point through
// discrete decisions: the separating-axis test over 15 axes, the reference and incident
// faces, Sutherland–Hodgman clipping, the manifold reduction. The feature id it records
// names the result of all of them (narrow_phase.cpp documents the numbering), so the point
// is a smooth function of the two poses and sizes that can be evaluated directly: an
// incident vertex, an incident edge crossing a side plane of the reference face, a
// reference corner's line crossing the incident face, two edges' closest points, or a
// vertex's closest point on the other box. On Dual<18> this gives the derivatives the
// whole dual narrow phase would give at a fraction of its cost (the separating-axis test
// on dual numbers was half of a box tower's backward pass).
//
// Same conventions as collide (narrow_phase.hpp): either argument order, the normal pointing
// from b towards a. Returns false for a pair or feature it does not cover (pairs without a
// box, box–mesh, the clipping points of parallel side planes that only rounding makes, and
// edge–edge points clamped to an edge's end); the caller then runs the whole narrow phase. Defined for T = double and T = Dual<18>.
#pragma once

#include "collision/narrow_phase.hpp"

namespace diffphys::collision {

// A box_box feature id decoded (box_features.cpp gives the numbering). A face of a box is
// (axis, side ±1); a face's u and v axes are (axis + 1) mod 3 and (axis + 2) mod 3.
struct BoxBoxFeature {
  enum class Kind { FacePoint, EdgeEdge, DeepestVertex, VertexOfA, VertexOfB, Unknown };
  enum class FacePoint { IncidentVertex, EdgeCrossing, ReferenceCorner, ParallelPlanes };
  Kind kind = Kind::Unknown;
  // FacePoint, DeepestVertex: the reference face, of box b if reference_is_b (else of a).
  bool reference_is_b = false;
  int reference_axis = 0;
  double reference_side = 1.0;
  // FacePoint: the other box's incident face and which of its points.
  int incident_axis = 0;
  double incident_side = 1.0;
  FacePoint point = FacePoint::IncidentVertex;
  // IncidentVertex: 0..3, signs along the incident face's u and v given by
  // incident_vertex_signs; DeepestVertex, VertexOfA, VertexOfB: a box vertex 0..7 (box_corner).
  int vertex = 0;
  // EdgeCrossing: the incident face's edge from vertex `edge` to vertex edge + 1 (mod 4),
  // crossing side plane `plane` of the reference face: 0..3 = its +u, −u, +v, −v sides.
  int edge = 0, plane = 0;
  // ReferenceCorner: the sides of the reference face's corner along its u and v axes.
  double corner_u = 1.0, corner_v = 1.0;
  int edge_a = 0, edge_b = 0;  // EdgeEdge: box_edge ids of a's and b's edges
};
BoxBoxFeature decode_box_box_feature(int feature);

// The signs along the incident face's u and v axes of its vertex k (box_box's polygon order).
inline void incident_vertex_signs(int k, double& u, double& v) {
  u = (k == 0 || k == 3) ? 1.0 : -1.0;
  v = k < 2 ? 1.0 : -1.0;
}

template <typename T>
bool box_contact_from_feature(const PosedShapeT<T>& a, const PosedShapeT<T>& b, int feature, ContactPointT<T>& point);

}  // namespace diffphys::collision
