// solve/convex.cpp — see convex.hpp for the problem and the method.
#include "solve/convex.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "diffphys/error.hpp"
#include "solve/row_algebra.hpp"

namespace diffphys::solve {

namespace {

// The inverse of a symmetric positive definite 3×3 (adjugate over determinant); zero for the
// zero matrix (a static body).
Mat3 inverse_of(const Mat3& a) {
  const double c00 = a(1, 1) * a(2, 2) - a(1, 2) * a(2, 1);
  const double c01 = a(1, 2) * a(2, 0) - a(1, 0) * a(2, 2);
  const double c02 = a(1, 0) * a(2, 1) - a(1, 1) * a(2, 0);
  const double determinant = a(0, 0) * c00 + a(0, 1) * c01 + a(0, 2) * c02;
  Mat3 inverse;
  if (!(determinant != 0.0)) return inverse;
  const double s = 1.0 / determinant;
  inverse(0, 0) = c00 * s;
  inverse(1, 0) = c01 * s;
  inverse(2, 0) = c02 * s;
  inverse(0, 1) = (a(0, 2) * a(2, 1) - a(0, 1) * a(2, 2)) * s;
  inverse(1, 1) = (a(0, 0) * a(2, 2) - a(0, 2) * a(2, 0)) * s;
  inverse(2, 1) = (a(0, 1) * a(2, 0) - a(0, 0) * a(2, 1)) * s;
  inverse(0, 2) = (a(0, 1) * a(1, 2) - a(0, 2) * a(1, 1)) * s;
  inverse(1, 2) = (a(0, 2) * a(1, 0) - a(0, 0) * a(1, 2)) * s;
  inverse(2, 2) = (a(0, 0) * a(1, 1) - a(0, 1) * a(1, 0)) * s;
  return inverse;
}

int find_root(std::vector<int>& parent, int body) {
  while (parent[static_cast<std::size_t>(body)] != body) {
    const int grandparent = parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(body)])];
    parent[static_cast<std::size_t>(body)] = grandparent;  // path halving
    body = grandparent;
  }
  return body;
}

bool moving(const MassBlocks& mass, int body) { return mass.inverse_mass[static_cast<std::size_t>(body)] > 0.0; }

void build_islands(std::span<const ConstraintRow> rows, const MassBlocks& mass, ConvexWorkspace& workspace) {
  ConvexIslands& islands = workspace.islands;
  const auto body_count = static_cast<int>(mass.inverse_mass.size());
  islands.parent.resize(static_cast<std::size_t>(body_count));
  for (int b = 0; b < body_count; ++b) islands.parent[static_cast<std::size_t>(b)] = b;
  const auto unite = [&](int a, int b) {
    const int root_a = find_root(islands.parent, a), root_b = find_root(islands.parent, b);
    // The smaller index becomes the root, so islands are numbered by their first body.
    if (root_a < root_b) islands.parent[static_cast<std::size_t>(root_b)] = root_a;
    if (root_b < root_a) islands.parent[static_cast<std::size_t>(root_a)] = root_b;
  };
  islands.island_of_body.assign(static_cast<std::size_t>(body_count), -1);
  std::vector<int>& anchor = islands.local_index;  // scratch: a moving body of each group's island
  for (const ConvexGroup& group : workspace.groups) {
    int first_moving = -1;
    for (int r = group.row; r < group.row + group.size; ++r) {
      const ConstraintRow& row = rows[static_cast<std::size_t>(r)];
      for (const int body : {row.body_a, row.body_b}) {
        if (!moving(mass, body)) continue;
        islands.island_of_body[static_cast<std::size_t>(body)] = 0;  // marked: some row moves it
        if (first_moving < 0) first_moving = body;
        else unite(first_moving, body);
      }
    }
  }
  // Number the islands in order of their first body; list their bodies.
  islands.count = 0;
  anchor.assign(static_cast<std::size_t>(body_count), -1);  // root → island
  islands.body_start.assign(1, 0);
  islands.bodies.clear();
  for (int b = 0; b < body_count; ++b) {
    if (islands.island_of_body[static_cast<std::size_t>(b)] < 0) continue;
    const int root = find_root(islands.parent, b);
    if (anchor[static_cast<std::size_t>(root)] < 0) anchor[static_cast<std::size_t>(root)] = islands.count++;
    islands.island_of_body[static_cast<std::size_t>(b)] = anchor[static_cast<std::size_t>(root)];
  }
  // Counting sort of bodies and groups by island (stable: ascending order within each).
  islands.body_start.assign(static_cast<std::size_t>(islands.count) + 1, 0);
  for (int b = 0; b < body_count; ++b)
    if (const int island = islands.island_of_body[static_cast<std::size_t>(b)]; island >= 0)
      ++islands.body_start[static_cast<std::size_t>(island) + 1];
  for (int i = 0; i < islands.count; ++i)
    islands.body_start[static_cast<std::size_t>(i) + 1] += islands.body_start[static_cast<std::size_t>(i)];
  islands.bodies.resize(static_cast<std::size_t>(islands.body_start.back()));
  islands.local_index.assign(static_cast<std::size_t>(body_count), -1);
  {
    std::vector<int>& fill = islands.parent;  // reuse as a cursor per island
    fill.assign(islands.body_start.begin(), islands.body_start.end() - 1);
    for (int b = 0; b < body_count; ++b) {
      const int island = islands.island_of_body[static_cast<std::size_t>(b)];
      if (island < 0) continue;
      const int slot = fill[static_cast<std::size_t>(island)]++;
      islands.bodies[static_cast<std::size_t>(slot)] = b;
      islands.local_index[static_cast<std::size_t>(b)] = slot - islands.body_start[static_cast<std::size_t>(island)];
    }
  }
  const auto group_island = [&](const ConvexGroup& group) {
    for (int r = group.row; r < group.row + group.size; ++r) {
      const ConstraintRow& row = rows[static_cast<std::size_t>(r)];
      for (const int body : {row.body_a, row.body_b})
        if (moving(mass, body)) return islands.island_of_body[static_cast<std::size_t>(body)];
    }
    return -1;
  };
  islands.group_start.assign(static_cast<std::size_t>(islands.count) + 1, 0);
  for (const ConvexGroup& group : workspace.groups)
    if (const int island = group_island(group); island >= 0) ++islands.group_start[static_cast<std::size_t>(island) + 1];
  for (int i = 0; i < islands.count; ++i)
    islands.group_start[static_cast<std::size_t>(i) + 1] += islands.group_start[static_cast<std::size_t>(i)];
  islands.groups.resize(static_cast<std::size_t>(islands.group_start.back()));
  std::vector<int>& fill = islands.parent;
  fill.assign(islands.group_start.begin(), islands.group_start.end() - 1);
  for (std::size_t g = 0; g < workspace.groups.size(); ++g)
    if (const int island = group_island(workspace.groups[g]); island >= 0)
      islands.groups[static_cast<std::size_t>(fill[static_cast<std::size_t>(island)]++)] = static_cast<int>(g);
}

