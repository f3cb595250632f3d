// io/mjcf_geoms.cpp — MJCF frames and geoms: orientations in every MJCF form (quat, euler,
// axisangle, xyaxes, zaxis), geom shapes with fromto, and each geom's mass properties by
// MuJoCo 2.2's rules (io/mjcf_reader.hpp).
#include <tinyxml2.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "io/mjcf_reader.hpp"

namespace diffphys::io::mjcf {

// ---------------------------------------------------------------------------------------
// Frames

Quat MjcfReader::read_orientation(const XMLElement* element, const std::string& tag,
                                  const std::string& class_name) const {
  // An element's own orientation wins over its class's; at most one form may be given.
  const char* forms[] = {"quat", "euler", "axisangle", "xyaxes", "zaxis"};
  const char* chosen = nullptr;
  for (const char* form : forms) {
    if (element->Attribute(form)) {
      if (chosen) source_.fail(element, message("give one orientation, not both ", chosen, " and ", form));
      chosen = form;
    }
  }
  if (!chosen)
    for (const char* form : forms)
      if (attribute(element, tag, form, class_name)) {
        chosen = form;
        break;
      }
  if (!chosen) return Quat::identity();
  const std::string value = *attribute(element, tag, chosen, class_name);
  const std::string form = chosen;
  if (form == "quat") {
    const auto q = source_.parse_numbers(element, chosen, value, {4});
    const Quat quat{q[0], q[1], q[2], q[3]};
    if (!(quat.squared_norm() > 1e-20)) source_.fail(element, "quat must be non-zero");
    return quat.normalized();
  }
  if (form == "euler") {
    const auto e = source_.parse_numbers(element, chosen, value, {3});
    Quat q;
    for (int k = 0; k < 3; ++k) {
      const char axis_name = compiler_.euler_sequence[static_cast<std::size_t>(k)];
      const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(axis_name)));
      const Vec3 axis = lower == 'x' ? Vec3{1, 0, 0} : lower == 'y' ? Vec3{0, 1, 0} : Vec3{0, 0, 1};
      const Quat r = Quat::from_axis_angle(axis, angle(e[static_cast<std::size_t>(k)]));
      // Lowercase: about the moving (rotated) axes; uppercase: about the fixed axes.
      q = axis_name == lower ? q * r : r * q;
    }
    return q.normalized();
  }
  if (form == "axisangle") {
    const auto a = source_.parse_numbers(element, chosen, value, {4});
    const Vec3 axis{a[0], a[1], a[2]};
    if (!(norm(axis) > 1e-12)) source_.fail(element, "axisangle needs a non-zero axis");
    return Quat::from_axis_angle(normalized(axis), angle(a[3])).normalized();
  }
  if (form == "zaxis") {
    const auto z = source_.parse_numbers(element, chosen, value, {3});
    const Vec3 axis{z[0], z[1], z[2]};
    if (!(norm(axis) > 1e-12)) source_.fail(element, "zaxis must be non-zero");
    return io::quat_from_z_axis(normalized(axis));
  }
  const auto v = source_.parse_numbers(element, chosen, value, {6});
  Vec3 x{v[0], v[1], v[2]}, y{v[3], v[4], v[5]};
  if (!(norm(x) > 1e-12)) source_.fail(element, "xyaxes: the x axis must be non-zero");
  x = normalized(x);
  y = y - x * dot(x, y);
  if (!(norm(y) > 1e-12)) source_.fail(element, "xyaxes: the y axis must not be parallel to x");
  y = normalized(y);
  const Vec3 z = cross(x, y);
  Mat3 rotation;
  for (int i = 0; i < 3; ++i) {
    rotation(i, 0) = x[i];
    rotation(i, 1) = y[i];
    rotation(i, 2) = z[i];
  }
  // Quaternion of the orthonormal frame (x, y, z) by Shepperd's method.
  const double trace = rotation(0, 0) + rotation(1, 1) + rotation(2, 2);
  Quat q;
  if (trace > 0) {
    const double s = std::sqrt(trace + 1.0) * 2;
    q = {0.25 * s, (rotation(2, 1) - rotation(1, 2)) / s, (rotation(0, 2) - rotation(2, 0)) / s,
         (rotation(1, 0) - rotation(0, 1)) / s};
  } else if (rotation(0, 0) > rotation(1, 1) && rotation(0, 0) > rotation(2, 2)) {
    const double s = std::sqrt(1.0 + rotation(0, 0) - rotation(1, 1) - rotation(2, 2)) * 2;
    q = {(rotation(2, 1) - rotation(1, 2)) / s, 0.25 * s, (rotation(0, 1) + rotation(1, 0)) / s,
         (rotation(0, 2) + rotation(2, 0)) / s};
  } else if (rotation(1, 1) > rotation(2, 2)) {
    const double s = std::sqrt(1.0 + rotation(1, 1) - rotation(0, 0) - rotation(2, 2)) * 2;
    q = {(rotation(0, 2) - rotation(2, 0)) / s, (rotation(0, 1) + rotation(1, 0)) / s, 0.25 * s,
         (rotation(1, 2) + rotation(2, 1)) / s};
  } else {
    const double s = std::sqrt(1.0 + rotation(2, 2) - rotation(0, 0) - rotation(1, 1)) * 2;
    q = {(rotation(1, 0) - rotation(0, 1)) / s, (rotation(0, 2) + rotation(2, 0)) / s,
         (rotation(1, 2) + rotation(2, 1)) / s, 0.25 * s};
  }
  return q.normalized();
}

