// soft/soft_model.cpp — building a SoftModel from a SoftSpec: checks, rest-shape data of the
// elements (D_m⁻¹, volumes, areas, hinges), the parameter layout θ and the lumped masses.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "diffphys/error.hpp"
#include "diffphys/soft.hpp"
#include "soft/energy_term.hpp"
#include "soft/shape_distance.hpp"

namespace diffphys::soft {

template <class T>
T dihedral_angle(const T* x);  // cloth_bending_energy.cpp

namespace {

void check_finite(double value, const std::string& what) {
  if (!std::isfinite(value)) throw Error(message(what, " must be finite, got ", value));
}

void check_node(int node, int node_count, const std::string& what) {
  if (node < 0 || node >= node_count)
    throw Error(message(what, ": unknown node index ", node, " (the model has ", node_count, " nodes)"));
}

double distance(const Vector3& a, const Vector3& b) {
  return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

// Appends a named slice of `values` to θ and returns its offset.
int add_slice(SoftParamLayout& layout, std::vector<double>& theta, std::string name,
              std::span<const double> values) {
  const int offset = layout.count;
  layout.slices.push_back({std::move(name), offset, static_cast<int>(values.size())});
  theta.insert(theta.end(), values.begin(), values.end());
  layout.count += static_cast<int>(values.size());
  return offset;
}

// Unit quaternion (w, x, y, z) → row-major rotation matrix; throws for a zero or non-finite one.
std::array<double, 9> rotation_matrix(const std::array<double, 4>& quaternion, const std::string& what) {
  double norm = 0.0;
  for (const double v : quaternion) norm += v * v;
  norm = std::sqrt(norm);
  if (!(norm > 0.0) || !std::isfinite(norm))
    throw Error(message(what, ": orientation must be a nonzero finite quaternion (w, x, y, z), got [", quaternion[0], ", ",
                        quaternion[1], ", ", quaternion[2], ", ", quaternion[3], "]"));
  const double w = quaternion[0] / norm, x = quaternion[1] / norm, y = quaternion[2] / norm, z = quaternion[3] / norm;
  return {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
          2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
          2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
}

std::array<double, 12> pose_values(const Vector3& position, const std::array<double, 9>& rotation) {
  return {position[0], position[1], position[2], rotation[0], rotation[1], rotation[2], rotation[3],
          rotation[4], rotation[5], rotation[6], rotation[7], rotation[8]};
}

}  // namespace

SoftBuild build_soft(const SoftSpec& spec) {
  SoftBuild built;
  SoftModel& model = built.model;
  std::vector<double>& theta = built.params.values;
  model.name = spec.name;
  if (!(spec.dt > 0.0) || !std::isfinite(spec.dt)) throw Error(message("soft model '", spec.name, "': dt must be positive, got ", spec.dt));
  model.dt = spec.dt;
  if (!(spec.max_speed > 0.0) || !std::isfinite(spec.max_speed))
    throw Error(message("soft model '", spec.name, "': max_speed must be positive and finite, got ", spec.max_speed));
  model.max_speed = spec.max_speed;
  const int n = static_cast<int>(spec.nodes.size());
  if (n == 0) throw Error(message("soft model '", spec.name, "': no nodes"));
  model.node_count = n;
  model.rest_positions.resize(static_cast<std::size_t>(3 * n));
  for (int i = 0; i < n; ++i)
    for (int r = 0; r < 3; ++r) {
      check_finite(spec.nodes[static_cast<std::size_t>(i)][static_cast<std::size_t>(r)], message("node ", i, " position"));
      model.rest_positions[static_cast<std::size_t>(3 * i + r)] = spec.nodes[static_cast<std::size_t>(i)][static_cast<std::size_t>(r)];
    }
  model.pinned.assign(static_cast<std::size_t>(n), 0);
  for (const int node : spec.pinned) {
    check_node(node, n, "pinned");
    model.pinned[static_cast<std::size_t>(node)] = 1;
  }
  if (!spec.node_masses.empty() && static_cast<int>(spec.node_masses.size()) != n)
    throw Error(message("node_masses: expected ", n, " values (one per node), got ", spec.node_masses.size()));
  if (!spec.initial_velocities.empty() && static_cast<int>(spec.initial_velocities.size()) != n)
    throw Error(message("initial_velocities: expected ", n, " vectors (one per node), got ", spec.initial_velocities.size()));

  SoftParamLayout& layout = model.layout;
  layout.gravity = add_slice(layout, theta, "gravity", spec.gravity);
  std::vector<double> node_masses = spec.node_masses;
  node_masses.resize(static_cast<std::size_t>(n), 0.0);
  layout.node_mass = add_slice(layout, theta, "node_mass", node_masses);

  // Springs.
  std::vector<double> stiffness, rest_length, damping;
  for (std::size_t s = 0; s < spec.springs.size(); ++s) {
    const SpringSpec& spring = spec.springs[s];
    const std::string what = message("spring ", s);
    check_node(spring.a, n, what);
    check_node(spring.b, n, what);
    const double length = distance(spec.nodes[static_cast<std::size_t>(spring.a)], spec.nodes[static_cast<std::size_t>(spring.b)]);
    if (spring.a == spring.b || length <= 0.0)
      throw Error(message(what, ": nodes ", spring.a, " and ", spring.b, " coincide (a spring needs two distinct points)"));
    model.springs.push_back({spring.a, spring.b});
    stiffness.push_back(spring.stiffness);
    rest_length.push_back(spring.rest_length < 0.0 ? length : spring.rest_length);
    damping.push_back(spring.damping);
  }
  layout.spring_stiffness = add_slice(layout, theta, "spring_stiffness", stiffness);
  layout.spring_rest_length = add_slice(layout, theta, "spring_rest_length", rest_length);
  layout.spring_damping = add_slice(layout, theta, "spring_damping", damping);

  // Tet materials and elements.
  std::set<std::string> names;
  for (const TetMaterialSpec& material : spec.tet_materials) {
    if (material.name.empty() || !names.insert("tet:" + material.name).second)
      throw Error(message("tet material '", material.name, "': empty or duplicate name"));
    model.tet_materials.push_back({material.name, material.model});
    const std::string prefix = "tet_material/" + material.name + "/";
    layout.tet_youngs_modulus.push_back(add_slice(layout, theta, prefix + "youngs_modulus", std::array{material.youngs_modulus}));
    layout.tet_poisson_ratio.push_back(add_slice(layout, theta, prefix + "poisson_ratio", std::array{material.poisson_ratio}));
    layout.tet_density.push_back(add_slice(layout, theta, prefix + "density", std::array{material.density}));
    layout.tet_damping.push_back(add_slice(layout, theta, prefix + "damping", std::array{material.damping}));
  }
  for (std::size_t t = 0; t < spec.tets.size(); ++t) {
    const TetSpec& tet = spec.tets[t];
    const std::string what = message("tet ", t);
    for (const int node : tet.nodes) check_node(node, n, what);
    if (tet.material < 0 || tet.material >= static_cast<int>(spec.tet_materials.size()))
      throw Error(message(what, ": unknown tet material index ", tet.material, " (", spec.tet_materials.size(), " materials)"));
    TetElement element;
    element.nodes = tet.nodes;
    element.material = tet.material;
    const Vector3& x0 = spec.nodes[static_cast<std::size_t>(tet.nodes[0])];
    std::array<double, 9> dm{};  // columns X1−X0, X2−X0, X3−X0
    double scale = 0.0;
    for (int c = 0; c < 3; ++c) {
      const Vector3& xc = spec.nodes[static_cast<std::size_t>(tet.nodes[static_cast<std::size_t>(c + 1)])];
      for (int r = 0; r < 3; ++r) dm[static_cast<std::size_t>(3 * r + c)] = xc[static_cast<std::size_t>(r)] - x0[static_cast<std::size_t>(r)];
      scale = std::max(scale, distance(xc, x0));
    }
    const double det = dm[0] * (dm[4] * dm[8] - dm[5] * dm[7]) - dm[1] * (dm[3] * dm[8] - dm[5] * dm[6]) +
                       dm[2] * (dm[3] * dm[7] - dm[4] * dm[6]);
    const double volume = det / 6.0;
    // Degenerate: volume tiny relative to the cube of its longest edge.
    if (std::abs(volume) <= 1e-12 * scale * scale * scale)
      throw Error(message(what, " (nodes ", tet.nodes[0], ", ", tet.nodes[1], ", ", tet.nodes[2], ", ", tet.nodes[3],
                          "): degenerate, volume ", volume, " m³"));
    if (volume < 0.0)
      throw Error(message(what, " (nodes ", tet.nodes[0], ", ", tet.nodes[1], ", ", tet.nodes[2], ", ", tet.nodes[3],
                          "): inverted, signed volume ", volume, " m³ (swap two nodes to orient it positively)"));
    element.rest_volume = volume;
    std::array<double, 9>& inv = element.rest_inverse;
    inv[0] = (dm[4] * dm[8] - dm[5] * dm[7]) / det;
    inv[1] = (dm[2] * dm[7] - dm[1] * dm[8]) / det;
    inv[2] = (dm[1] * dm[5] - dm[2] * dm[4]) / det;
    inv[3] = (dm[5] * dm[6] - dm[3] * dm[8]) / det;
    inv[4] = (dm[0] * dm[8] - dm[2] * dm[6]) / det;
    inv[5] = (dm[2] * dm[3] - dm[0] * dm[5]) / det;
    inv[6] = (dm[3] * dm[7] - dm[4] * dm[6]) / det;
    inv[7] = (dm[1] * dm[6] - dm[0] * dm[7]) / det;
    inv[8] = (dm[0] * dm[4] - dm[1] * dm[3]) / det;
    model.tets.push_back(element);
  }

  // Cloth materials, triangles and hinges.
  for (const ClothMaterialSpec& material : spec.cloth_materials) {
    if (material.name.empty() || !names.insert("cloth:" + material.name).second)
      throw Error(message("cloth material '", material.name, "': empty or duplicate name"));
    model.cloth_materials.push_back(material.name);
    const std::string prefix = "cloth_material/" + material.name + "/";
    layout.cloth_stretch_modulus.push_back(add_slice(layout, theta, prefix + "stretch_modulus", std::array{material.stretch_modulus}));
    layout.cloth_poisson_ratio.push_back(add_slice(layout, theta, prefix + "poisson_ratio", std::array{material.poisson_ratio}));
    layout.cloth_bending_stiffness.push_back(add_slice(layout, theta, prefix + "bending_stiffness", std::array{material.bending_stiffness}));
    layout.cloth_areal_density.push_back(add_slice(layout, theta, prefix + "areal_density", std::array{material.areal_density}));
  }
  // Edge (low, high) → (triangle, opposite node, whether the triangle runs low→high).
  std::map<std::pair<int, int>, std::vector<std::array<int, 3>>> edges;
  for (std::size_t t = 0; t < spec.triangles.size(); ++t) {
    const TriangleSpec& triangle = spec.triangles[t];
    const std::string what = message("triangle ", t);
    for (const int node : triangle.nodes) check_node(node, n, what);
    if (triangle.material < 0 || triangle.material >= static_cast<int>(spec.cloth_materials.size()))
      throw Error(message(what, ": unknown cloth material index ", triangle.material, " (", spec.cloth_materials.size(), " materials)"));
    TriangleElement element;
    element.nodes = triangle.nodes;
    element.material = triangle.material;
    const Vector3& x0 = spec.nodes[static_cast<std::size_t>(triangle.nodes[0])];
    const Vector3& x1 = spec.nodes[static_cast<std::size_t>(triangle.nodes[1])];
    const Vector3& x2 = spec.nodes[static_cast<std::size_t>(triangle.nodes[2])];
    const Vector3 e1{x1[0] - x0[0], x1[1] - x0[1], x1[2] - x0[2]};
    const Vector3 e2{x2[0] - x0[0], x2[1] - x0[1], x2[2] - x0[2]};
    const double l1 = std::sqrt(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2]);
    const double along = l1 > 0 ? (e2[0] * e1[0] + e2[1] * e1[1] + e2[2] * e1[2]) / l1 : 0.0;
    const double l2sq = e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2];
    const double across = std::sqrt(std::max(0.0, l2sq - along * along));
    const double area = 0.5 * l1 * across;
    if (!(l1 > 0.0) || area <= 1e-12 * std::max(l1 * l1, l2sq))
      throw Error(message(what, " (nodes ", triangle.nodes[0], ", ", triangle.nodes[1], ", ", triangle.nodes[2], "): degenerate, area ", area, " m²"));
    // D_m = [[l1, along], [0, across]] in the triangle's own 2D frame.
    const double det = l1 * across;
    element.rest_inverse = {across / det, -along / det, 0.0, l1 / det};
    element.rest_area = area;
    model.triangles.push_back(element);
    for (int k = 0; k < 3; ++k) {
      const int a = triangle.nodes[static_cast<std::size_t>(k)], b = triangle.nodes[static_cast<std::size_t>((k + 1) % 3)];
      const int opposite = triangle.nodes[static_cast<std::size_t>((k + 2) % 3)];
      edges[{std::min(a, b), std::max(a, b)}].push_back({static_cast<int>(t), opposite, a < b ? 1 : 0});
    }
  }
  for (const auto& [edge, sides] : edges) {
    if (sides.size() != 2) continue;  // boundary (1) or non-manifold (>2) edges: no hinge
    const auto& first = sides[0];
    const auto& second = sides[1];
    Hinge hinge;
    // Edge in the first triangle's winding direction (see dihedral_angle).
    hinge.nodes = first[2] ? std::array{edge.first, edge.second, first[1], second[1]}
                           : std::array{edge.second, edge.first, first[1], second[1]};
    hinge.material = model.triangles[static_cast<std::size_t>(first[0])].material;
    std::array<double, 12> x{};
    for (int a = 0; a < 4; ++a)
      for (int r = 0; r < 3; ++r) x[static_cast<std::size_t>(3 * a + r)] = spec.nodes[static_cast<std::size_t>(hinge.nodes[static_cast<std::size_t>(a)])][static_cast<std::size_t>(r)];
    hinge.rest_angle = dihedral_angle(x.data());
    const double edge_length = distance(spec.nodes[static_cast<std::size_t>(edge.first)], spec.nodes[static_cast<std::size_t>(edge.second)]);
    hinge.weight = 3.0 * edge_length * edge_length /
                   (model.triangles[static_cast<std::size_t>(first[0])].rest_area + model.triangles[static_cast<std::size_t>(second[0])].rest_area);
    model.hinges.push_back(hinge);
  }