// y of every row of the island's groups at the row velocities c + α dc (of the rows of
// the groups that are not Free only, with `skip_free`: the line search has their terms in
// closed form).
void compute_y(std::span<const ConstraintRow> rows, std::span<const int> groups, const ConvexWorkspace& workspace,
               double alpha, bool skip_free, std::vector<double>& y) {
  for (const int g : groups) {
    const ConvexGroup& group = workspace.groups[static_cast<std::size_t>(g)];
    if (skip_free && group.kind == ConvexGroupKind::Free) continue;
    for (int r = group.row; r < group.row + group.size; ++r) {
      const auto i = static_cast<std::size_t>(r);
      y[i] = (rows[i].rhs - workspace.row_velocity[i] - alpha * workspace.row_step[i]) / workspace.compliance[i];
    }
  }
}

// Adds J_rᵀ s to a local generalised force (6 per island body).
void add_local_row_transpose(const ConstraintRow& row, double s, const ConvexIslands& islands, std::span<double> out) {
  const auto add = [&](int body, const Vec3& linear, const Vec3& angular) {
    const int local = islands.local_index[static_cast<std::size_t>(body)];
    if (local < 0) return;
    add_vec3(out, 6 * local, linear * s);
    add_vec3(out, 6 * local + 3, angular * s);
  };
  add(row.body_a, row.linear_a, row.angular_a);
  add(row.body_b, row.linear_b, row.angular_b);
}

// γ₁₂ = 12u/(1 − 12u), u = ε/2: the bound on the relative rounding error of a 12-term dot
// product (Higham 2002, §3.1), here of a row's J_r v.
constexpr double kRowProductRounding =
    6.0 * std::numeric_limits<double>::epsilon() / (1.0 - 6.0 * std::numeric_limits<double>::epsilon());

// |J_r|ᵀ s (entrywise absolute values, s ≥ 0) added to a local generalised force.
void add_local_row_transpose_magnitude(const ConstraintRow& row, double s, const ConvexIslands& islands,
                                       std::span<double> out) {
  const auto add = [&](int body, const Vec3& linear, const Vec3& angular) {
    const int local = islands.local_index[static_cast<std::size_t>(body)];
    if (local < 0) return;
    add_vec3(out, 6 * local, cwise_abs(linear) * s);
    add_vec3(out, 6 * local + 3, cwise_abs(angular) * s);
  };
  add(row.body_a, row.linear_a, row.angular_a);
  add(row.body_b, row.linear_b, row.angular_b);
}

