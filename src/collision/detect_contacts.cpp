// collision/detect_contacts.cpp — see detect_contacts.hpp.
//
// Speculative contacts (Catto, "Speculative contacts", GDC 2013; Box2D's speculative
// distance): a contact row whose gap the step cannot close is inert — the complementarity
// row v_n ≥ −gap/h is met by the free motion and its friction is bounded by its zero normal
// impulse; the convex row's relaxed cone acts only when h·(s_n + μ‖v_t‖) exceeds the gap
// (docs/simulation.md, "Speculative contacts") — so a row generated early costs a little
// solver work and changes nothing, while a row generated late (a point that crosses the
// fixed margin within one step) appears with its force already on: the trajectory then
// depends on which step first sees the contact, and jumps where that step changes.
#include "collision/detect_contacts.hpp"

#include <algorithm>
#include <cmath>

namespace diffphys::collision {
namespace {

// How many other shapes the partner search examines before it gives up and keeps the shape.
// Small scenes are decided exactly; large ones stay linear (a shape usually finds a partner
// among the first few candidates: the ground, a neighbour).
constexpr int kPartnerScanLimit = 64;

// The relaxed cone's reach for a point of the pair per unit time, s_n⁺ + μ‖v_t‖ (m/s): the
// point's velocity on a relative to b at the start of the step, split along the normal
// (which points from b to a, so a closing point has n·v < 0) and across it.
double point_reach_speed(const State& state, int body_a, int body_b, double friction, const ContactPoint& point) {
  const auto a = static_cast<std::size_t>(body_a), b = static_cast<std::size_t>(body_b);
  const Vec3 relative = state.linear_velocity[a] +
                        cross(state.angular_velocity[a], point.position - state.position[a]) -
                        state.linear_velocity[b] - cross(state.angular_velocity[b], point.position - state.position[b]);
  const double normal_speed = dot(point.normal, relative);
  const Vec3 sliding = relative - point.normal * normal_speed;
  return std::max(-normal_speed, 0.0) + friction * norm(sliding);
}

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
    case ShapeType::Box:
    case ShapeType::Ellipsoid: posed.size = params.vec3_at(offset); break;
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
  const double speculative_factor = model.solver.speculative_factor;
  const bool speculative = speculative_factor > 0;
  const int shape_count = model.shape_count();
  ws.posed.resize(static_cast<std::size_t>(shape_count));
  if (speculative) ws.shape_speed.resize(static_cast<std::size_t>(shape_count));
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
  // Speculative reach. A point's threshold is c·(s_n⁺ + μ‖v_t‖) ≤ c·(1 + μ)·|v_rel| with
  // c = speculative_factor·h, and a point midway between the surfaces at gap g lies within
  // ρ_s + g/2 of each shape's centre (ρ_s its bounding radius), so |v_rel| ≤ U + W·g/2 with
  // U the sum of the shapes' speed bounds |v| + |ω|·(distance of the shape's centre from the
  // body's + ρ_s) and W = |ω_a| + |ω_b|. Every point below its threshold therefore has
  // g < c(1 + μ)U / (1 − c(1 + μ)W/2): the pair's reach. The denominator is floored at ½ (a
  // body turning more than 1/(c(1 + μ)) rad per step has left the scale of its shapes).
  double reach_scale = 0.0;  // c·(1 + μ_max)
  double spin_factor = 1.0;  // 1 / (1 − c(1 + μ_max)·max|ω|), at most 2: bounds every pair's
  if (speculative) {
    double max_friction = 0.0, max_spin = 0.0;
    for (int b = 0; b < model.body_count(); ++b) {
      max_friction = std::max(max_friction, params.at(model.layout.body_friction[static_cast<std::size_t>(b)]));
      max_spin = std::max(max_spin, norm(state.angular_velocity[static_cast<std::size_t>(b)]));
    }
    reach_scale = speculative_factor * model.dt * (1.0 + max_friction);
    spin_factor = 1.0 / std::max(0.5, 1.0 - reach_scale * max_spin);
  }
  for (int s = 0; s < shape_count; ++s) {
    if (switched_off(s) || !has_partner(s)) continue;
    const PosedShape& posed = ws.posed[static_cast<std::size_t>(s)] = pose_shape(model, params, state, s);
    double box_margin = margin;
    if (speculative) {
      const auto b = static_cast<std::size_t>(model.shapes[static_cast<std::size_t>(s)].body);
      const double spin = norm(state.angular_velocity[b]);
      double speed = norm(state.linear_velocity[b]);
      if (spin > 0 && posed.type != ShapeType::Plane)
        speed += spin * (norm(posed.position - state.position[b]) + bounding_radius(posed));
      ws.shape_speed[static_cast<std::size_t>(s)] = speed;
      box_margin = std::max(margin, reach_scale * spin_factor * speed);
    }
    if (posed.type == ShapeType::Plane) {
      ws.plane_shapes.push_back(s);
    } else {
      ws.boxes.push_back(bounding_box(posed, box_margin));
      ws.box_shape.push_back(s);
    }
  }