  // Attachments.
  std::vector<double> attachment_stiffness;
  for (std::size_t a = 0; a < spec.attachments.size(); ++a) {
    const AttachmentSpec& attachment = spec.attachments[a];
    check_node(attachment.node, n, message("attachment ", a));
    for (const double v : attachment.target) check_finite(v, message("attachment ", a, " target"));
    model.attachment_nodes.push_back(attachment.node);
    model.attachment_targets.push_back(attachment.target);
    attachment_stiffness.push_back(attachment.stiffness);
  }
  layout.attachment_stiffness = add_slice(layout, theta, "attachment_stiffness", attachment_stiffness);

  // Contact.
  model.contact = spec.contact;
  if (!(spec.contact.barrier_distance > 0.0)) throw Error(message("contact: barrier_distance must be positive, got ", spec.contact.barrier_distance));
  if (!(spec.contact.friction_velocity > 0.0)) throw Error(message("contact: friction_velocity must be positive, got ", spec.contact.friction_velocity));
  layout.contact_stiffness = add_slice(layout, theta, "contact_stiffness", std::array{spec.contact.stiffness});
  // Moving frames (rigid bodies' poses): their poses are θ slices.
  std::map<std::string, int> frame_index;
  for (const FrameSpec& frame : spec.frames) {
    if (frame.name.empty() || !frame_index.emplace(frame.name, static_cast<int>(model.frames.size())).second)
      throw Error(message("frame '", frame.name, "': empty or duplicate name"));
    for (const double v : frame.position) check_finite(v, message("frame '", frame.name, "' position"));
    model.frames.push_back(frame.name);
  }
  const auto find_frame = [&](const std::string& name, const std::string& what) {
    const auto found = frame_index.find(name);
    if (found == frame_index.end()) {
      std::string known;
      for (const auto& [known_name, index] : frame_index) known += (known.empty() ? "" : ", ") + known_name;
      throw Error(message(what, ": unknown frame '", name, "' (frames: ", known.empty() ? std::string("none") : known, ")"));
    }
    return found->second;
  };
  for (const ObstacleSpec& obstacle : spec.obstacles) {
    const std::string what = message("obstacle '", obstacle.name, "'");
    if (obstacle.name.empty() || !names.insert("obstacle:" + obstacle.name).second)
      throw Error(message(what, ": empty or duplicate name"));
    Obstacle built_obstacle{obstacle.name, obstacle.type, obstacle.point, obstacle.normal, obstacle.radius};
    for (const double v : obstacle.point) check_finite(v, what + " point");
    if (!obstacle.frame.empty()) built_obstacle.frame = find_frame(obstacle.frame, what);
    switch (obstacle.type) {
      case ObstacleType::Plane: {
        const double length = distance(obstacle.normal, Vector3{0, 0, 0});
        if (!(length > 0.0) || !std::isfinite(length)) throw Error(message(what, ": plane normal must be nonzero"));
        for (double& v : built_obstacle.normal) v /= length;
        break;
      }
      case ObstacleType::Sphere:
        if (!(obstacle.radius > 0.0) || !std::isfinite(obstacle.radius))
          throw Error(message(what, ": sphere radius must be positive, got ", obstacle.radius));
        break;
      case ObstacleType::Box: {
        const double smallest = std::min({obstacle.half_extents[0], obstacle.half_extents[1], obstacle.half_extents[2]});
        for (int r = 0; r < 3; ++r)
          if (!(obstacle.half_extents[static_cast<std::size_t>(r)] > 0.0) || !std::isfinite(obstacle.half_extents[static_cast<std::size_t>(r)]))
            throw Error(message(what, ": box half_extents must be positive, got [", obstacle.half_extents[0], ", ",
                                obstacle.half_extents[1], ", ", obstacle.half_extents[2], "]"));
        if (!(obstacle.rounding >= 0.0 && obstacle.rounding < smallest))
          throw Error(message(what, ": box rounding must be in [0, smallest half extent ", smallest, "), got ", obstacle.rounding));
        built_obstacle.rotation = rotation_matrix(obstacle.orientation, what);
        built_obstacle.rounding = obstacle.rounding;
        for (int r = 0; r < 3; ++r)
          built_obstacle.half_extents[static_cast<std::size_t>(r)] = obstacle.half_extents[static_cast<std::size_t>(r)] - obstacle.rounding;
        break;
      }
      case ObstacleType::Capsule:
        if (!(obstacle.radius > 0.0) || !std::isfinite(obstacle.radius))
          throw Error(message(what, ": capsule radius must be positive, got ", obstacle.radius));
        if (!(obstacle.half_length >= 0.0) || !std::isfinite(obstacle.half_length))
          throw Error(message(what, ": capsule half_length must be ≥ 0, got ", obstacle.half_length));
        built_obstacle.rotation = rotation_matrix(obstacle.orientation, what);
        built_obstacle.half_length = obstacle.half_length;
        break;
    }
    model.obstacles.push_back(built_obstacle);
    layout.obstacle_friction.push_back(add_slice(layout, theta, "obstacle/" + obstacle.name + "/friction", std::array{obstacle.friction}));
  }
  for (const FrameSpec& frame : spec.frames) {
    const auto pose = pose_values(frame.position, rotation_matrix(frame.orientation, message("frame '", frame.name, "'")));
    layout.frame_pose.push_back(add_slice(layout, theta, "frame/" + frame.name + "/pose", pose));
    layout.frame_previous_pose.push_back(add_slice(layout, theta, "frame/" + frame.name + "/previous_pose", pose));
  }
  std::vector<double> frame_attachment_stiffness;
  for (std::size_t a = 0; a < spec.frame_attachments.size(); ++a) {
    const FrameAttachmentSpec& attachment = spec.frame_attachments[a];
    const std::string what = message("frame attachment ", a);
    check_node(attachment.node, n, what);
    for (const double v : attachment.point) check_finite(v, what + " point");
    model.frame_attachment_nodes.push_back(attachment.node);
    model.frame_attachment_frames.push_back(find_frame(attachment.frame, what));
    model.frame_attachment_points.push_back(attachment.point);
    frame_attachment_stiffness.push_back(attachment.stiffness);
  }
  layout.frame_attachment_stiffness = add_slice(layout, theta, "frame_attachment_stiffness", frame_attachment_stiffness);
  model.newton = spec.newton;
  if (spec.newton.max_iterations < 1 || !(spec.newton.tolerance > 0.0))
    throw Error(message("newton: max_iterations must be ≥ 1 and tolerance positive, got ", spec.newton.max_iterations, " and ", spec.newton.tolerance));