// |J_r|·|v| over the bodies' velocities: the scale of the rounding error of J_r v.
double row_magnitude_times_velocity(const ConstraintRow& row, std::span<const double> velocity) {
  double sum = 0.0;
  const auto part = [&](int body, const Vec3& linear, const Vec3& angular) {
    if (body < 0) return;
    sum += dot(cwise_abs(linear), cwise_abs(read_vec3(velocity, 6 * body))) +
           dot(cwise_abs(angular), cwise_abs(read_vec3(velocity, 6 * body + 3)));
  };
  part(row.body_a, row.linear_a, row.angular_a);
  part(row.body_b, row.linear_b, row.angular_b);
  return sum;
}

// J_r x for a local vector x (6 per island body); bodies outside the island contribute 0.
double local_row_times(const ConstraintRow& row, const ConvexIslands& islands, std::span<const double> x) {
  double sum = 0.0;
  const auto part = [&](int body, const Vec3& linear, const Vec3& angular) {
    const int local = islands.local_index[static_cast<std::size_t>(body)];
    if (local < 0) return;
    sum += dot(linear, read_vec3(x, 6 * local)) + dot(angular, read_vec3(x, 6 * local + 3));
  };
  part(row.body_a, row.linear_a, row.angular_a);
  part(row.body_b, row.linear_b, row.angular_b);
  return sum;
}

}  // namespace

void prepare_convex_problem(std::span<const ConstraintRow> rows, const MassBlocks& mass, ConvexWorkspace& workspace) {
  describe_convex_groups(rows, workspace.groups);
  const std::size_t row_count = rows.size();
  workspace.responses.resize(row_count);
  workspace.scale.assign(row_count, 0.0);
  workspace.compliance.assign(row_count, 0.0);
  for (std::size_t i = 0; i < row_count; ++i) workspace.responses[i] = row_response(rows[i], mass);
  for (const ConvexGroup& group : workspace.groups) {
    // w = A_ii of the group's first row. A cone shares its normal's R between its three rows:
    // the normal is then exactly the spring–damper of rigid/compliance.hpp, friction is
    // isotropic, and the projection in the metric R is the Euclidean one.
    const auto first = static_cast<std::size_t>(group.row);
    const double scale = delassus_entry(rows[first], rows[first], workspace.responses[first]);
    for (int r = group.row; r < group.row + group.size; ++r) {
      const auto i = static_cast<std::size_t>(r);
      workspace.scale[i] = scale;
      workspace.compliance[i] = rows[static_cast<std::size_t>(group.row)].softness * scale;
      if (!(workspace.compliance[i] > 0.0) || !std::isfinite(workspace.compliance[i]))
        throw Error(message("convex formulation: row ", r, " has compliance ", workspace.compliance[i],
                            " (softness ", rows[static_cast<std::size_t>(group.row)].softness, ", effective inverse mass ",
                            scale, "); it must be positive and finite"));
    }
  }
  workspace.inertia.resize(mass.inverse_inertia.size());
  for (std::size_t b = 0; b < mass.inverse_inertia.size(); ++b) workspace.inertia[b] = inverse_of(mass.inverse_inertia[b]);
  build_islands(rows, mass, workspace);
  workspace.constant_hessian_island = -1;
}

namespace {

// A row's J restricted to the island: up to two bodies (local index) with 6 entries each; a
// row on one body twice sums its two parts, as local_row_times does.
struct IslandRowBlocks {
  int count = 0;
  int node[2] = {-1, -1};
  double value[2][6] = {};
};

IslandRowBlocks island_row_blocks(const ConstraintRow& row, const ConvexIslands& islands) {
  IslandRowBlocks blocks;
  const auto add = [&](int body, const Vec3& linear, const Vec3& angular) {
    const int local = islands.local_index[static_cast<std::size_t>(body)];
    if (local < 0) return;
    int slot = 0;
    while (slot < blocks.count && blocks.node[slot] != local) ++slot;
    if (slot == blocks.count) blocks.node[blocks.count++] = local;
    for (int d = 0; d < 3; ++d) {
      blocks.value[slot][d] += linear[d];
      blocks.value[slot][3 + d] += angular[d];
    }
  };
  add(row.body_a, row.linear_a, row.angular_a);
  add(row.body_b, row.linear_b, row.angular_b);
  return blocks;
}

std::span<const int> island_groups(const ConvexIslands& islands, int island) {
  const auto first = static_cast<std::size_t>(islands.group_start[static_cast<std::size_t>(island)]);
  const auto last = static_cast<std::size_t>(islands.group_start[static_cast<std::size_t>(island) + 1]);
  return {islands.groups.data() + first, last - first};
}

// The pieces of the island's groups at workspace.y into `pieces`; false if a cone slides
// (then ∇²ℓ varies with y within the piece, and no factorisation is reused).
bool constant_pieces(std::span<const int> groups, const ConvexWorkspace& workspace, std::vector<std::uint8_t>& pieces) {
  pieces.resize(groups.size());
  bool constant = true;
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const ConvexGroup& group = workspace.groups[static_cast<std::size_t>(groups[k])];
    const ProjectionPiece piece = projection_piece(group, workspace.y.data() + group.row);
    pieces[k] = static_cast<std::uint8_t>(piece);
    constant = constant && piece != ProjectionPiece::Sliding;
  }
  return constant;
}

