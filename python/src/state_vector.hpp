// python/src/state_vector.hpp — the flat state vector of the Python module: 13 numbers per
// body, [p (3), q (w, x, y, z), v (3), ω (3)], bodies in model order (the world included).
// Shared by State.to_vector/from_vector and Simulator.run(); a rigid world's flat state
// (pack_state, WorldRollout.states()) is the same vector.
#pragma once

#include <cstddef>
#include <span>

#include "diffphys/state.hpp"

namespace diffphys::python {

inline constexpr int kStateVectorPerBody = 13;

inline void write_state_vector(const State& state, std::span<double> out) {
  for (std::size_t b = 0; b < state.position.size(); ++b) {
    double* row = out.data() + kStateVectorPerBody * b;
    const Vec3& p = state.position[b];
    const Quat& q = state.orientation[b];
    const Vec3& v = state.linear_velocity[b];
    const Vec3& w = state.angular_velocity[b];
    row[0] = p.x, row[1] = p.y, row[2] = p.z;
    row[3] = q.w, row[4] = q.x, row[5] = q.y, row[6] = q.z;
    row[7] = v.x, row[8] = v.y, row[9] = v.z;
    row[10] = w.x, row[11] = w.y, row[12] = w.z;
  }
}

// `state` must already have vector.size() / 13 bodies.
inline void read_state_vector(std::span<const double> vector, State& state) {
  for (std::size_t b = 0; b < state.position.size(); ++b) {
    const double* row = vector.data() + kStateVectorPerBody * b;
    state.position[b] = {row[0], row[1], row[2]};
    state.orientation[b] = {row[3], row[4], row[5], row[6]};
    state.linear_velocity[b] = {row[7], row[8], row[9]};
    state.angular_velocity[b] = {row[10], row[11], row[12]};
  }
}

}  // namespace diffphys::python
