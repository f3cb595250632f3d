// tests/robot_test_helpers.hpp — what the URDF and MJCF loader tests share: the test data
// folder, loader warnings, a body's world inertia tensor (and, through test_scenes.hpp, the
// message of a thrown Error).
#pragma once

#include "test_paths.hpp"
#include <algorithm>
#include <filesystem>
#include <string>

#include "diffphys/error.hpp"
#include "diffphys/model_builder.hpp"
#include "test_scenes.hpp"

namespace diffphys::testing {

inline const std::filesystem::path kRobotData = std::filesystem::path(test_paths::source_dir()) / "tests/data/robots";

inline bool any_warning_contains(const Scene& scene, const std::string& text) {
  return std::any_of(scene.warnings.begin(), scene.warnings.end(),
                     [&](const std::string& warning) { return warning.find(text) != std::string::npos; });
}

// World-frame inertia tensor of body b: R diag(I) Rᵀ with R the principal axes in the world.
inline Mat3 world_inertia(const Scene& scene, int b) {
  const auto i = static_cast<std::size_t>(b);
  const Mat3 rotation = (scene.state.orientation[i] * scene.model.bodies[i].principal_frame).to_matrix();
  return rotation * Mat3::diagonal(scene.params.vec3_at(scene.model.layout.body_inertia[i])) * rotation.transposed();
}

}  // namespace diffphys::testing