  // Lumped mass sources per node.
  std::vector<std::vector<std::pair<int, double>>> sources(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) sources[static_cast<std::size_t>(i)].push_back({layout.node_mass + i, 1.0});
  const auto add_share = [&](int node, int param, double share) {
    auto& list = sources[static_cast<std::size_t>(node)];
    for (auto& [existing, value] : list)
      if (existing == param) {
        value += share;
        return;
      }
    list.push_back({param, share});
  };
  for (const TetElement& tet : model.tets)
    for (const int node : tet.nodes) add_share(node, layout.tet_density[static_cast<std::size_t>(tet.material)], tet.rest_volume / 4.0);
  for (const TriangleElement& triangle : model.triangles)
    for (const int node : triangle.nodes)
      add_share(node, layout.cloth_areal_density[static_cast<std::size_t>(triangle.material)], triangle.rest_area / 3.0);
  model.mass_begin.push_back(0);
  for (const auto& list : sources) {
    for (const auto& [param, share] : list) {
      model.mass_param.push_back(param);
      model.mass_share.push_back(share);
    }
    model.mass_begin.push_back(static_cast<int>(model.mass_param.size()));
  }

  validate_soft_params(model, built.params);
  built.state.positions = model.rest_positions;
  built.state.velocities.assign(static_cast<std::size_t>(3 * n), 0.0);
  for (std::size_t i = 0; i < spec.initial_velocities.size(); ++i)
    for (std::size_t r = 0; r < 3; ++r) built.state.velocities[3 * i + r] = spec.initial_velocities[i][r];
  prepare_soft_state(model, built.state);
  return built;
}

void lumped_masses(const SoftModel& model, const SoftParams& params, std::span<double> masses) {
  for (int i = 0; i < model.node_count; ++i) {
    double m = 0.0;
    for (int k = model.mass_begin[static_cast<std::size_t>(i)]; k < model.mass_begin[static_cast<std::size_t>(i) + 1]; ++k)
      m += params.values[static_cast<std::size_t>(model.mass_param[static_cast<std::size_t>(k)])] * model.mass_share[static_cast<std::size_t>(k)];
    masses[static_cast<std::size_t>(i)] = m;
  }
}

void validate_soft_params(const SoftModel& model, const SoftParams& params) {
  if (static_cast<int>(params.values.size()) != model.param_count())
    throw Error(message("soft params: expected ", model.param_count(), " values, got ", params.values.size()));
  const SoftParamLayout& layout = model.layout;
  for (const SoftParamLayout::Slice& slice : layout.slices)
    for (int k = 0; k < slice.size; ++k)
      check_finite(params.values[static_cast<std::size_t>(slice.offset + k)], message("parameter ", slice.name, "[", k, "]"));
  const auto at = [&](int index) { return params.values[static_cast<std::size_t>(index)]; };
  const auto require = [&](bool ok, int index, const char* rule) {
    if (ok) return;
    for (const SoftParamLayout::Slice& slice : layout.slices)
      if (index >= slice.offset && index < slice.offset + slice.size)
        throw Error(message("parameter ", slice.name, slice.size > 1 ? message("[", index - slice.offset, "]") : std::string(),
                            ": ", rule, ", got ", at(index)));
    throw Error(message("parameter ", index, ": ", rule, ", got ", at(index)));
  };
  for (int i = 0; i < model.node_count; ++i) require(at(layout.node_mass + i) >= 0.0, layout.node_mass + i, "must be ≥ 0");
  for (std::size_t s = 0; s < model.springs.size(); ++s) {
    const int k = static_cast<int>(s);
    require(at(layout.spring_stiffness + k) >= 0.0, layout.spring_stiffness + k, "must be ≥ 0");
    require(at(layout.spring_rest_length + k) >= 0.0, layout.spring_rest_length + k, "must be ≥ 0");
    require(at(layout.spring_damping + k) >= 0.0, layout.spring_damping + k, "must be ≥ 0");
  }
  for (std::size_t m = 0; m < model.tet_materials.size(); ++m) {
    require(at(layout.tet_youngs_modulus[m]) > 0.0, layout.tet_youngs_modulus[m], "must be positive");
    const double nu = at(layout.tet_poisson_ratio[m]);
    require(nu > -1.0 && nu < 0.5, layout.tet_poisson_ratio[m], "must be in (−1, 0.5)");
    require(at(layout.tet_density[m]) >= 0.0, layout.tet_density[m], "must be ≥ 0");
    require(at(layout.tet_damping[m]) >= 0.0, layout.tet_damping[m], "must be ≥ 0");
  }
  for (std::size_t m = 0; m < model.cloth_materials.size(); ++m) {
    require(at(layout.cloth_stretch_modulus[m]) > 0.0, layout.cloth_stretch_modulus[m], "must be positive");
    const double nu = at(layout.cloth_poisson_ratio[m]);
    require(nu > -1.0 && nu < 0.5, layout.cloth_poisson_ratio[m], "must be in (−1, 0.5)");
    require(at(layout.cloth_bending_stiffness[m]) >= 0.0, layout.cloth_bending_stiffness[m], "must be ≥ 0");
    require(at(layout.cloth_areal_density[m]) >= 0.0, layout.cloth_areal_density[m], "must be ≥ 0");
  }
  for (std::size_t a = 0; a < model.attachment_nodes.size(); ++a)
    require(at(layout.attachment_stiffness + static_cast<int>(a)) >= 0.0, layout.attachment_stiffness + static_cast<int>(a), "must be ≥ 0");
  require(at(layout.contact_stiffness) > 0.0, layout.contact_stiffness, "must be positive");
  for (const int index : layout.obstacle_friction) require(at(index) >= 0.0, index, "must be ≥ 0");
  for (std::size_t a = 0; a < model.frame_attachment_nodes.size(); ++a)
    require(at(layout.frame_attachment_stiffness + static_cast<int>(a)) >= 0.0,
            layout.frame_attachment_stiffness + static_cast<int>(a), "must be ≥ 0");
  // Frame poses: R must be a rotation (RᵀR = I within 10⁻⁶; the distances assume it).
  for (std::size_t f = 0; f < model.frames.size(); ++f)
    for (const int offset : {layout.frame_pose[f], layout.frame_previous_pose[f]})
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          double product = 0.0;
          for (int r = 0; r < 3; ++r) product += at(offset + 3 + 3 * r + i) * at(offset + 3 + 3 * r + j);
          require(std::abs(product - (i == j ? 1.0 : 0.0)) <= 1e-6, offset + 3 + 3 * i + j,
                  "the rotation of a frame pose must be orthonormal (RᵀR = I within 1e-6)");
        }
  std::vector<double> masses(static_cast<std::size_t>(model.node_count));
  lumped_masses(model, params, masses);
  for (int i = 0; i < model.node_count; ++i)
    if (!model.pinned[static_cast<std::size_t>(i)] && !(masses[static_cast<std::size_t>(i)] > 0.0))
      throw Error(message("node ", i, ": a free node needs a positive mass (node_mass, or a tet or triangle with positive density), got ",
                          masses[static_cast<std::size_t>(i)], " kg"));
}

