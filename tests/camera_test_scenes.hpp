// tests/camera_test_scenes.hpp — scenes, loss and central differences shared by the camera's
// tests (camera_test.cpp: gradients; camera_closed_form_test.cpp: closed forms, refusals,
// determinism).
#pragma once

#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "diffphys/camera.hpp"
#include "diffphys/convex_mesh.hpp"
#include "diffphys/model_builder.hpp"

namespace camera_test {

using namespace diffphys;

struct CameraSetup {
  Scene scene;
  Camera camera;
  Appearance appearance;
};

inline ShapeSpec shape_spec(ShapeType type, double radius, Vec3 half_extents, double half_length) {
  ShapeSpec spec;
  spec.type = type;
  spec.radius = radius;
  spec.half_extents = half_extents;
  spec.half_length = half_length;
  return spec;
}

// A random unit quaternion near `base` (Gaussian rotation vector of `spread` rad).
inline Quat jitter(std::mt19937& random, double spread) {
  std::normal_distribution<double> normal(0.0, spread);
  return Quat::from_rotation_vector({normal(random), normal(random), normal(random)});
}

// A ground plane (textured), a sphere, a box, a capsule, a cylinder and a convex mesh (the hull
// of 14 points) at random poses around
// fixed places, overlapping in the image at separated depths; part of the view is sky.
inline CameraSetup mixed_scene(unsigned seed, int width = 48, int height = 36) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> wiggle(-0.05, 0.05);
  ModelBuilder builder;
  builder.add_ground_plane();
  struct Placed {
    const char* name;
    ShapeSpec shape;
    Vec3 position;
  };
  const Placed placed[] = {
      {"ball", shape_spec(ShapeType::Sphere, 0.3, {}, 0.0), {0.2, 0.1, 0.6}},
      {"crate", shape_spec(ShapeType::Box, 0.0, {0.25, 0.2, 0.15}, 0.0), {-0.2, 1.0, 0.45}},
      {"pole", shape_spec(ShapeType::Capsule, 0.08, {}, 0.35), {0.7, -0.2, 0.7}},
      {"drum", shape_spec(ShapeType::Cylinder, 0.2, {}, 0.15), {-0.3, -0.55, 0.35}},
      {"rock", shape_spec(ShapeType::ConvexMesh, 0.0, {}, 0.0), {0.9, 0.75, 0.3}},
  };
  std::vector<Vec3> points;
  for (int k = 0; k < 14; ++k)
    points.push_back({0.22 * std::cos(0.7 * k), 0.18 * std::sin(1.3 * k), 0.15 * std::cos(2.1 * k + 0.5)});
  const auto hull = std::make_shared<const ConvexMesh>(convex_hull(points, "rock"));
  for (const Placed& item : placed) {
    BodySpec body;
    body.name = item.name;
    body.position = item.position + Vec3{wiggle(random), wiggle(random), wiggle(random)};
    body.orientation = jitter(random, 0.6);
    ShapeSpec shape = item.shape;
    shape.name = item.name;
    if (shape.type == ShapeType::ConvexMesh) shape.mesh = hull;
    body.shapes.push_back(shape);
    builder.add_body(body);
  }
  CameraSetup setup{builder.build(), Camera{}, Appearance{}};
  setup.camera.name = "test";
  setup.camera.width = width;
  setup.camera.height = height;
  setup.camera.vertical_fov = 50.0 * 3.14159265358979323846 / 180.0;
  setup.camera.position = {2.6, -1.7, 0.9};
  setup.camera.orientation = camera_look_at(setup.camera.position, {0.0, 0.0, 0.5});
  setup.camera.far_depth = 12.0;
  setup.appearance = default_appearance(setup.scene.model);
  const Vec3 colours[] = {{0.8, 0.75, 0.7}, {0.9, 0.2, 0.2}, {0.2, 0.8, 0.3},
                          {0.2, 0.3, 0.9},  {0.9, 0.8, 0.1}, {0.6, 0.4, 0.8}};
  for (std::size_t k = 0; k < setup.appearance.shapes.size(); ++k) setup.appearance.shapes[k].colour = colours[k % 6];
  // The ground carries a small random texture (every texel its own value: a texel mix-up shows).
  Texture texture;
  texture.width = 5;
  texture.height = 4;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int i = 0; i < texture.width * texture.height * 3; ++i) texture.texels.push_back(unit(random));
  setup.appearance.textures.push_back(texture);
  setup.appearance.shapes[0].texture = 0;
  setup.appearance.shapes[0].texture_size = 0.7;
  setup.appearance.background = {0.4, 0.6, 0.9};
  return setup;
}

inline CameraImage render(const CameraSetup& setup, int threads = 1) {
  CameraRenderer renderer(setup.scene.model, setup.camera, setup.appearance, threads);
  CameraImage image;
  renderer.render(setup.scene.params, setup.scene.state, image);
  return image;
}