int island_body_count(const ConvexIslands& islands, int island) {
  return islands.body_start[static_cast<std::size_t>(island) + 1] - islands.body_start[static_cast<std::size_t>(island)];
}

}  // namespace

void analyse_island_hessian(std::span<const ConstraintRow> rows, int island, ConvexWorkspace& workspace) {
  const ConvexIslands& islands = workspace.islands;
  workspace.island_edges.clear();
  for (const int g : island_groups(islands, island)) {
    const ConvexGroup& group = workspace.groups[static_cast<std::size_t>(g)];
    for (int r = group.row; r < group.row + group.size; ++r) {
      const IslandRowBlocks blocks = island_row_blocks(rows[static_cast<std::size_t>(r)], islands);
      if (blocks.count == 2) workspace.island_edges.emplace_back(blocks.node[0], blocks.node[1]);
    }
  }
  // The ordering and the factor's structure depend on these pairs alone: a step whose island
  // couples the same bodies through the same rows as the last analysis (a humanoid lying
  // still, a settled tower) keeps them.
  workspace.constant_hessian_island = -1;
  const int node_count = island_body_count(islands, island);
  if (workspace.hessian.node_count() == node_count && workspace.analysed_edges == workspace.island_edges) return;
  workspace.hessian.analyse(node_count, workspace.island_edges);
  workspace.analysed_edges.assign(workspace.island_edges.begin(), workspace.island_edges.end());
}

namespace {

// Adds group g's term U G Uᵀ of Jᵀ G J to the Hessian, G = (∂Π/∂y) R⁻¹ (see below).
void add_group_hessian(std::span<const ConstraintRow> rows, const ConvexGroup& group, const ConvexWorkspace& workspace,
                       BodyBlockCholesky& hessian) {
  const ConvexIslands& islands = workspace.islands;
  const double inverse_compliance = 1.0 / workspace.compliance[static_cast<std::size_t>(group.row)];
  if (group.kind == ConvexGroupKind::Free) {
    // One row, ∂Π/∂y = 1: the rank-one u (u/R)ᵀ over the row's one or two bodies.
    const IslandRowBlocks blocks = island_row_blocks(rows[static_cast<std::size_t>(group.row)], islands);
    double weighted[2][6];
    for (int b = 0; b < blocks.count; ++b)
      for (int e = 0; e < 6; ++e) weighted[b][e] = inverse_compliance * blocks.value[b][e];
    for (int p = 0; p < blocks.count; ++p)
      for (int q = 0; q <= p; ++q) hessian.add_outer_pair(blocks.node[p], weighted[p], blocks.node[q], blocks.value[q]);
    return;
  }
  const GroupProjection projection = project_group(group, workspace.y.data() + group.row);
  double weight[3][3];
  bool active = false;
  for (int r = 0; r < group.size; ++r)
    for (int c = 0; c < group.size; ++c) {
      weight[r][c] = projection.jacobian[r][c] * inverse_compliance;
      active = active || weight[r][c] != 0.0;
    }
  if (!active) return;  // a separating contact, a box row at its bound
  constexpr int kMaxNodes = 6;  // two bodies per row, three rows
  int nodes[kMaxNodes];
  int node_count = 0;
  double columns[kMaxNodes][3][6] = {};  // U_p by row: columns[p][r] = row r's 6 entries on node p
  for (int r = 0; r < group.size; ++r) {
    const IslandRowBlocks blocks = island_row_blocks(rows[static_cast<std::size_t>(group.row + r)], islands);
    for (int b = 0; b < blocks.count; ++b) {
      int slot = 0;
      while (slot < node_count && nodes[slot] != blocks.node[b]) ++slot;
      if (slot == node_count) nodes[node_count++] = blocks.node[b];
      std::copy(blocks.value[b], blocks.value[b] + 6, columns[slot][r]);
    }
  }
  for (int p = 0; p < node_count; ++p) {
    double weighted[3][6];  // (U_p G)ᵀ: weighted[c] = Σ_r G_rc columns[p][r]
    for (int c = 0; c < group.size; ++c)
      for (int e = 0; e < 6; ++e) {
        double sum = 0.0;
        for (int r = 0; r < group.size; ++r) sum += weight[r][c] * columns[p][r][e];
        weighted[c][e] = sum;
      }
    for (int q = 0; q <= p; ++q) {
      double block[36];
      for (int e = 0; e < 6; ++e)
        for (int f = 0; f < 6; ++f) {
          double sum = 0.0;
          for (int c = 0; c < group.size; ++c) sum += weighted[c][e] * columns[q][c][f];
          block[6 * e + f] = sum;
        }
      hessian.add_block_pair(nodes[p], nodes[q], block);
    }
  }
}

}  // namespace