std::span<double> SoftParams::slice(const SoftModel& model, std::string_view name) {
  for (const SoftParamLayout::Slice& s : model.layout.slices)
    if (s.name == name) return std::span<double>(values).subspan(static_cast<std::size_t>(s.offset), static_cast<std::size_t>(s.size));
  throw Error(message("soft params: no slice named '", name, "'"));
}
std::span<const double> SoftParams::slice(const SoftModel& model, std::string_view name) const {
  return const_cast<SoftParams*>(this)->slice(model, name);
}

void set_frame_pose(const SoftModel& model, SoftParams& params, int frame, const Vector3& position,
                    const std::array<double, 4>& orientation, bool previous) {
  if (frame < 0 || frame >= static_cast<int>(model.frames.size()))
    throw Error(message("set_frame_pose: unknown frame index ", frame, " (the model has ", model.frames.size(), " frames)"));
  // Coupled steps set the poses at every step: check without building the messages, which
  // name the frame (and allocate), unless a value is bad.
  bool valid = true;
  for (const double v : position) valid = valid && std::isfinite(v);
  double norm = 0.0;
  for (const double v : orientation) norm += v * v;
  valid = valid && std::sqrt(norm) > 0.0 && std::isfinite(std::sqrt(norm));
  if (!valid) {
    const std::string what = message("frame '", model.frames[static_cast<std::size_t>(frame)], "'");
    for (const double v : position) check_finite(v, what + " position");
    rotation_matrix(orientation, what);  // throws, naming the frame
  }
  static const std::string unnamed;  // not used: the orientation is valid
  const auto pose = pose_values(position, rotation_matrix(orientation, unnamed));
  const int offset = previous ? model.layout.frame_previous_pose[static_cast<std::size_t>(frame)]
                              : model.layout.frame_pose[static_cast<std::size_t>(frame)];
  std::copy(pose.begin(), pose.end(), params.values.begin() + offset);
}

