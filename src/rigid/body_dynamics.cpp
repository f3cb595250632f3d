// rigid/body_dynamics.cpp — see body_dynamics.hpp.
#include "rigid/body_dynamics.hpp"

namespace diffphys::rigid {

Mat3 body_frame_inertia(const Model& model, const Params& params, int body) {
  const auto b = static_cast<std::size_t>(body);
  const Mat3 principal = model.bodies[b].principal_frame.to_matrix();
  return principal * Mat3::diagonal(params.vec3_at(model.layout.body_inertia[b])) * principal.transposed();
}

void compute_body_dynamics(const Model& model, const Params& params, const State& state, BodyDynamics& bodies) {
  const auto n = static_cast<std::size_t>(model.body_count());
  bodies.rotation.resize(n);
  bodies.inverse_mass.resize(n);
  bodies.inertia_world.resize(n);
  bodies.inverse_inertia_world.resize(n);
  for (std::size_t b = 0; b < n; ++b) {
    const Mat3 rotation = state.orientation[b].to_matrix();
    bodies.rotation[b] = rotation;
    if (model.bodies[b].type != BodyType::Dynamic) {
      bodies.inverse_mass[b] = 0.0;
      bodies.inertia_world[b] = Mat3{};
      bodies.inverse_inertia_world[b] = Mat3{};
      continue;
    }
    bodies.inverse_mass[b] = 1.0 / params.at(model.layout.body_mass[b]);
    // R R_p diag(I) R_pᵀ Rᵀ: rotate the principal axes into the world once.
    const Mat3 axes = rotation * model.bodies[b].principal_frame.to_matrix();
    const Vec3 moments = params.vec3_at(model.layout.body_inertia[b]);
    bodies.inertia_world[b] = axes * Mat3::diagonal(moments) * axes.transposed();
    bodies.inverse_inertia_world[b] =
        axes * Mat3::diagonal({1.0 / moments.x, 1.0 / moments.y, 1.0 / moments.z}) * axes.transposed();
  }
}

}  // namespace diffphys::rigid
