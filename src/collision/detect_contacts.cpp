// collision/detect_contacts.cpp — see detect_contacts.hpp.
#include "collision/detect_contacts.hpp"

#include <algorithm>

namespace diffphys::collision {
namespace {

// How many other shapes the partner search examines before it gives up and keeps the shape.
// Small scenes are decided exactly; large ones stay linear (a shape usually finds a partner
// among the first few candidates: the ground, a neighbour).
constexpr int kPartnerScanLimit = 64;

}  // namespace

void excluded_body_pairs(const Model& model, std::vector<std::pair<int, int>>& pairs) {
  pairs.clear();
  for (const Joint& joint : model.joints)
    if (!joint.collide_connected) pairs.emplace_back(std::min(joint.parent, joint.child), std::max(joint.parent, joint.child));
  pairs.insert(pairs.end(), model.collision_exclusions.begin(), model.collision_exclusions.end());
  std::sort(pairs.begin(), pairs.end());
}

bool may_collide(const Model& model, std::span<const std::pair<int, int>> excluded, int shape_i, int shape_j) {
  const Shape& si = model.shapes[static_cast<std::size_t>(shape_i)];
  const Shape& sj = model.shapes[static_cast<std::size_t>(shape_j)];
  if (si.body == sj.body) return false;
  if (model.bodies[static_cast<std::size_t>(si.body)].type != BodyType::Dynamic &&
      model.bodies[static_cast<std::size_t>(sj.body)].type != BodyType::Dynamic)
    return false;
  if ((si.collision_group & sj.collision_mask) == 0 || (sj.collision_group & si.collision_mask) == 0) return false;
  if (excluded.empty()) return true;
  const std::pair<int, int> bodies{std::min(si.body, sj.body), std::max(si.body, sj.body)};
  return !std::binary_search(excluded.begin(), excluded.end(), bodies);
}

PosedShape pose_shape(const Model& model, const Params& params, const State& state, int shape_index) {
  const Shape& shape = model.shapes[static_cast<std::size_t>(shape_index)];
  const auto b = static_cast<std::size_t>(shape.body);
  PosedShape posed;
  posed.type = shape.type;
  posed.orientation = (state.orientation[b] * shape.local_orientation).normalized();
  posed.rotation = posed.orientation.to_matrix();
  posed.position = state.position[b] + state.orientation[b].rotate(shape.local_position);
  const int offset = model.layout.shape_size[static_cast<std::size_t>(shape_index)];
  switch (shape.type) {
    case ShapeType::Sphere: posed.size = {params.at(offset), 0, 0}; break;
    case ShapeType::Box: posed.size = params.vec3_at(offset); break;
    case ShapeType::Capsule: posed.size = {params.at(offset), params.at(offset + 1), 0}; break;
    case ShapeType::Cylinder:
      // Collides as the capsule of the same radius and half length (model.hpp).
      posed.type = ShapeType::Capsule;
      posed.size = {params.at(offset), params.at(offset + 1), 0};
      break;
    case ShapeType::Plane: break;
    case ShapeType::ConvexMesh:
      posed.size = {params.at(offset), 0, 0};
      posed.mesh = &model.meshes[static_cast<std::size_t>(shape.mesh)];
      break;
  }
  return posed;
}

void detect_contacts(const Model& model, const Params& params, const State& state, CollisionWorkspace& ws,
                     std::vector<Contact>& contacts) {
  contacts.clear();
  const double margin = model.solver.contact_margin;
  const int shape_count = model.shape_count();
  ws.posed.resize(static_cast<std::size_t>(shape_count));
  ws.boxes.clear();
  ws.box_shape.clear();
  ws.plane_shapes.clear();

  // Shapes that cannot collide at all: group or mask 0 (the common way to switch a shape off).
  const auto switched_off = [&](int s) {
    const Shape& shape = model.shapes[static_cast<std::size_t>(s)];
    return shape.collision_group == 0 || shape.collision_mask == 0;
  };
  int live = 0;
  for (int s = 0; s < shape_count; ++s) live += switched_off(s) ? 0 : 1;
  if (live < 2) return;

  excluded_body_pairs(model, ws.excluded_body_pairs);
  const auto pair_may_collide = [&](int shape_i, int shape_j) {
    return may_collide(model, ws.excluded_body_pairs, shape_i, shape_j);
  };
  // Keep a shape only if some other shape may collide with it. The search looks at the next
  // kPartnerScanLimit shapes (cyclically) and keeps the shape if it stops there.
  const auto has_partner = [&](int shape) {
    int other = shape;
    for (int examined = 0; examined < kPartnerScanLimit; ++examined) {
      if (++other == shape_count) other = 0;
      if (other == shape) return false;  // every other shape examined
      if (!switched_off(other) && pair_may_collide(shape, other)) return true;
    }
    return true;
  };
  for (int s = 0; s < shape_count; ++s) {
    if (switched_off(s) || !has_partner(s)) continue;
    ws.posed[static_cast<std::size_t>(s)] = pose_shape(model, params, state, s);
    if (model.shapes[static_cast<std::size_t>(s)].type == ShapeType::Plane) {
      ws.plane_shapes.push_back(s);
    } else {
      ws.boxes.push_back(bounding_box(ws.posed[static_cast<std::size_t>(s)], margin));
      ws.box_shape.push_back(s);
    }
  }

  const auto collide_pair = [&](int shape_a, int shape_b) {
    if (!pair_may_collide(shape_a, shape_b)) return;
    ContactPoint points[kMaxPairContacts];
    const int count = collide(ws.posed[static_cast<std::size_t>(shape_a)], ws.posed[static_cast<std::size_t>(shape_b)],
                              margin, points, pair_contact_limit(model.solver));
    for (int k = 0; k < count; ++k) contacts.push_back(contact_from_point(model, shape_a, shape_b, points[k]));
  };

  // Shapes against planes (the dynamic shape is a, so normals point out of the plane).
  for (const int box_index_shape : ws.box_shape)
    for (const int plane : ws.plane_shapes) collide_pair(box_index_shape, plane);
  ws.broad_phase.find_pairs(ws.boxes, ws.pairs);
  for (const auto& [i, j] : ws.pairs)
    collide_pair(ws.box_shape[static_cast<std::size_t>(i)], ws.box_shape[static_cast<std::size_t>(j)]);
}

}  // namespace diffphys::collision
