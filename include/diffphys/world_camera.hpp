// diffphys/world_camera.hpp — a world's camera as a sensor of the world: renders one of
// World::cameras from a world state and θ, and maps dL/d(image) back into the world's own
// layouts, so that a loss on rendered frames joins a WorldRollout's backward pass
// (docs/camera.md, "A camera of the world").
//
//   WorldCamera camera(world, "side", /*threads=*/2);    // the scene's camera, with its look
//   camera.render(params, x, image);                      // WorldParams θ, WorldState x
//   camera.backward(params, x, dL_dimage, frame);         // frame.state: tangent layout
//
// In a rollout's loss callback, frame.state is that step's dL/dx_t (add it to dx.all); the
// image also depends on θ directly (the shape sizes), which the callback cannot report, so
// the caller sums frame.params over the frames and adds it to WorldGradients::params:
//
//   std::vector<double> image_params(world.layout().param_count);
//   WorldGradients g = rollout.backward([&](int t, const WorldState& x, WorldStateGradient& dx) {
//     camera.render(params, x, image);  ... dL_dimage from the image ...
//     camera.backward(params, x, dL_dimage, frame);
//     for (i) dx.all[i] += frame.state[i];
//     for (i) image_params[i] += frame.params[i];
//   });
//   for (i) g.params[i] += image_params[i];
//
// Only the rigid part is drawn (soft bodies and cloth are not); a world without a rigid part
// is refused.
#pragma once

#include <string_view>
#include <vector>

#include "diffphys/camera.hpp"
#include "diffphys/params.hpp"

namespace diffphys {

class World;
struct WorldState;
struct WorldParams;

// The index of the camera called `name` in world.cameras. Throws Error naming the world and
// its cameras (or saying it has none).
int world_camera_index(const World& world, std::string_view name);

// How the rigid shapes look to world.cameras[index]: the scene file's look for it, or
// default_appearance of the rigid model when the world has none for it.
Appearance world_camera_appearance(const World& world, int index);

// dL/d(everything a world camera's image depends on).
struct WorldCameraGradients {
  // (layout().tangent_size) dL/dx in the world's tangent layout: each rigid body's rows 0–5
  // (position, world-frame rotation vector; docs/gradients.md); velocity rows and soft rows
  // zero. Static bodies' rows are filled too (a rollout's backward pass zeroes them).
  std::vector<double> state;
  std::vector<double> params;                 // (layout().param_count) dL/dθ: the rigid shape sizes; zero elsewhere
  Vec3 camera_position;                       // dL/dp_WC (world frame, also for a camera carried by a body), per m
  Vec3 camera_rotation;                       // dL/dδθ_C, q_WC' = exp(δθ) ⊗ q_WC, world frame
  double vertical_fov = 0.0;                  // per rad
  std::vector<Vec3> colours;                  // (nshape) dL/d ShapeLook::colour
  std::vector<std::vector<double>> textures;  // (ntexture) each in its Texture::texels layout
};

class WorldCamera {
 public:
  // World camera `name` (world_camera_index) with its look (world_camera_appearance), drawn on
  // `threads` threads (≥ 1, the calling thread included). Keeps a reference to `world`, which
  // must outlive it. Throws Error for an unknown name or a world without a rigid part.
  WorldCamera(const World& world, std::string_view name, int threads = 1);

  const Camera& camera() const { return renderer_.camera(); }
  const Appearance& appearance() const { return renderer_.appearance(); }
  // Another pose, field of view or look between frames (CameraRenderer's checks).
  void set_camera(const Camera& camera) { renderer_.set_camera(camera); }
  void set_appearance(const Appearance& appearance) { renderer_.set_appearance(appearance); }

  // The image of world state `state` under θ `params`. Throws Error for a θ or state of the
  // wrong size, and as CameraRenderer::render. No allocation once `image` has its size.
  void render(const WorldParams& params, const WorldState& state, CameraImage& image);

  // The exact reverse-mode derivative of render() (CameraRenderer::backward) in the world's
  // layouts; `gradients` is overwritten. The same bits for every thread count; no allocation
  // once `gradients` has its sizes.
  void backward(const WorldParams& params, const WorldState& state, const CameraImage& image_gradient,
                WorldCameraGradients& gradients);

 private:
  const World& world_;
  CameraRenderer renderer_;
  Params rigid_params_;              // the rigid slices of the last θ, (rigid param_count)
  CameraGradients rigid_gradients_;  // the renderer's gradients in the rigid layouts

  void load_params(const WorldParams& params, const WorldState& state);
};

}  // namespace diffphys