  const int point_limit = pair_contact_limit(model.solver);
  const auto collide_pair = [&](int shape_a, int shape_b) {
    if (!pair_may_collide(shape_a, shape_b)) return;
    const PosedShape& posed_a = ws.posed[static_cast<std::size_t>(shape_a)];
    const PosedShape& posed_b = ws.posed[static_cast<std::size_t>(shape_b)];
    ContactPoint points[kMaxPairContacts];
    int count = collide(posed_a, posed_b, margin, points, point_limit);
    double pair_margin = margin;
    if (speculative) {
      const int body_a = model.shapes[static_cast<std::size_t>(shape_a)].body;
      const int body_b = model.shapes[static_cast<std::size_t>(shape_b)].body;
      const double friction = std::sqrt(params.at(model.layout.body_friction[static_cast<std::size_t>(body_a)]) *
                                        params.at(model.layout.body_friction[static_cast<std::size_t>(body_b)]));
      const double scale = speculative_factor * model.dt * (1.0 + friction);
      const double spin = norm(state.angular_velocity[static_cast<std::size_t>(body_a)]) +
                          norm(state.angular_velocity[static_cast<std::size_t>(body_b)]);
      const double reach =
          scale *
          (ws.shape_speed[static_cast<std::size_t>(shape_a)] + ws.shape_speed[static_cast<std::size_t>(shape_b)]) /
          std::max(0.5, 1.0 - 0.5 * scale * spin);
      if (reach > margin) {
        ContactPoint wide[kMaxPairContacts];
        const int wide_count = collide(posed_a, posed_b, reach, wide, point_limit);
        int kept = 0;
        bool any_speculative = false;
        for (int k = 0; k < wide_count; ++k) {
          const bool within_margin = wide[k].gap < margin;
          if (!within_margin && !(wide[k].gap < speculative_factor * model.dt *
                                                    point_reach_speed(state, body_a, body_b, friction, wide[k])))
            continue;
          any_speculative = any_speculative || !within_margin;
          wide[kept++] = wide[k];
        }
        if (any_speculative) {
          std::copy(wide, wide + kept, points);
          count = kept;
          pair_margin = reach;
        }
      }
    }
    for (int k = 0; k < count; ++k)
      contacts.push_back(contact_from_point(model, shape_a, shape_b, points[k], pair_margin));
  };

  // Shapes against planes (the dynamic shape is a, so normals point out of the plane).
  for (const int box_index_shape : ws.box_shape)
    for (const int plane : ws.plane_shapes) collide_pair(box_index_shape, plane);
  ws.broad_phase.find_pairs(ws.boxes, ws.pairs);
  for (const auto& [i, j] : ws.pairs)
    collide_pair(ws.box_shape[static_cast<std::size_t>(i)], ws.box_shape[static_cast<std::size_t>(j)]);
}

}  // namespace diffphys::collision