bool factorize_island_hessian(std::span<const ConstraintRow> rows, int island, ConvexWorkspace& workspace,
                              const MassBlocks& mass) {
  const ConvexIslands& islands = workspace.islands;
  const std::span<const int> groups = island_groups(islands, island);
  BodyBlockCholesky& hessian = workspace.hessian;
  // M and the leading Free groups (the joints' rows come first) do not depend on y: they are
  // assembled at the first factorisation of the island's step and restored after it.
  std::size_t first_varying = 0;
  while (first_varying < groups.size() &&
         workspace.groups[static_cast<std::size_t>(groups[first_varying])].kind == ConvexGroupKind::Free)
    ++first_varying;
  if (workspace.constant_hessian_island == island) {
    hessian.restore_values();
  } else {
    const auto first_body = static_cast<std::size_t>(islands.body_start[static_cast<std::size_t>(island)]);
    const auto body_count = static_cast<std::size_t>(island_body_count(islands, island));
    hessian.clear_values();
    for (std::size_t k = 0; k < body_count; ++k) {
      const auto body = static_cast<std::size_t>(islands.bodies[first_body + k]);
      const double m = 1.0 / mass.inverse_mass[body];
      const double linear[9] = {m, 0, 0, 0, m, 0, 0, 0, m};
      double angular[9];
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) angular[3 * r + c] = workspace.inertia[body](r, c);
      hessian.add_diagonal_3x3(static_cast<int>(k), 0, linear);
      hessian.add_diagonal_3x3(static_cast<int>(k), 1, angular);
    }
    // Jᵀ G J, G = (∂Π/∂y) R⁻¹ per group: with U_p the group's rows restricted to island body p
    // (6 × size), body pair (p, q) gets U_p G U_qᵀ, once per unordered pair (G is symmetric).
    for (std::size_t k = 0; k < first_varying; ++k)
      add_group_hessian(rows, workspace.groups[static_cast<std::size_t>(groups[k])], workspace, hessian);
    hessian.save_values();
    workspace.constant_hessian_island = island;
  }
  for (std::size_t k = first_varying; k < groups.size(); ++k)
    add_group_hessian(rows, workspace.groups[static_cast<std::size_t>(groups[k])], workspace, hessian);
  return hessian.factorize();
}

