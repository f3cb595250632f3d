// camera/world_camera.cpp — WorldCamera (diffphys/world_camera.hpp): a world's camera drawn from
// a WorldState and WorldParams through the rigid part's CameraRenderer, its gradients moved
// into the world's tangent and parameter layouts (the rigid slices come first in each:
// docs/architecture.md, so the rigid gradients are copied to offset 0).
#include "diffphys/world_camera.hpp"

#include <algorithm>

#include "diffphys/error.hpp"
#include "diffphys/world.hpp"

namespace diffphys {

namespace {

// The rigid model that world camera `name` draws; refused for a world without a rigid part.
const Model& drawn_model(const World& world, std::string_view name) {
  const Camera& camera = world.cameras[static_cast<std::size_t>(world_camera_index(world, name))];
  if (!world.has_rigid())
    throw Error(message("world '", world.name, "': camera '", camera.name,
                        "' draws rigid shapes and the world has no rigid part (soft bodies are not drawn)"));
  return world.rigid->model;
}

}  // namespace

int world_camera_index(const World& world, std::string_view name) {
  std::string names;
  for (std::size_t i = 0; i < world.cameras.size(); ++i) {
    if (world.cameras[i].name == name) return static_cast<int>(i);
    names += (i > 0 ? ", '" : "'") + world.cameras[i].name + "'";
  }
  throw Error(message("world '", world.name, "': no camera '", name, "' (",
                      names.empty() ? "the scene has no \"cameras\" list" : "its cameras: " + names, ")"));
}

Appearance world_camera_appearance(const World& world, int index) {
  if (index < 0 || index >= static_cast<int>(world.cameras.size()))
    throw Error(message("world '", world.name, "': camera index ", index, " is not one of its ", world.cameras.size(),
                        " cameras"));
  if (static_cast<std::size_t>(index) < world.camera_appearances.size())
    return world.camera_appearances[static_cast<std::size_t>(index)];
  return world.has_rigid() ? default_appearance(world.rigid->model) : Appearance{};
}

WorldCamera::WorldCamera(const World& world, std::string_view name, int threads)
    : world_(world),
      renderer_(drawn_model(world, name), world.cameras[static_cast<std::size_t>(world_camera_index(world, name))],
                world_camera_appearance(world, world_camera_index(world, name)), threads) {
  rigid_params_.values.resize(static_cast<std::size_t>(world.layout().soft_param_offset));
}

void WorldCamera::load_params(const WorldParams& params, const WorldState& state) {
  const WorldLayout& layout = world_.layout();
  if (params.values.size() != static_cast<std::size_t>(layout.param_count))
    throw Error(message("camera '", camera().name, "': θ has ", params.values.size(), " values, world '", world_.name,
                        "' has ", layout.param_count));
  if (state.rigid.body_count() != world_.rigid->model.body_count())
    throw Error(message("camera '", camera().name, "': the state has ", state.rigid.body_count(),
                        " rigid bodies, world '", world_.name, "' has ", world_.rigid->model.body_count()));
  std::copy_n(params.values.begin(), rigid_params_.values.size(), rigid_params_.values.begin());
}

void WorldCamera::render(const WorldParams& params, const WorldState& state, CameraImage& image) {
  load_params(params, state);
  renderer_.render(rigid_params_, state.rigid, image);
}

void WorldCamera::backward(const WorldParams& params, const WorldState& state, const CameraImage& image_gradient,
                           WorldCameraGradients& gradients) {
  load_params(params, state);
  renderer_.backward(rigid_params_, state.rigid, image_gradient, rigid_gradients_);
  const WorldLayout& layout = world_.layout();
  // The rigid slices open both vectors; the soft ones stay zero (the camera does not see them).
  gradients.state.assign(static_cast<std::size_t>(layout.tangent_size), 0.0);
  std::copy(rigid_gradients_.state.begin(), rigid_gradients_.state.end(), gradients.state.begin());
  gradients.params.assign(static_cast<std::size_t>(layout.param_count), 0.0);
  std::copy(rigid_gradients_.params.begin(), rigid_gradients_.params.end(), gradients.params.begin());
  gradients.camera_position = rigid_gradients_.camera_position;
  gradients.camera_rotation = rigid_gradients_.camera_rotation;
  gradients.vertical_fov = rigid_gradients_.vertical_fov;
  gradients.colours = rigid_gradients_.colours;
  gradients.textures = rigid_gradients_.textures;
}

}  // namespace diffphys
