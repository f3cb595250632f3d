// model/scale_limits.cpp — the build-time refusal of meaningless scales (model/scale_limits.hpp).
#include "model/scale_limits.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "diffphys/error.hpp"

namespace diffphys {

// A named namespace: the library is a unity build, and these short names exist elsewhere.
namespace scale_limits {

bool is_dynamic(const Model& model, int body) {
  return model.bodies[static_cast<std::size_t>(body)].type == BodyType::Dynamic;
}

double body_mass(const Model& model, const Params& params, int body) {
  return params.at(model.layout.body_mass[static_cast<std::size_t>(body)]);
}

// max/min of two positive masses.
double mass_ratio(double a, double b) {
  return std::max(a, b) / std::min(a, b);
}

// Does any shape of body a pass the collision filter of any shape of body b? (The body-pair
// exclusions are checked by the caller; this is the group/mask part of collision/detect_contacts.)
bool shapes_may_touch(const Model& model, int a, int b) {
  const Body& body_a = model.bodies[static_cast<std::size_t>(a)];
  const Body& body_b = model.bodies[static_cast<std::size_t>(b)];
  for (int i = body_a.first_shape; i < body_a.first_shape + body_a.shape_count; ++i)
    for (int j = body_b.first_shape; j < body_b.first_shape + body_b.shape_count; ++j) {
      const Shape& si = model.shapes[static_cast<std::size_t>(i)];
      const Shape& sj = model.shapes[static_cast<std::size_t>(j)];
      if ((si.collision_group & sj.collision_mask) != 0 && (sj.collision_group & si.collision_mask) != 0) return true;
    }
  return false;
}

[[noreturn]] void refuse_ratio(const std::string& item, const Model& model, int a, int b, double mass_a,
                               double mass_b) {
  throw Error(message(item, ": mass ratio ", mass_ratio(mass_a, mass_b), " between body '",
                      model.bodies[static_cast<std::size_t>(a)].name, "' (", mass_a, " kg) and body '",
                      model.bodies[static_cast<std::size_t>(b)].name, "' (", mass_b, " kg) is above ", kMaxMassRatio,
                      ", beyond what double precision can step (docs/robustness.md, \"State health\")"));
}

}  // namespace scale_limits

void validate_scales(const Model& model, const Params& params, const State& state) {
  if (model.dt > kMaxTimeStep)
    throw Error(message("dt: ", model.dt, " s is longer than ", kMaxTimeStep,
                        " s, the longest step diffphys takes (no contact, joint or fall is resolved by it)"));

  for (int b = 1; b < model.body_count(); ++b) {
    const Vec3& position = state.position[static_cast<std::size_t>(b)];
    for (int d = 0; d < 3; ++d)
      if (std::abs(position[d]) > kMaxPosition)
        throw Error(message("body '", model.bodies[static_cast<std::size_t>(b)].name, "': position ", position[d],
                            " m is further than ", kMaxPosition,
                            " m from the origin, where doubles no longer resolve contacts and joints; move the scene "
                            "towards the origin"));
  }

  // Joined bodies: every joint between two dynamic bodies, whether or not they may collide.
  for (const Joint& joint : model.joints) {
    if (!scale_limits::is_dynamic(model, joint.parent) || !scale_limits::is_dynamic(model, joint.child)) continue;
    const double parent_mass = scale_limits::body_mass(model, params, joint.parent);
    const double child_mass = scale_limits::body_mass(model, params, joint.child);
    if (scale_limits::mass_ratio(parent_mass, child_mass) > kMaxMassRatio)
      scale_limits::refuse_ratio("joint '" + joint.name + "'", model, joint.parent, joint.child, parent_mass,
                                 child_mass);
  }

  // Bodies that may touch: dynamic, with shapes, not excluded as a pair, passing the filter.
  // The ratio test comes first, so a scene of sane masses does no more than n²/2 divisions.
  std::vector<std::pair<int, int>> excluded = model.collision_exclusions;
  for (const Joint& joint : model.joints)
    if (!joint.collide_connected)
      excluded.emplace_back(std::min(joint.parent, joint.child), std::max(joint.parent, joint.child));
  std::sort(excluded.begin(), excluded.end());
  std::vector<int> shaped;
  for (int b = 1; b < model.body_count(); ++b)
    if (scale_limits::is_dynamic(model, b) && model.bodies[static_cast<std::size_t>(b)].shape_count > 0)
      shaped.push_back(b);
  for (std::size_t i = 0; i < shaped.size(); ++i)
    for (std::size_t j = i + 1; j < shaped.size(); ++j) {
      const int a = shaped[i], b = shaped[j];
      const double mass_a = scale_limits::body_mass(model, params, a),
                   mass_b = scale_limits::body_mass(model, params, b);
      if (scale_limits::mass_ratio(mass_a, mass_b) <= kMaxMassRatio) continue;
      if (std::binary_search(excluded.begin(), excluded.end(), std::pair<int, int>{a, b})) continue;
      if (!scale_limits::shapes_may_touch(model, a, b)) continue;
      // Named by the lighter body: the one whose state the ratio ruins.
      if (mass_a <= mass_b)
        scale_limits::refuse_ratio("body '" + model.bodies[static_cast<std::size_t>(a)].name + "'", model, a, b, mass_a,
                                   mass_b);
      scale_limits::refuse_ratio("body '" + model.bodies[static_cast<std::size_t>(b)].name + "'", model, b, a, mass_b,
                                 mass_a);
    }
}

}  // namespace diffphys