// One differentiable input of the image: how to move it by h, and where backward() puts
// dL/d(it).
struct Direction {
  std::string name;
  std::function<void(CameraSetup&, double)> move;
  std::function<double(const CameraGradients&)> analytic;
  double step;  // central-difference step, in the input's unit
};

// Every input class of the setup: body positions and rotations (tangent layout, world bodies
// included), shape sizes, the camera's position, rotation and field of view, shape colours
// and `texel_count` texels of each texture spread over it.
inline std::vector<Direction> all_directions(const CameraSetup& setup, int texel_count = 6) {
  std::vector<Direction> directions;
  const Model& model = setup.scene.model;
  const char* axis_name[3] = {"x", "y", "z"};
  for (int b = 0; b < model.body_count(); ++b) {
    const auto row = static_cast<std::size_t>(b) * 12;
    for (int i = 0; i < 3; ++i) {
      directions.push_back(
          {"body " + model.bodies[static_cast<std::size_t>(b)].name + " position " + axis_name[i],
           [b, i](CameraSetup& s, double h) { s.scene.state.position[static_cast<std::size_t>(b)][i] += h; },
           [row, i](const CameraGradients& g) { return g.state[row + static_cast<std::size_t>(i)]; }, 1e-8});
      directions.push_back(
          {"body " + model.bodies[static_cast<std::size_t>(b)].name + " rotation " + axis_name[i],
           [b, i](CameraSetup& s, double h) {
             Vec3 r;
             r[i] = h;
             Quat& q = s.scene.state.orientation[static_cast<std::size_t>(b)];
             q = Quat::from_rotation_vector(r) * q;
           },
           [row, i](const CameraGradients& g) { return g.state[row + 3 + static_cast<std::size_t>(i)]; }, 1e-8});
    }
  }
  for (int k = 0; k < model.shape_count(); ++k) {
    const Shape& shape = model.shapes[static_cast<std::size_t>(k)];
    for (int i = 0; i < shape_size_count(shape.type); ++i) {
      const auto offset = static_cast<std::size_t>(model.layout.shape_size[static_cast<std::size_t>(k)] + i);
      directions.push_back({"shape " + shape.name + " size " + std::to_string(i),
                            [offset](CameraSetup& s, double h) { s.scene.params.values[offset] += h; },
                            [offset](const CameraGradients& g) { return g.params[offset]; }, 1e-8});
    }
    for (int c = 0; c < 3; ++c)
      directions.push_back(
          {"shape " + shape.name + " colour " + std::to_string(c),
           [k, c](CameraSetup& s, double h) { s.appearance.shapes[static_cast<std::size_t>(k)].colour[c] += h; },
           [k, c](const CameraGradients& g) { return g.colours[static_cast<std::size_t>(k)][c]; }, 1e-4});
  }
  for (int i = 0; i < 3; ++i) {
    directions.push_back({std::string("camera position ") + axis_name[i],
                          [i](CameraSetup& s, double h) { s.camera.position[i] += h; },
                          [i](const CameraGradients& g) { return g.camera_position[i]; }, 1e-8});
    directions.push_back({std::string("camera rotation ") + axis_name[i],
                          [i](CameraSetup& s, double h) {
                            Vec3 r;
                            r[i] = h;
                            s.camera.orientation = Quat::from_rotation_vector(r) * s.camera.orientation;
                          },
                          [i](const CameraGradients& g) { return g.camera_rotation[i]; }, 1e-8});
  }
  directions.push_back({"camera vertical_fov", [](CameraSetup& s, double h) { s.camera.vertical_fov += h; },
                        [](const CameraGradients& g) { return g.vertical_fov; }, 1e-8});
  for (std::size_t t = 0; t < setup.appearance.textures.size(); ++t) {
    const std::size_t count = setup.appearance.textures[t].texels.size();
    for (int j = 0; j < texel_count; ++j) {
      const std::size_t index =
          (count * static_cast<std::size_t>(2 * j + 1)) / static_cast<std::size_t>(2 * texel_count);
      directions.push_back({"texture " + std::to_string(t) + " texel " + std::to_string(index),
                            [t, index](CameraSetup& s, double h) { s.appearance.textures[t].texels[index] += h; },
                            [t, index](const CameraGradients& g) { return g.textures[t][index]; }, 1e-4});
    }
  }
  return directions;
}

// (image(+h) − image(−h)) / 2h for one direction: colour planes then depth, flattened.
inline std::vector<double> image_difference(const CameraSetup& setup, const Direction& direction) {
  CameraSetup plus = setup, minus = setup;
  direction.move(plus, direction.step);
  direction.move(minus, -direction.step);
  const CameraImage a = render(plus), b = render(minus);
  std::vector<double> column;
  for (std::size_t i = 0; i < a.colour.size(); ++i)
    column.push_back((a.colour[i] - b.colour[i]) / (2 * direction.step));
  for (std::size_t i = 0; i < a.depth.size(); ++i) column.push_back((a.depth[i] - b.depth[i]) / (2 * direction.step));
  return column;
}

}  // namespace camera_test
