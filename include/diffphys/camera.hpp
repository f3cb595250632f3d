// diffphys/camera.hpp — a differentiable pinhole camera: renders the rigid state's shapes
// (planes, spheres, boxes, capsules, cylinders, convex meshes) by ray casting, colour and
// depth, and returns the exact gradient of a loss on the image with
// respect to the body poses, the shape sizes, the camera's pose and field of view, and the
// shapes' colours and textures (docs/camera.md).
//
//   CameraRenderer renderer(model, camera, appearance, /*threads=*/2);
//   renderer.render(params, state, image);                  // image.colour, image.depth
//   renderer.backward(params, state, dL_dimage, gradients);  // same layout as the image
//
// Why ray casting with soft edges: a ray-cast image is exact per pixel but piecewise constant
// at silhouettes, where the gradient of a pose vanishes almost everywhere. Each shape's
// coverage of a pixel is therefore a C¹ ramp of the ray's signed distance to the shape's
// outline, in pixels (docs/camera.md gives the function and where it is not smooth).
//
// Frames (monogram notation, docs/camera.md): the camera frame C looks along its +z axis,
// +x to the right of the image and +y down it (image rows grow downwards); X_WC is its pose
// in the world, or X_BC in body B's frame when attached. Pixel (i, j) is column i, row j;
// its centre (i + ½, j + ½) sees the direction (i + ½ − W/2, j + ½ − H/2, focal) in C, with
// focal = (H/2) / tan(fov/2) pixels.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "diffphys/math.hpp"

namespace diffphys {

class Model;
struct Params;
struct State;

struct Camera {
  std::string name = "camera";
  int body = -1;                // -1: fixed in the world; else the index of the body carrying it
  Vec3 position;                // p_WC (or p_BC when attached to a body; the body origin is its centre of mass), m
  Quat orientation;             // q_WC (or q_BC): camera frame → world (or body) frame
  double vertical_fov = 1.0;    // rad, in (0, π)
  int width = 64, height = 48;  // pixels
  double far_depth = 100.0;     // depth given to the background (no surface), m
};

// The orientation of a camera at `eye` looking at `target`, the image's up as close to `up`
// as it can be. Throws Error if eye == target or up is parallel to the viewing direction.
Quat camera_look_at(const Vec3& eye, const Vec3& target, const Vec3& up = {0, 0, 1});

// An RGB image of texels, sampled bilinearly and repeated (docs/camera.md, "Textures").
struct Texture {
  int width = 0, height = 0;
  std::vector<double> texels;  // (height × width × 3) RGB, row-major, row 0 first
};

// A checker of cells × cells squares of colours a and b, each texels_per_cell texels wide, so
// that bilinear sampling blurs only a texel's width at each cell border.
Texture checker_texture(int cells, int texels_per_cell, const Vec3& colour_a, const Vec3& colour_b);

// How a shape looks. Colour and texels are not physical parameters: they are differentiated
// (CameraGradients) but live here, not in Params.
struct ShapeLook {
  Vec3 colour{0.7, 0.7, 0.7};  // RGB albedo; a textured shape's texture is tinted by it
  int texture = -1;            // index into Appearance::textures, or -1 (planes only)
  double texture_size = 1.0;   // metres covered by one repeat of the texture along the plane's x and y
};

struct Appearance {
  std::vector<ShapeLook> shapes;  // (nshape) one per model shape
  std::vector<Texture> textures;
  Vec3 light_direction = normalized(Vec3{0.3, 0.5, -1.0});  // direction the light travels, world
  double ambient = 0.3, diffuse = 0.7;
  Vec3 background{0.0, 0.0, 0.0};  // colour where no shape is seen
};

// Default appearance of a model: every shape grey, planes a light grey (no texture).
Appearance default_appearance(const Model& model);

// Image planes, row-major, row 0 at the top.
struct CameraImage {
  int width = 0, height = 0;
  std::vector<double> colour;  // (height × width × 3) RGB
  std::vector<double> depth;   // (height × width) distance along the pixel's ray, m
};

// dL/d(everything the image depends on), for a loss L(image) whose dL/d(colour) and dL/d(depth)
// are given in a CameraImage's layout.
struct CameraGradients {
  // (12 × nbody) the state-tangent layout of docs/gradients.md: rows 0–2 of body b the
  // position, 3–5 a world-frame rotation vector (q' = exp(δθ) ⊗ q); velocity rows are zero.
  // Every body's rows are filled, static ones included.
  std::vector<double> state;
  std::vector<double> params;                 // (param_count) only shape sizes are nonzero
  Vec3 camera_position;                       // dL/dp_WC (world frame, also when attached), per m
  Vec3 camera_rotation;                       // dL/dδθ_C, q_WC' = exp(δθ) ⊗ q_WC, world frame
  double vertical_fov = 0.0;                  // per rad
  std::vector<Vec3> colours;                  // (nshape) dL/d ShapeLook::colour
  std::vector<std::vector<double>> textures;  // (ntexture) each in its Texture::texels layout
};

class CameraRenderer {
 public:
  // Checks the camera (resolution, field of view, finite pose, body index) and the appearance
  // (one look per shape, texture indices and texels); throws Error naming the item and the value. Keeps a
  // reference to `model`, which must outlive the renderer; copies the camera and appearance.
  // `threads` ≥ 1, the calling thread included.
  CameraRenderer(const Model& model, const Camera& camera, const Appearance& appearance, int threads = 1);
  ~CameraRenderer();
  CameraRenderer(const CameraRenderer&) = delete;
  CameraRenderer& operator=(const CameraRenderer&) = delete;

  const Camera& camera() const;
  const Appearance& appearance() const;
  // Replace the camera or the look between frames (the same checks as the constructor); the
  // scratch is kept when the resolution does not change.
  void set_camera(const Camera& camera);
  void set_appearance(const Appearance& appearance);

  // Renders the state. Throws Error if the camera is inside a shape (naming it) or the state
  // or shape sizes are not finite. No allocation once `image` has the camera's size.
  void render(const Params& params, const State& state, CameraImage& image);

  // The exact reverse-mode derivative of render(): given dL/d(image) in `image_gradient`
  // (colour and depth planes; an empty plane counts as zeros), writes dL/d(inputs). The same
  // bits for every thread count.
  void backward(const Params& params, const State& state, const CameraImage& image_gradient,
                CameraGradients& gradients);

 private:
  struct Impl;  // camera/camera_render.cpp
  std::unique_ptr<Impl> impl_;
};

}  // namespace diffphys