void prepare_soft_state(const SoftModel& model, SoftState& state) {
  const auto dofs = static_cast<std::size_t>(model.dof_count());
  if (state.positions.size() != dofs || state.velocities.size() != dofs)
    throw Error(message("soft state: expected ", dofs, " position and velocity values (3 per node), got ",
                        state.positions.size(), " and ", state.velocities.size()));
  for (std::size_t k = 0; k < dofs; ++k) {
    check_finite(state.positions[k], message("node ", k / 3, " position"));
    check_finite(state.velocities[k], message("node ", k / 3, " velocity"));
  }
  for (int i = 0; i < model.node_count; ++i) {
    if (!model.pinned[static_cast<std::size_t>(i)]) continue;
    for (int r = 0; r < 3; ++r) {
      state.positions[static_cast<std::size_t>(3 * i + r)] = model.rest_positions[static_cast<std::size_t>(3 * i + r)];
      state.velocities[static_cast<std::size_t>(3 * i + r)] = 0.0;
    }
  }
  for (int i = 0; i < model.node_count; ++i)
    for (const Obstacle& obstacle : model.obstacles) {
      if (obstacle.frame >= 0) continue;  // moving: checked by the step at the frame's pose
      const double d = shape_distance(obstacle, load3(state.positions.data() + 3 * i), static_cast<V3<double>*>(nullptr));
      if (!(d > 0.0))
        throw Error(message("node ", i, " is at distance ", d, " m from obstacle '", obstacle.name,
                            "': every node must start strictly outside every obstacle"));
    }
}

