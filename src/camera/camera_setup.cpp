// camera/camera_setup.cpp — checks of the camera, appearance and model (camera_setup.hpp),
// the look-at orientation, the checker texture and the default appearance (camera.hpp).
#include "camera/camera_setup.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "diffphys/error.hpp"
#include "math/rotation.hpp"

namespace diffphys {

namespace {
constexpr double kPi = 3.14159265358979323846;
}

Quat camera_look_at(const Vec3& eye, const Vec3& target, const Vec3& up) {
  if (!is_finite(eye) || !is_finite(target) || !is_finite(up))
    throw Error("camera_look_at: eye, target and up must be finite");
  const Vec3 forward = target - eye;
  if (norm(forward) < 1e-12) throw Error("camera_look_at: eye and target are the same point");
  const Vec3 z_axis = normalized(forward);
  const Vec3 right = cross(z_axis, up);
  if (norm(right) < 1e-9 * std::max(norm(up), 1e-300))
    throw Error("camera_look_at: up is parallel to the viewing direction (or zero)");
  const Vec3 x_axis = normalized(right);
  const Vec3 y_axis = cross(z_axis, x_axis);  // image down
  Mat3 rotation;                              // columns: the camera's axes in the world
  for (int i = 0; i < 3; ++i) {
    rotation(i, 0) = x_axis[i];
    rotation(i, 1) = y_axis[i];
    rotation(i, 2) = z_axis[i];
  }
  return quat_from_matrix(rotation);
}

Texture checker_texture(int cells, int texels_per_cell, const Vec3& colour_a, const Vec3& colour_b) {
  if (cells < 1 || texels_per_cell < 1)
    throw Error(
        message("checker_texture: cells and texels_per_cell must be ≥ 1, got ", cells, " and ", texels_per_cell));
  Texture texture;
  texture.width = texture.height = cells * texels_per_cell;
  texture.texels.resize(static_cast<std::size_t>(texture.width * texture.height * 3));
  for (int row = 0; row < texture.height; ++row)
    for (int column = 0; column < texture.width; ++column) {
      const bool odd = ((row / texels_per_cell) + (column / texels_per_cell)) % 2 == 1;
      const Vec3& colour = odd ? colour_b : colour_a;
      const auto index = static_cast<std::size_t>((row * texture.width + column) * 3);
      for (int c = 0; c < 3; ++c) texture.texels[index + static_cast<std::size_t>(c)] = colour[c];
    }
  return texture;
}

Appearance default_appearance(const Model& model) {
  Appearance appearance;
  appearance.shapes.resize(static_cast<std::size_t>(model.shape_count()));
  for (int s = 0; s < model.shape_count(); ++s)
    if (model.shapes[static_cast<std::size_t>(s)].type == ShapeType::Plane)
      appearance.shapes[static_cast<std::size_t>(s)].colour = {0.85, 0.85, 0.85};
  return appearance;
}

namespace camera {

void check_camera(const Model& model, const Camera& camera) {
  const std::string& name = camera.name;
  if (camera.width < 1) throw Error(message("camera '", name, "': width must be ≥ 1 pixel, got ", camera.width));
  if (camera.height < 1) throw Error(message("camera '", name, "': height must be ≥ 1 pixel, got ", camera.height));
  if (!std::isfinite(camera.vertical_fov) || camera.vertical_fov <= 0.0 || camera.vertical_fov >= kPi)
    throw Error(message("camera '", name, "': vertical field of view must be in (0, 180) degrees, got ",
                        camera.vertical_fov * 180.0 / kPi, " degrees (", camera.vertical_fov, " rad)"));
  if (!is_finite(camera.position)) throw Error(message("camera '", name, "': position is not finite"));
  if (!is_finite(camera.orientation)) throw Error(message("camera '", name, "': orientation is not finite"));
  if (std::abs(camera.orientation.squared_norm() - 1.0) > 1e-6)
    throw Error(message("camera '", name, "': orientation is not a unit quaternion (norm² ",
                        camera.orientation.squared_norm(), ")"));
  if (camera.body < -1 || camera.body >= model.body_count())
    throw Error(message("camera '", name, "': body index ", camera.body, " is not a body of model '", model.name, "' (",
                        model.body_count(), " bodies; -1 for the world)"));
  if (!std::isfinite(camera.far_depth) || camera.far_depth <= 0.0)
    throw Error(message("camera '", name, "': far_depth must be positive, got ", camera.far_depth));
}

void check_appearance(const Model& model, const Appearance& appearance) {
  if (appearance.shapes.size() != static_cast<std::size_t>(model.shape_count()))
    throw Error(message("appearance has ", appearance.shapes.size(), " shape looks, the model '", model.name, "' has ",
                        model.shape_count(), " shapes"));
  for (std::size_t t = 0; t < appearance.textures.size(); ++t) {
    const Texture& texture = appearance.textures[t];
    if (texture.width < 1 || texture.height < 1)
      throw Error(message("texture ", t, ": size must be ≥ 1 × 1 texels, got ", texture.width, " × ", texture.height));
    if (texture.texels.size() != static_cast<std::size_t>(texture.width) * static_cast<std::size_t>(texture.height) * 3)
      throw Error(message("texture ", t, ": has ", texture.texels.size(), " values, ", texture.width, " × ",
                          texture.height, " × 3 expected"));
    for (double value : texture.texels)
      if (!std::isfinite(value)) throw Error(message("texture ", t, ": a texel is not finite (", value, ")"));
  }
  for (std::size_t s = 0; s < appearance.shapes.size(); ++s) {
    const ShapeLook& look = appearance.shapes[s];
    const std::string& name = model.shapes[s].name;
    if (model.shapes[s].type == ShapeType::Ellipsoid)
      throw Error(message("shape '", name, "': the camera cannot draw an ellipsoid yet (its ray caster and outline ",
                          "derivatives cover planes, spheres, boxes, capsules, cylinders and convex meshes)"));
    if (!is_finite(look.colour)) throw Error(message("shape '", name, "': colour is not finite"));
    if (look.texture < -1 || look.texture >= static_cast<int>(appearance.textures.size()))
      throw Error(message("shape '", name, "': texture index ", look.texture, " is not one of the ",
                          appearance.textures.size(), " textures (-1 for none)"));
    if (look.texture >= 0 && model.shapes[s].type != ShapeType::Plane)
      throw Error(message("shape '", name, "': textures are mapped on planes only, this is a ",
                          type_name(model.shapes[s].type)));
    if (!std::isfinite(look.texture_size) || look.texture_size <= 0.0)
      throw Error(message("shape '", name, "': texture_size must be positive, got ", look.texture_size));
  }
  if (!is_finite(appearance.light_direction) || norm(appearance.light_direction) < 1e-12)
    throw Error("appearance: light_direction must be a finite nonzero vector");
  if (!std::isfinite(appearance.ambient) || !std::isfinite(appearance.diffuse))
    throw Error(message("appearance: ambient and diffuse must be finite, got ", appearance.ambient, " and ",
                        appearance.diffuse));
  if (!is_finite(appearance.background)) throw Error("appearance: background colour is not finite");
}

double focal_pixels(const Camera& camera) {
  return 0.5 * camera.height / std::tan(0.5 * camera.vertical_fov);
}

double focal_pixels_per_fov(const Camera& camera) {
  const double s = std::sin(0.5 * camera.vertical_fov);
  return -0.25 * camera.height / (s * s);
}

double bounding_radius(const RayTarget& target) {
  const double* size = target.size;
  switch (target.type) {
    case ShapeType::Sphere:
      return size[0];
    case ShapeType::Box:
      return std::sqrt(size[0] * size[0] + size[1] * size[1] + size[2] * size[2]);
    case ShapeType::Capsule:
      return size[0] + size[1];
    case ShapeType::Cylinder:
      return std::sqrt(size[0] * size[0] + size[1] * size[1]);
    case ShapeType::ConvexMesh: {
      double farthest = 0.0;
      for (const Vec3& vertex : target.mesh->vertices) farthest = std::max(farthest, norm(vertex));
      return size[0] * farthest;
    }
    case ShapeType::Ellipsoid:
      return std::max({size[0], size[1], size[2]});
    case ShapeType::Plane:
      return std::numeric_limits<double>::infinity();
  }
  return std::numeric_limits<double>::infinity();
}

}  // namespace camera
}  // namespace diffphys