// ---------------------------------------------------------------------------------------
// Bodies, geoms, joints

MjcfGeom MjcfReader::read_geom(const XMLElement* element, const std::string& class_name, const MjcfBody& body,
                               const Pose* placed) {
  check_attributes(element, "geom");
  MjcfGeom geom;
  geom.element = element;
  const std::string type = attribute(element, "geom", "type", class_name).value_or("sphere");
  std::vector<double> size = numbers(element, "geom", "size", class_name, {1, 2, 3}).value_or(std::vector<double>{});
  size.resize(3, 0.0);
  const auto fromto = numbers(element, "geom", "fromto", class_name, {6});
  ShapeSpec& shape = geom.shape;
  if (const char* name = element->Attribute("name")) shape.name = name;
  Vec3 position = vector(element, "geom", "pos", class_name).value_or(Vec3{});
  Quat orientation = read_orientation(element, "geom", class_name);
  double half_length = size[1];
  if (fromto) {
    if (type != "capsule" && type != "cylinder" && type != "box")
      source_.fail(element, "fromto applies to capsules, cylinders and boxes only, not to a " + type);
    const Vec3 from{(*fromto)[0], (*fromto)[1], (*fromto)[2]}, to{(*fromto)[3], (*fromto)[4], (*fromto)[5]};
    const Vec3 segment = to - from;
    if (!(norm(segment) > 1e-12)) source_.fail(element, "fromto: the two points coincide");
    position = (from + to) * 0.5;
    orientation = io::quat_from_z_axis(normalized(segment));
    half_length = 0.5 * norm(segment);
    if (type == "box") {
      // MuJoCo 2.2 compiles a box given by fromto with a square section of half size size[0].
      if (size[1] != 0 && size[1] != size[0])
        warnings_.add(source_, element,
                      message("a box given by fromto has a square section of half size ", size[0],
                              " (size[0]), as in MuJoCo 2.2: the second size ", size[1], " is not used"));
      size[1] = size[0];
      size[2] = half_length;
    }
  }
  if (placed) {
    position = placed->position;
    orientation = placed->orientation;
  } else {
    const Pose in_body = in_body_frame({position, orientation}, body);
    position = in_body.position;
    orientation = in_body.orientation;
  }
  shape.position = position;
  shape.orientation = orientation;
  const auto positive = [&](double value, const char* what) {
    if (!(value > 0)) source_.fail(element, message(what, " must be positive, got ", value));
    return value;
  };
  double volume = 0.0;
  Vec3 unit_moments;  // principal moments per unit mass, along the geom's axes
  if (type == "sphere") {
    shape.type = ShapeType::Sphere;
    const double r = shape.radius = positive(size[0], "size (radius)");
    volume = 4.0 / 3.0 * kPi * r * r * r;
    unit_moments = Vec3{1, 1, 1} * (2.0 * r * r / 5.0);
  } else if (type == "capsule" || type == "cylinder") {
    const double r = shape.radius = positive(size[0], "size (radius)");
    const double h = shape.half_length = positive(half_length, "half length");
    const double height = 2.0 * h;
    if (type == "capsule") {
      shape.type = ShapeType::Capsule;
      volume = kPi * r * r * height + 4.0 / 3.0 * kPi * r * r * r;
      // MuJoCo's split: a cylinder and two hemispheres, moved along the axis.
      const double sphere_share = 4.0 * r / (4.0 * r + 3.0 * height);
      const double cylinder_share = 1.0 - sphere_share;
      const double transverse = cylinder_share * (3.0 * r * r + height * height) / 12.0 +
                                sphere_share * 2.0 * r * r / 5.0 +
                                sphere_share * height * (3.0 * r + 2.0 * height) / 8.0;
      unit_moments = {transverse, transverse, cylinder_share * r * r / 2.0 + sphere_share * 2.0 * r * r / 5.0};
    } else {
      shape.type = ShapeType::Cylinder;
      volume = kPi * r * r * height;
      const double transverse = (3.0 * r * r + height * height) / 12.0;
      unit_moments = {transverse, transverse, r * r / 2.0};
    }
  } else if (type == "box") {
    shape.type = ShapeType::Box;
    const Vec3 h{positive(size[0], "size x"), positive(size[1], "size y"), positive(size[2], "size z")};
    shape.half_extents = h;
    volume = 8.0 * h.x * h.y * h.z;
    unit_moments = Vec3{h.y * h.y + h.z * h.z, h.x * h.x + h.z * h.z, h.x * h.x + h.y * h.y} * (1.0 / 3.0);
  } else if (type == "ellipsoid") {
    // Semi-axes a, b, c: volume 4/3 π abc, moments per unit mass (b² + c²)/5, ... (MuJoCo's too).
    shape.type = ShapeType::Ellipsoid;
    const Vec3 a{positive(size[0], "size x"), positive(size[1], "size y"), positive(size[2], "size z")};
    shape.half_extents = a;
    volume = 4.0 / 3.0 * kPi * a.x * a.y * a.z;
    unit_moments = Vec3{a.y * a.y + a.z * a.z, a.x * a.x + a.z * a.z, a.x * a.x + a.y * a.y} * (1.0 / 5.0);
  } else if (type == "plane") {
    if (body.parent >= 0 && !body.is_static)
      source_.fail(element, "a plane is infinite and may only belong to the world or a static body");
    shape.type = ShapeType::Plane;
    geom.is_plane = true;
  } else if (type == "mesh") {
    geom.is_mesh = true;
    geom.mesh = attribute(element, "geom", "mesh", class_name).value_or("");
    geom.class_name = class_name;
  } else if (type == "hfield" || type == "sdf") {
    source_.fail(element, "geom type '" + type +
                              "' is not supported (supported: sphere, capsule, cylinder, ellipsoid, box, plane, mesh)");
  } else {
    source_.fail(element, "unknown geom type '" + type + "'");
  }
  // Mass: the mass attribute, else density × volume (MuJoCo's rule, density default 1000).
  if (!geom.is_plane && !geom.is_mesh) {
    const auto mass = number(element, "geom", "mass", class_name);
    const double density = number(element, "geom", "density", class_name).value_or(1000.0);
    if (mass && *mass < 0) source_.fail(element, message("mass must be non-negative, got ", *mass));
    if (!mass && density < 0) source_.fail(element, message("density must be non-negative, got ", density));
    geom.properties.mass = mass ? *mass : density * volume;
    const Mat3 rotation = orientation.to_matrix();
    geom.properties.center = position;
    geom.properties.inertia = rotation * Mat3::diagonal(unit_moments * geom.properties.mass) * rotation.transposed();
  }
  if (const auto friction = numbers(element, "geom", "friction", class_name, {1, 2, 3})) {
    geom.friction = (*friction)[0];
    if (geom.friction < 0) source_.fail(element, message("friction must be non-negative, got ", geom.friction));
  }
  const auto bits = [&](const char* name) {
    const double value = number(element, "geom", name, class_name).value_or(1.0);
    if (value < 0 || value != std::floor(value) || value > 4294967295.0)
      source_.fail(element, message(name, " must be a 32-bit unsigned integer, got ", value));
    return static_cast<int>(static_cast<std::uint32_t>(value));
  };
  geom.contype = bits("contype");
  geom.conaffinity = bits("conaffinity");
  return geom;
}