Vector3 soft_momentum(const SoftModel& model, const SoftParams& params, const SoftState& state) {
  std::vector<double> masses(static_cast<std::size_t>(model.node_count));
  lumped_masses(model, params, masses);
  Vector3 p{0, 0, 0};
  for (int i = 0; i < model.node_count; ++i)
    for (int r = 0; r < 3; ++r) p[static_cast<std::size_t>(r)] += masses[static_cast<std::size_t>(i)] * state.velocities[static_cast<std::size_t>(3 * i + r)];
  return p;
}

SoftEnergies soft_energies(const SoftModel& model, const SoftParams& params, const SoftState& state) {
  std::vector<double> masses(static_cast<std::size_t>(model.node_count));
  lumped_masses(model, params, masses);
  SoftEnergies energies;
  const double* g = params.values.data() + model.layout.gravity;
  for (int i = 0; i < model.node_count; ++i)
    for (int r = 0; r < 3; ++r) {
      const auto k = static_cast<std::size_t>(3 * i + r);
      energies.kinetic += 0.5 * masses[static_cast<std::size_t>(i)] * state.velocities[k] * state.velocities[k];
      energies.gravity -= masses[static_cast<std::size_t>(i)] * g[r] * state.positions[k];
    }
  const TermInputs inputs{model, params.values, state.positions, state.positions, model.dt, false};
  for (const auto& term : make_energy_terms(model)) {
    const double e = term->energy(inputs);
    (term->kind() == EnergyTerm::Kind::Contact ? energies.contact : energies.elastic) += e;
  }
  energies.total_potential = energies.gravity + energies.elastic + energies.contact;
  return energies;
}

}  // namespace diffphys::soft
