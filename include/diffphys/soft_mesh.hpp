// diffphys/soft_mesh.hpp — meshes for soft bodies: a tetrahedral box (beam) generator, a
// rectangular cloth generator and the tet-mesh text format (docs/soft-bodies.md#tet-mesh-files).
//
// Generators append nodes and elements to a SoftSpec and return the index of the first node
// they added, so several bodies can share one spec. Each refuses (Error, before allocating)
// to grow the spec past kMaxSoftNodes nodes or kMaxSoftElements elements (tets plus
// triangles): a mistyped "cells" then fails at once instead of allocating for minutes.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "diffphys/soft.hpp"

namespace diffphys::soft {

inline constexpr long long kMaxSoftNodes = 1'000'000;
inline constexpr long long kMaxSoftElements = 1'000'000;

// An axis-aligned box [origin, origin + size] split into cells[0] × cells[1] × cells[2]
// cubes of 6 tetrahedra each (Kuhn subdivision: conforming, every tet positively oriented).
// Nodes are numbered x fastest: node(i, j, k) = first + i + (cells[0]+1)(j + (cells[1]+1) k).
int add_tet_box(SoftSpec& spec, const Vector3& origin, const Vector3& size, const std::array<int, 3>& cells,
                int material);

// A rectangle origin + s·edge_u + t·edge_v, s, t ∈ [0, 1], as (cells_u + 1) × (cells_v + 1)
// nodes (u fastest) and 2 cells_u cells_v triangles. Hinges follow from the triangles.
int add_cloth_rectangle(SoftSpec& spec, const Vector3& origin, const Vector3& edge_u, const Vector3& edge_v,
                        int cells_u, int cells_v, int material);

// A tetrahedral mesh read from the text format:
//   # comments and blank lines are ignored
//   nodes <N>
//   <x> <y> <z>            N lines, metres
//   tets <M>
//   <a> <b> <c> <d>        M lines, 0-based node indices, positively oriented
struct TetMesh {
  std::vector<Vector3> nodes;
  std::vector<std::array<int, 4>> tets;
};

// Throws Error naming the source and line for syntax errors, wrong counts, unknown node
// indices, and inverted or degenerate tetrahedra.
TetMesh parse_tet_mesh(std::string_view text, const std::string& source = "<tet mesh>");
TetMesh load_tet_mesh(const std::string& path);
std::string format_tet_mesh(const TetMesh& mesh);

// Appends the mesh translated by `offset` with the given tet material; returns the first node.
int add_tet_mesh(SoftSpec& spec, const TetMesh& mesh, int material, const Vector3& offset = {0, 0, 0});

}  // namespace diffphys::soft