MlcpResult solve_convex(std::span<const ConstraintRow> rows, const MassBlocks& mass,
                        std::span<const double> free_velocity, std::span<const double> initial_velocity,
                        int max_iterations, double tolerance, ConvexWorkspace& workspace, std::span<double> lambda,
                        std::span<double> velocity) {
  prepare_convex_problem(rows, mass, workspace);
  const ConvexIslands& islands = workspace.islands;
  const std::size_t row_count = rows.size();
  workspace.row_velocity.assign(row_count, 0.0);
  workspace.row_step.assign(row_count, 0.0);
  workspace.y.assign(row_count, 0.0);
  std::fill(lambda.begin(), lambda.end(), 0.0);
  // Bodies no row moves keep their free velocity; the others start from the initial guess.
  for (std::size_t i = 0; i < velocity.size(); ++i)
    velocity[i] = islands.island_of_body[i / 6] >= 0 ? initial_velocity[i] : free_velocity[i];

  MlcpResult result;
  result.converged = true;
  workspace.factor_at_solution_island = -1;
  for (int island = 0; island < islands.count; ++island) {
    const auto first_body = static_cast<std::size_t>(islands.body_start[static_cast<std::size_t>(island)]);
    const auto body_count = static_cast<std::size_t>(island_body_count(islands, island));
    const std::size_t n = 6 * body_count;
    const std::span<const int> groups = island_groups(islands, island);
    workspace.gradient.resize(n);
    workspace.step.resize(n);
    workspace.rounding.resize(n);
    const auto body_of = [&](std::size_t k) { return static_cast<std::size_t>(islands.bodies[first_body + k]); };
    // ∇ℓ = M(v − v_free) − Jᵀγ at the current y; returns ‖M⁻¹∇ℓ‖_∞.
    const auto gradient_and_residual = [&] {
      std::span<double> g(workspace.gradient);
      for (std::size_t k = 0; k < body_count; ++k) {
        const std::size_t b = body_of(k);
        const Vec3 dv = read_vec3(velocity, static_cast<int>(6 * b)) - read_vec3(free_velocity, static_cast<int>(6 * b));
        const Vec3 dw = read_vec3(velocity, static_cast<int>(6 * b + 3)) - read_vec3(free_velocity, static_cast<int>(6 * b + 3));
        const Vec3 linear = dv * (1.0 / mass.inverse_mass[b]);
        const Vec3 angular = workspace.inertia[b] * dw;
        for (int d = 0; d < 3; ++d) {
          g[6 * k + static_cast<std::size_t>(d)] = linear[d];
          g[6 * k + 3 + static_cast<std::size_t>(d)] = angular[d];
        }
      }
      for (const int gi : groups) {
        const ConvexGroup& group = workspace.groups[static_cast<std::size_t>(gi)];
        if (group.kind == ConvexGroupKind::Free) {  // γ = y
          const auto i = static_cast<std::size_t>(group.row);
          add_local_row_transpose(rows[i], -workspace.y[i], islands, g);
          continue;
        }
        const GroupProjection projection = project_group(group, workspace.y.data() + group.row);
        for (int r = 0; r < group.size; ++r)
          add_local_row_transpose(rows[static_cast<std::size_t>(group.row + r)], -projection.gamma[r], islands, g);
      }
      double residual = 0.0;
      for (std::size_t k = 0; k < body_count; ++k) {
        const std::size_t b = body_of(k);
        const Vec3 linear = read_vec3(g, static_cast<int>(6 * k)) * mass.inverse_mass[b];
        const Vec3 angular = mass.inverse_inertia[b] * read_vec3(g, static_cast<int>(6 * k + 3));
        residual = std::max({residual, std::abs(linear.x), std::abs(linear.y), std::abs(linear.z), std::abs(angular.x),
                             std::abs(angular.y), std::abs(angular.z)});
        if (!std::isfinite(linear.x + linear.y + linear.z + angular.x + angular.y + angular.z))
          residual = std::numeric_limits<double>::infinity();
      }
      return residual;
    };
    // The residual's own rounding error (m/s) at the current velocities: y_r = (v̂_r − J_r v)/R_r
    // carries the rounding of J_r v, at most γ₁₂|J_r|·|v| for a row's 12 products (Higham 2002,
    // §3.1), divided by R_r, and M⁻¹Jᵀ passes it on. A stiff row (κ ~ 1e-6) makes it reach
    // 1e-10 m/s; a stall below it is as converged as this arithmetic can show. Evaluated only
    // for a solve that ended above its tolerance.
    const auto residual_rounding = [&] {
      std::span<double> rounding_force(workspace.rounding);
      std::fill(rounding_force.begin(), rounding_force.end(), 0.0);
      for (const int gi : groups) {
        const ConvexGroup& group = workspace.groups[static_cast<std::size_t>(gi)];
        for (int r = group.row; r < group.row + group.size; ++r) {
          const auto i = static_cast<std::size_t>(r);
          const double y_error = kRowProductRounding *
                                 (std::abs(rows[i].rhs) + row_magnitude_times_velocity(rows[i], velocity)) /
                                 workspace.compliance[i];
          add_local_row_transpose_magnitude(rows[i], y_error, islands, rounding_force);
        }
      }
      double rounding = 0.0;
      for (std::size_t k = 0; k < body_count; ++k) {
        const std::size_t b = body_of(k);
        const Vec3 force_error = read_vec3(rounding_force, static_cast<int>(6 * k));
        const Vec3 torque_error = read_vec3(rounding_force, static_cast<int>(6 * k + 3));
        rounding = std::max(rounding, std::max({force_error.x, force_error.y, force_error.z}) * mass.inverse_mass[b]);
        for (int d = 0; d < 3; ++d) {
          const Vec3 inverse_inertia_row{mass.inverse_inertia[b](d, 0), mass.inverse_inertia[b](d, 1),
                                         mass.inverse_inertia[b](d, 2)};
          rounding = std::max(rounding, dot(cwise_abs(inverse_inertia_row), torque_error));
        }
      }
      return rounding;
    };
    const auto update_row_velocities = [&] {
      for (const int gi : groups) {
        const ConvexGroup& group = workspace.groups[static_cast<std::size_t>(gi)];
        for (int r = group.row; r < group.row + group.size; ++r)
          workspace.row_velocity[static_cast<std::size_t>(r)] = row_times_velocity(rows[static_cast<std::size_t>(r)], velocity);
      }
      compute_y(rows, groups, workspace, 0.0, false, workspace.y);
    };

    update_row_velocities();
    double residual = gradient_and_residual();
    int iteration = 0;
    // Newton converges quadratically; a residual already below kRoundOffZone (m/s) that stops
    // halving for kStall iterations sits on round-off (a tolerance below what the data's
    // rounding allows): stop there, reporting it. Far from the solution the residual (unlike
    // ℓ) need not fall every iteration, so the test does not apply there.
    constexpr int kStall = 4;
    constexpr double kRoundOffZone = 1e-8;
    // The line search stops where |φ'(α)| ≤ kLineSearchTolerance |φ'(0)| (the strong Wolfe
    // curvature condition; MuJoCo's ls_tolerance is 0.01). Newton's own step α = 1 passes at
    // once near the solution. Measured on the 27-box pile: 1e-3 takes 2.6 evaluations of
    // φ' per iteration against 9.2 for 1e-14, for the same Newton iterations.
    constexpr double kLineSearchTolerance = 1e-3;
    double best_residual = residual;
    int last_improvement = 0;
    bool within_rounding = false;  // stopped above the tolerance, within the residual's rounding
    if (residual > tolerance) {
      analyse_island_hessian(rows, island, workspace);
      workspace.factor_at_solution_island = -1;
    }
    // Whether hessian holds this island's ∇²ℓ factorised at the pieces in factored_pieces
    // (none sliding). Near the solution the pieces settle (a humanoid standing or lying: every
    // contact sticking), and Newton's last iterations then solve with the same factor.
    bool factor_reusable = false;
    while (!within_rounding && residual > tolerance && iteration < max_iterations && std::isfinite(residual) &&
           iteration - last_improvement < kStall) {
      ++iteration;
      const bool constant = constant_pieces(groups, workspace, workspace.current_pieces);
      if (!(factor_reusable && constant && workspace.current_pieces == workspace.factored_pieces)) {
        if (!factorize_island_hessian(rows, island, workspace, mass)) {
          residual = std::numeric_limits<double>::infinity();
          break;
        }
        factor_reusable = constant;
        if (constant) workspace.factored_pieces.assign(workspace.current_pieces.begin(), workspace.current_pieces.end());
      }
      for (std::size_t i = 0; i < n; ++i) workspace.step[i] = -workspace.gradient[i];
      workspace.hessian.solve(workspace.step);
      // Exact line search: φ(α) = ℓ(v + αΔv) is convex, φ'(α) = (v − v_free + αΔv)ᵀMΔv −
      // γ(α)ᵀJΔv and φ''(α) = ΔvᵀMΔv + (JΔv)ᵀG(α)(JΔv). φ'(0) = ∇ℓᵀΔv < 0.
      double mass_step = 0.0, slope_at_zero_mass = 0.0;
      for (std::size_t k = 0; k < body_count; ++k) {
        const std::size_t b = body_of(k);
        const Vec3 step_linear = read_vec3(workspace.step, static_cast<int>(6 * k));
        const Vec3 step_angular = read_vec3(workspace.step, static_cast<int>(6 * k + 3));
        const Vec3 m_linear = step_linear * (1.0 / mass.inverse_mass[b]);
        const Vec3 m_angular = workspace.inertia[b] * step_angular;
        mass_step += dot(step_linear, m_linear) + dot(step_angular, m_angular);
        slope_at_zero_mass +=
            dot(read_vec3(velocity, static_cast<int>(6 * b)) - read_vec3(free_velocity, static_cast<int>(6 * b)), m_linear) +
            dot(read_vec3(velocity, static_cast<int>(6 * b + 3)) - read_vec3(free_velocity, static_cast<int>(6 * b + 3)),
                m_angular);
      }
      for (const int gi : groups) {
        const ConvexGroup& group = workspace.groups[static_cast<std::size_t>(gi)];
        for (int r = group.row; r < group.row + group.size; ++r)
          workspace.row_step[static_cast<std::size_t>(r)] =
              local_row_times(rows[static_cast<std::size_t>(r)], islands, workspace.step);
      }
      // A Free group's γ = y(α) = y(0) − α dc/R is linear in α: its terms of φ'(α),
      // −Σ y(α) dc = −Σ y(0) dc + α Σ dc²/R, and of φ''(α), Σ dc²/R, are summed once per
      // iteration rather than at every evaluation (the joints' rows are most of a humanoid's).
      double free_slope = 0.0, free_curvature = 0.0;
      for (const int gi : groups) {
        const ConvexGroup& group = workspace.groups[static_cast<std::size_t>(gi)];
        if (group.kind != ConvexGroupKind::Free) continue;
        const auto i = static_cast<std::size_t>(group.row);
        const double dc = workspace.row_step[i];
        free_slope += workspace.y[i] * dc;
        free_curvature += dc * (1.0 / workspace.compliance[i]) * dc;
      }
      const double line_slope = slope_at_zero_mass - free_slope, line_curvature = mass_step + free_curvature;
      // φ'(α) and φ''(α); y at α is written to workspace.y for the rows of groups that are not
      // Free (update_row_velocities below writes every row's at the step taken).
      const auto derivatives = [&](double alpha, double& second) {
        compute_y(rows, groups, workspace, alpha, true, workspace.y);
        double first = line_slope + alpha * line_curvature;
        second = line_curvature;
        for (const int gi : groups) {
          const ConvexGroup& group = workspace.groups[static_cast<std::size_t>(gi)];
          if (group.kind == ConvexGroupKind::Free) continue;
          const double inverse_compliance = 1.0 / workspace.compliance[static_cast<std::size_t>(group.row)];
          const double* dc = workspace.row_step.data() + group.row;
          const GroupProjection projection = project_group(group, workspace.y.data() + group.row);
          for (int r = 0; r < group.size; ++r) {
            first -= projection.gamma[r] * dc[r];
            for (int s = 0; s < group.size; ++s) second += dc[r] * projection.jacobian[r][s] * inverse_compliance * dc[s];
          }
        }
        return first;
      };
      // φ'(0) = ∇ℓᵀΔv, from the gradient already at hand.
      double slope0 = 0.0;
      for (std::size_t i = 0; i < n; ++i) slope0 += workspace.gradient[i] * workspace.step[i];
      if (!(slope0 < 0.0)) break;  // not a descent direction: only round-off is left (or NaN)
      double second = 0.0;
      double low = 0.0, high = 1.0, alpha = 1.0;
      double slope = derivatives(1.0, second);
      while (slope < -kLineSearchTolerance * std::abs(slope0) && high < 1e6) {  // the minimum lies beyond: widen
        low = high;
        high *= 2.0;
        slope = derivatives(high, second);
      }
      alpha = high;
      for (int search = 0; search < 100 && std::abs(slope) > kLineSearchTolerance * std::abs(slope0); ++search) {
        if (slope > 0.0) high = alpha;
        else low = alpha;
        double next = second > 0.0 ? alpha - slope / second : 0.5 * (low + high);
        if (!(next > low && next < high)) next = 0.5 * (low + high);
        if (high - low <= 1e-15 * high) break;
        alpha = next;
        slope = derivatives(alpha, second);
      }
      for (std::size_t k = 0; k < body_count; ++k) {
        const std::size_t b = body_of(k);
        for (std::size_t d = 0; d < 6; ++d) velocity[6 * b + d] += alpha * workspace.step[6 * k + d];
      }
      update_row_velocities();
      const double previous_residual = residual;
      residual = gradient_and_residual();
      // Near the solution, an iteration that did not halve a residual already within its own
      // rounding error shows that only round-off is left: stop there rather than after kStall
      // such iterations (humanoid.xml falling, stiff joint rows: 4 of its ~5 iterations per
      // step were those). While the residual still halves, Newton goes on: the rounding bound
      // is a worst case that it usually gets well below, and finite differences of a whole
      // rollout see the difference.
      if (residual > tolerance && residual <= kRoundOffZone && !(residual < 0.5 * previous_residual) &&
          residual <= residual_rounding()) {
        within_rounding = true;
        break;
      }
      if (residual < 0.5 * best_residual || residual > kRoundOffZone) {
        best_residual = std::min(best_residual, residual);
        last_improvement = iteration;
      }
    }
    result.iterations += iteration;
    result.residual = std::max(result.residual, residual);
    // The factorisation is also ∇²ℓ at the solution if the pieces did not move since (the
    // backward pass then skips its own); hessian holds only the island factorised last.
    if (iteration > 0)
      workspace.factor_at_solution_island =
          factor_reusable && constant_pieces(groups, workspace, workspace.current_pieces) &&
                  workspace.current_pieces == workspace.factored_pieces
              ? island
              : -1;
    // Converged at the tolerance or within the residual's own rounding error (checked in the
    // loop once the residual is below kRoundOffZone, and here for a solve that ended otherwise).
    if (!(residual <= tolerance) && !within_rounding && !(residual <= residual_rounding())) result.converged = false;
    // λ: each group's γ at the final velocities.
    for (const int gi : groups) {
      const ConvexGroup& group = workspace.groups[static_cast<std::size_t>(gi)];
      if (group.kind == ConvexGroupKind::Free) {
        lambda[static_cast<std::size_t>(group.row)] = workspace.y[static_cast<std::size_t>(group.row)];
        continue;
      }
      const GroupProjection projection = project_group(group, workspace.y.data() + group.row);
      for (int r = 0; r < group.size; ++r) lambda[static_cast<std::size_t>(group.row + r)] = projection.gamma[r];
    }
  }
  return result;
}

}  // namespace diffphys::solve