void MjcfReader::mesh_geom_mass(MjcfGeom& geom, const std::string& class_name) {
  const XMLElement* element = geom.element;
  const auto asset = mesh_assets_.find(geom.mesh);
  if (asset == mesh_assets_.end()) source_.fail(element, "unknown mesh '" + geom.mesh + "'");
  auto solid = mesh_solids_.find(geom.mesh);
  if (solid == mesh_solids_.end()) {
    try {
      solid = mesh_solids_.emplace(geom.mesh, solid_mesh(asset->second.file, asset->second.scale)).first;
    } catch (const Error& error) {
      source_.fail(element, message("the body's mass comes from this mesh geom, but ", error.what(),
                                    " (give the body an <inertial>)"));
    }
    const SolidMesh& mesh = solid->second;
    if (!compiler_.exact_mesh_inertia && !mesh.convex)
      warnings_.add(source_, element,
                    message("mesh '", geom.mesh,
                            "' is not convex: its mass and inertia are the exact solid's, as MuJoCo computes them "
                            "with <compiler exactmeshinertia=\"true\">; MuJoCo 2.2's default formula, exact for "
                            "convex meshes only, gives a different mass"));
  }
  const SolidMesh& mesh = solid->second;
  // MuJoCo's rule, as for primitives: the geom's mass if given, else density × volume.
  const auto mass = number(element, "geom", "mass", class_name);
  const double density = number(element, "geom", "density", class_name).value_or(1000.0);
  if (mass && *mass < 0) source_.fail(element, message("mass must be non-negative, got ", *mass));
  if (!mass && density < 0) source_.fail(element, message("density must be non-negative, got ", density));
  geom.properties.mass = mass ? *mass : density * mesh.volume;
  // The solid in the geom frame, then in the body frame. (MuJoCo 2.2 moves a mesh to its
  // centroid and principal axes and shifts the geom's frame to match; the body's mass
  // properties are the same either way.)
  const Mat3 rotation = geom.shape.orientation.to_matrix();
  geom.properties.center = geom.shape.position + geom.shape.orientation.rotate(mesh.centroid);
  geom.properties.inertia = rotation * (mesh.inertia * (geom.properties.mass / mesh.volume)) * rotation.transposed();
}

}  // namespace diffphys::io::mjcf
