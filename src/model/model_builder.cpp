// model/model_builder.cpp — from user specs to (Model, Params, State): validation, mass
// properties of compound shapes, centre-of-mass frames, joint frames, the parameter layout.
#include "diffphys/model_builder.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <set>
#include <string>

#include "diffphys/error.hpp"
#include "math/rotation.hpp"
#include "model/builder_checks.hpp"
#include "model/joint_frames.hpp"
#include "model/scale_limits.hpp"

namespace diffphys {
namespace {

bool finite(double value) { return std::isfinite(value); }

using builder::require_direction;
using builder::require_finite;
using builder::require_rotation;
using builder::require_unit_rotation;

// Mass properties of one shape at unit density, about its own centre, in its own frame.
struct MassProperties {
  double mass = 0.0;
  Vec3 center;  // body frame
  Mat3 inertia;  // about `center`, body axes
};

MassProperties shape_unit_density_properties(const ShapeSpec& shape) {
  MassProperties p;
  Vec3 moments;
  switch (shape.type) {
    case ShapeType::Sphere: {
      const double r = shape.radius;
      p.mass = 4.0 / 3.0 * std::numbers::pi * r * r * r;
      moments = Vec3{1, 1, 1} * (0.4 * p.mass * r * r);
      break;
    }
    case ShapeType::Box: {
      const Vec3 h = shape.half_extents;
      p.mass = 8.0 * h.x * h.y * h.z;
      moments = Vec3{h.y * h.y + h.z * h.z, h.x * h.x + h.z * h.z, h.x * h.x + h.y * h.y} * (p.mass / 3.0);
      break;
    }
    case ShapeType::Capsule: {
      // Cylinder of length 2h plus two hemispheres; each hemisphere's inertia moved to the
      // capsule centre through its centroid at 3r/8 from the flat face.
      const double r = shape.radius, h = shape.half_length;
      const double cylinder = std::numbers::pi * r * r * 2.0 * h;
      const double spheres = 4.0 / 3.0 * std::numbers::pi * r * r * r;
      p.mass = cylinder + spheres;
      const double axial = cylinder * r * r / 2.0 + spheres * 0.4 * r * r;
      const double transverse =
          cylinder * ((2.0 * h) * (2.0 * h) / 12.0 + r * r / 4.0) + spheres * (0.4 * r * r + h * h + 0.75 * h * r);
      moments = {transverse, transverse, axial};
      break;
    }
    case ShapeType::Cylinder: {
      const double r = shape.radius, h = shape.half_length;
      p.mass = std::numbers::pi * r * r * 2.0 * h;
      const double transverse = p.mass * (3.0 * r * r + (2.0 * h) * (2.0 * h)) / 12.0;
      moments = {transverse, transverse, p.mass * r * r / 2.0};
      break;
    }
    case ShapeType::Ellipsoid: {
      // Volume 4/3 π abc; moments m(b² + c²)/5, m(a² + c²)/5, m(a² + b²)/5.
      const Vec3 a = shape.half_extents;
      p.mass = 4.0 / 3.0 * std::numbers::pi * a.x * a.y * a.z;
      moments = Vec3{a.y * a.y + a.z * a.z, a.x * a.x + a.z * a.z, a.x * a.x + a.y * a.y} * (p.mass / 5.0);
      break;
    }
    case ShapeType::Plane: return p;
    case ShapeType::ConvexMesh: {
      // The hull's own mass properties (model/convex_mesh.cpp), scaled: volume s³,
      // centroid s, inertia s⁵; its centroid is off the shape frame's origin in general.
      const ConvexMesh& mesh = *shape.mesh;
      const double s = shape.scale;
      const Mat3 rotation = shape.orientation.to_matrix();
      p.mass = mesh.volume * s * s * s;
      p.center = shape.position + rotation * (mesh.centroid * s);
      p.inertia = rotation * (mesh.inertia * (s * s * s * s * s)) * rotation.transposed();
      return p;
    }
  }
  const Mat3 rotation = shape.orientation.to_matrix();
  p.center = shape.position;
  p.inertia = rotation * Mat3::diagonal(moments) * rotation.transposed();
  return p;
}

// Inertia of a point mass at offset d about the origin: m(|d|² I − d dᵀ) (parallel axes).
Mat3 parallel_axis(double mass, const Vec3& d) {
  Mat3 r = Mat3::identity() * dot(d, d);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) -= d[i] * d[j];
  return r * mass;
}

void validate_shape(const ShapeSpec& shape, const std::string& item, BodyType body_type) {
  require_finite(shape.position, item, "position");
  require_rotation(shape.orientation, item, "orientation");
  const auto positive = [&](double value, const char* field) {
    if (!(finite(value) && value > 0)) throw Error(message(item, ": ", field, " must be positive, got ", value));
  };
  switch (shape.type) {
    case ShapeType::Sphere: positive(shape.radius, "radius"); break;
    case ShapeType::Box:
      positive(shape.half_extents.x, "half_extents.x");
      positive(shape.half_extents.y, "half_extents.y");
      positive(shape.half_extents.z, "half_extents.z");
      break;
    case ShapeType::Ellipsoid:
      positive(shape.half_extents.x, "radii.x");
      positive(shape.half_extents.y, "radii.y");
      positive(shape.half_extents.z, "radii.z");
      break;
    case ShapeType::Capsule:
    case ShapeType::Cylinder:
      positive(shape.radius, "radius");
      positive(shape.half_length, "half_length");
      break;
    case ShapeType::Plane:
      if (body_type != BodyType::Static)
        throw Error(message(item, ": a plane is infinite and may only belong to a static body"));
      break;
    case ShapeType::ConvexMesh:
      if (!shape.mesh) throw Error(message(item, ": a convex mesh shape needs a mesh (load_convex_mesh)"));
      positive(shape.scale, "scale");
      break;
  }
}

// Index in model.meshes of `mesh`, added on first use (shapes sharing a mesh share the copy).
int add_mesh(Model& model, std::map<const ConvexMesh*, int>& mesh_index, const std::shared_ptr<const ConvexMesh>& mesh) {
  const auto [entry, inserted] = mesh_index.emplace(mesh.get(), static_cast<int>(model.meshes.size()));
  if (inserted) model.meshes.push_back(*mesh);
  return entry->second;
}

// Appends a named slice of `size` values and returns its offset.
int add_slice(ParamLayout& layout, std::vector<double>& values, std::string name, std::initializer_list<double> init) {
  const int offset = layout.size;
  layout.slices.push_back({std::move(name), offset, static_cast<int>(init.size())});
  layout.size += static_cast<int>(init.size());
  values.insert(values.end(), init);
  return offset;
}

// The convex formulation's compliance slices, "compliance/<class>/time_constant" and
// ".../damping_ratio" for each RowClass, appended to θ.
void add_compliance_slices(Scene& scene, const ModelBuilder::RowCompliance (&compliance)[kRowClassCount]) {
  ParamLayout& layout = scene.model.layout;
  for (int c = 0; c < kRowClassCount; ++c) {
    const std::string prefix = std::string("compliance/") + row_class_name(static_cast<RowClass>(c)) + "/";
    layout.compliance_time_constant[c] =
        add_slice(layout, scene.params.values, prefix + "time_constant", {compliance[c].time_constant});
    layout.compliance_damping_ratio[c] =
        add_slice(layout, scene.params.values, prefix + "damping_ratio", {compliance[c].damping_ratio});
  }
}

// Equalities: points move into their bodies' frames at the build-time pose; θ gets each one's
// time constant and damping ratio (before the compliance slices, which come last).
// `centers`: each body's centre of mass in its frame as given (local anchors are shifted by it).
void build_equalities(const std::vector<EqualitySpec>& specs, Formulation formulation, const State& state,
                      const std::vector<Vec3>& centers, Model& model, std::vector<double>& values) {
  ParamLayout& layout = model.layout;
  std::set<std::string> names;
  for (const EqualitySpec& spec : specs) {
    const std::string item = "equality '" + spec.name + "'";
    if (spec.name.empty()) throw Error(message("equality #", model.equalities.size(), ": an equality needs a name"));
    if (!names.insert(spec.name).second) throw Error(message(item, ": duplicate equality name"));
    if (formulation != Formulation::Convex)
      throw Error(message(item, ": equality constraints are soft rows of the convex formulation; set "
                                "solver.formulation to convex (the complementarity formulation has no soft rows)"));
    Equality equality;
    equality.name = spec.name;
    equality.type = spec.type;
    const auto body_named = [&](const std::string& body_name, const char* role) {
      for (int b = 0; b < model.body_count(); ++b)
        if (model.bodies[static_cast<std::size_t>(b)].name == body_name) return b;
      throw Error(message(item, ": unknown ", role, " '", body_name, "'"));
    };
    equality.body_a = body_named(spec.body_a, "body_a");
    equality.body_b = body_named(spec.body_b, "body_b");
    if (equality.body_a == equality.body_b)
      throw Error(message(item, ": body_a and body_b are the same body '", spec.body_a, "'"));
    if (model.bodies[static_cast<std::size_t>(equality.body_a)].type != BodyType::Dynamic &&
        model.bodies[static_cast<std::size_t>(equality.body_b)].type != BodyType::Dynamic)
      throw Error(message(item, ": neither body is dynamic ('", spec.body_a, "' is ",
                          type_name(model.bodies[static_cast<std::size_t>(equality.body_a)].type), ", '", spec.body_b,
                          "' is ", type_name(model.bodies[static_cast<std::size_t>(equality.body_b)].type),
                          "); one must be dynamic"));
    const auto a = static_cast<std::size_t>(equality.body_a), b = static_cast<std::size_t>(equality.body_b);
    const auto local = [&](std::size_t body, const Vec3& world_point) {
      return state.orientation[body].inverse_rotate(world_point - state.position[body]);
    };
    if (spec.local_anchors) {
      // Already in the bodies' frames (a written scene): only the centre-of-mass shift.
      require_finite(spec.anchor_a, item, "anchor_a");
      require_finite(spec.anchor_b, item, "anchor_b");
      equality.anchor_a = spec.anchor_a - centers[a];
      equality.anchor_b = spec.anchor_b - centers[b];
      if (spec.type == EqualityType::Distance) {
        if (!spec.length) throw Error(message(item, ": a distance with local anchors needs its length"));
        equality.length = *spec.length;
        if (!(finite(equality.length) && equality.length > 0))
          throw Error(message(item, ": length must be positive (a distance row has no direction at 0), got ",
                              equality.length));
      }
      if (spec.type == EqualityType::Weld && !spec.relative)
        throw Error(message(item, ": a weld with local anchors needs its relative orientation"));
    } else if (spec.type == EqualityType::Connect || (spec.type == EqualityType::Weld && !spec.separate_anchors)) {
      require_finite(spec.anchor, item, "anchor");
      equality.anchor_a = local(a, spec.anchor);
      equality.anchor_b = local(b, spec.anchor);
    } else if (spec.type == EqualityType::Weld) {
      require_finite(spec.anchor_a, item, "anchor_a");
      require_finite(spec.anchor_b, item, "anchor_b");
      equality.anchor_a = local(a, spec.anchor_a);
      equality.anchor_b = local(b, spec.anchor_b);
    } else {
      require_finite(spec.anchor_a, item, "anchor_a");
      require_finite(spec.anchor_b, item, "anchor_b");
      equality.anchor_a = local(a, spec.anchor_a);
      equality.anchor_b = local(b, spec.anchor_b);
      equality.length = spec.length.value_or(norm(spec.anchor_b - spec.anchor_a));
      if (!(finite(equality.length) && equality.length > 0))
        throw Error(message(item, ": length must be positive (a distance row has no direction at 0), got ",
                            equality.length));
    }
    if (spec.type == EqualityType::Weld) {
      if (spec.relative) {
        const Quat& q = *spec.relative;
        const double length = std::sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
        if (!(std::isfinite(length) && std::abs(length - 1.0) < 1e-6))
          throw Error(message(item, ": relative orientation must be a unit quaternion, got (", q.w, ", ", q.x, ", ", q.y,
                              ", ", q.z, ")"));
        equality.relative = q;
      } else {
        equality.relative = state.orientation[a].conjugate() * state.orientation[b];
      }
    }
    if (!(finite(spec.time_constant) && spec.time_constant > 0))
      throw Error(message(item, ": time_constant must be positive, got ", spec.time_constant));
    if (!(finite(spec.damping_ratio) && spec.damping_ratio > 0))
      throw Error(message(item, ": damping_ratio must be positive, got ", spec.damping_ratio));
    model.equalities.push_back(equality);
    const std::string prefix = "equality/" + spec.name + "/";
    layout.equality_time_constant.push_back(add_slice(layout, values, prefix + "time_constant", {spec.time_constant}));
    layout.equality_damping_ratio.push_back(add_slice(layout, values, prefix + "damping_ratio", {spec.damping_ratio}));
  }
}

}  // namespace

Vec3 default_plane_direction(const Vec3& normal) {
  const Vec3 n = normalized(normal);
  const Vec3 candidate = std::abs(n.x) < 0.9 ? Vec3{1, 0, 0} : Vec3{0, 1, 0};
  return normalized(candidate - n * dot(n, candidate));
}

int ModelBuilder::add_body(BodySpec spec) {
  bodies_.push_back(std::move(spec));
  return static_cast<int>(bodies_.size());  // body 0 is the world
}

int ModelBuilder::add_ground_plane(Vec3 normal, double offset) {
  ShapeSpec plane;
  plane.type = ShapeType::Plane;
  plane.name = "ground" + (world_shapes_.empty() ? std::string() : std::to_string(world_shapes_.size()));
  const Vec3 n = require_direction(normal, "ground plane", "normal");
  if (!finite(offset)) throw Error(message("ground plane: offset must be finite, got ", offset));
  plane.position = n * offset;
  // Shortest rotation taking +z to n.
  const Vec3 z{0, 0, 1};
  const double c = dot(z, n);
  if (c < -1.0 + 1e-12) {
    plane.orientation = Quat{0, 1, 0, 0};
  } else {
    const Vec3 axis = cross(z, n);
    plane.orientation = Quat{1.0 + c, axis.x, axis.y, axis.z}.normalized();
  }
  world_shapes_.push_back(plane);
  return static_cast<int>(world_shapes_.size()) - 1;
}

int ModelBuilder::add_ground_plane_frame(Vec3 position, Quat orientation) {
  ShapeSpec plane;
  plane.type = ShapeType::Plane;
  plane.name = "ground" + (world_shapes_.empty() ? std::string() : std::to_string(world_shapes_.size()));
  require_finite(position, "ground plane", "position");
  plane.position = position;
  plane.orientation = require_rotation(orientation, "ground plane", "orientation");
  world_shapes_.push_back(plane);
  return static_cast<int>(world_shapes_.size()) - 1;
}

int ModelBuilder::add_joint(JointSpec spec) {
  joints_.push_back(std::move(spec));
  return static_cast<int>(joints_.size()) - 1;
}

int ModelBuilder::add_actuator(ActuatorSpec spec) {
  actuators_.push_back(std::move(spec));
  return static_cast<int>(actuators_.size()) - 1;
}

int ModelBuilder::add_equality(EqualitySpec spec) {
  equalities_.push_back(std::move(spec));
  return static_cast<int>(equalities_.size()) - 1;
}

void ModelBuilder::exclude_collision(std::string body_a, std::string body_b) {
  collision_exclusions_.emplace_back(std::move(body_a), std::move(body_b));
}

Scene ModelBuilder::build() const {
  Scene scene;
  Model& model = scene.model;
  State& state = scene.state;
  std::vector<double>& values = scene.params.values;
  ParamLayout& layout = model.layout;

  model.name = name;
  if (!(finite(dt) && dt > 0)) throw Error(message("scene '", name, "': dt must be positive and finite, got ", dt));
  model.dt = dt;
  require_finite(gravity, "scene '" + name + "'", "gravity");
  model.solver = solver;
  if (solver.max_iterations < 1) throw Error(message("solver: max_iterations must be at least 1, got ", solver.max_iterations));
  if (!(solver.tolerance > 0)) throw Error(message("solver: tolerance must be positive, got ", solver.tolerance));
  if (solver.friction_directions < 4 || solver.friction_directions % 2 != 0)
    throw Error(message("solver: friction_directions must be an even number >= 4, got ", solver.friction_directions));
  if (!(solver.contact_margin >= 0)) throw Error(message("solver: contact_margin must be non-negative, got ", solver.contact_margin));
  if (!(solver.speculative_factor == 0 || (solver.speculative_factor >= 1 && std::isfinite(solver.speculative_factor))))
    throw Error(
        message("solver: speculative_factor must be 0 (off) or a finite number >= 1, got ", solver.speculative_factor));
  if (!(solver.contact_erp >= 0 && solver.contact_erp <= 1)) throw Error(message("solver: contact_erp must lie in [0, 1], got ", solver.contact_erp));
  if (!(solver.penetration_slop >= 0)) throw Error(message("solver: penetration_slop must be non-negative, got ", solver.penetration_slop));
  if (!(solver.restitution_threshold >= 0)) throw Error(message("solver: restitution_threshold must be non-negative, got ", solver.restitution_threshold));
  if (solver.stabilization_iterations < 0) throw Error(message("solver: stabilization_iterations must be non-negative, got ", solver.stabilization_iterations));
  if (!(solver.stabilization_tolerance > 0)) throw Error(message("solver: stabilization_tolerance must be positive, got ", solver.stabilization_tolerance));
  if (!(solver.max_speed > 0)) throw Error(message("solver: max_speed must be positive, got ", solver.max_speed));
  if (!(solver.max_angular_speed > 0))
    throw Error(message("solver: max_angular_speed must be positive, got ", solver.max_angular_speed));

  std::set<std::string> names{"world"};
  std::map<const ConvexMesh*, int> mesh_index;  // model.meshes entry of each distinct mesh
  const int body_total = static_cast<int>(bodies_.size()) + 1;
  state.resize(body_total);
  // Each body's centre of mass in its frame as given (JointFrames and local equality anchors).
  std::vector<Vec3> centers(static_cast<std::size_t>(body_total));
  model.bodies.resize(static_cast<std::size_t>(body_total));
  layout.body_mass.assign(static_cast<std::size_t>(body_total), -1);
  layout.body_inertia = layout.body_friction = layout.body_restitution = layout.body_mass;
  layout.body_linear_damping = layout.body_angular_damping = layout.body_force = layout.body_torque = layout.body_mass;

  layout.gravity = add_slice(layout, values, "gravity", {gravity.x, gravity.y, gravity.z});

  // World body: static, at the origin, owning the ground planes.
  {
    Body& world = model.bodies[0];
    world.name = "world";
    world.type = BodyType::Static;
    world.first_shape = 0;
    world.shape_count = static_cast<int>(world_shapes_.size());
    for (std::size_t s = 0; s < world_shapes_.size(); ++s) {
      const ShapeSpec& spec = world_shapes_[s];
      Shape shape;
      shape.name = spec.name;
      shape.type = spec.type;
      shape.body = 0;
      shape.local_position = spec.position;
      shape.local_orientation = spec.orientation;
      model.shapes.push_back(shape);
    }
    if (!(finite(world_friction) && world_friction >= 0)) throw Error(message("world: friction must be non-negative, got ", world_friction));
    if (!(world_restitution >= 0 && world_restitution <= 1)) throw Error(message("world: restitution must lie in [0, 1], got ", world_restitution));
    layout.body_friction[0] = add_slice(layout, values, "body/world/friction", {world_friction});
    layout.body_restitution[0] = add_slice(layout, values, "body/world/restitution", {world_restitution});
  }

  for (std::size_t k = 0; k < bodies_.size(); ++k) {
    const BodySpec& spec = bodies_[k];
    const std::size_t b = k + 1;
    const std::string item = "body '" + spec.name + "'";
    if (spec.name.empty()) throw Error(message("body #", b, ": a body needs a name"));
    if (spec.name == "world") throw Error(message(item, ": the name 'world' is reserved for body 0, the world"));
    if (!names.insert(spec.name).second) throw Error(message(item, ": duplicate body name"));
    require_finite(spec.position, item, "position");
    const Quat orientation = require_rotation(spec.orientation, item, "orientation");
    require_finite(spec.linear_velocity, item, "linear_velocity");
    require_finite(spec.angular_velocity, item, "angular_velocity");
    require_finite(spec.force, item, "force");
    require_finite(spec.torque, item, "torque");
    const auto check_non_negative = [&](double value, const char* field) {
      if (!(finite(value) && value >= 0)) throw Error(message(item, ": ", field, " must be non-negative, got ", value));
    };
    check_non_negative(spec.friction, "friction");
    if (!(spec.restitution >= 0 && spec.restitution <= 1)) throw Error(message(item, ": restitution must lie in [0, 1], got ", spec.restitution));
    check_non_negative(spec.linear_damping, "linear_damping");
    check_non_negative(spec.angular_damping, "angular_damping");
    if (spec.type == BodyType::Kinematic) {
      // Its motion is prescribed (the state's velocity): nothing a mass would act on.
      const auto refuse = [&](const char* field, const std::string& value) {
        throw Error(message(item, ": a kinematic body has no ", field, " (its motion is prescribed by its state), got ", value));
      };
      if (spec.mass) refuse("mass", message(*spec.mass));
      if (spec.inertia) refuse("inertia", message("(", spec.inertia->x, ", ", spec.inertia->y, ", ", spec.inertia->z, ")"));
      if (spec.center_of_mass)
        refuse("center_of_mass",
               message("(", spec.center_of_mass->x, ", ", spec.center_of_mass->y, ", ", spec.center_of_mass->z, ")"));
      if (squared_norm(spec.force) > 0) refuse("force", message("(", spec.force.x, ", ", spec.force.y, ", ", spec.force.z, ")"));
      if (squared_norm(spec.torque) > 0)
        refuse("torque", message("(", spec.torque.x, ", ", spec.torque.y, ", ", spec.torque.z, ")"));
      if (spec.linear_damping != 0) refuse("linear_damping", message(spec.linear_damping));
      if (spec.angular_damping != 0) refuse("angular_damping", message(spec.angular_damping));
    }
    for (std::size_t s = 0; s < spec.shapes.size(); ++s)
      validate_shape(spec.shapes[s], item + " shape #" + std::to_string(s), spec.type);

    Body& body = model.bodies[b];
    body.name = spec.name;
    body.type = spec.type;

    // Mass properties about the body frame origin, then about the centre of mass.
    Vec3 center;  // centre of mass in the body frame
    Vec3 principal_moments{1, 1, 1};
    double mass = 0.0;
    if (spec.type == BodyType::Dynamic) {
      double shape_mass = 0.0;
      Vec3 weighted_center;
      for (const ShapeSpec& shape : spec.shapes) {
        const MassProperties p = shape_unit_density_properties(shape);
        shape_mass += p.mass;
        weighted_center += p.center * p.mass;
      }
      if (spec.center_of_mass) {
        require_finite(*spec.center_of_mass, item, "center_of_mass");
        center = *spec.center_of_mass;
      } else if (shape_mass > 0) {
        center = weighted_center / shape_mass;
      }
      Mat3 unit_density_inertia;  // about `center`
      for (const ShapeSpec& shape : spec.shapes) {
        const MassProperties p = shape_unit_density_properties(shape);
        unit_density_inertia = unit_density_inertia + p.inertia + parallel_axis(p.mass, p.center - center);
      }
      if (spec.mass) {
        if (!(finite(*spec.mass) && *spec.mass > 0)) throw Error(message(item, ": mass must be positive, got ", *spec.mass));
        mass = *spec.mass;
      } else {
        if (!(finite(spec.density) && spec.density > 0)) throw Error(message(item, ": density must be positive, got ", spec.density));
        if (!(shape_mass > 0)) throw Error(message(item, ": has no mass: give a mass, or shapes with volume"));
        mass = spec.density * shape_mass;
      }
      Mat3 inertia;
      if (spec.inertia) {
        const Vec3 moments = *spec.inertia;
        if (!(finite(moments.x) && finite(moments.y) && finite(moments.z) && moments.x > 0 && moments.y > 0 && moments.z > 0))
          throw Error(message(item, ": inertia must be positive, got (", moments.x, ", ", moments.y, ", ", moments.z, ")"));
        inertia = Mat3::diagonal(moments);
      } else {
        if (!(shape_mass > 0)) throw Error(message(item, ": give an inertia, or shapes with volume to compute it from"));
        inertia = unit_density_inertia * (mass / shape_mass);
      }
      Mat3 axes;
      if (spec.inertia_frame) {
        if (!spec.inertia) throw Error(message(item, ": inertia_frame needs the inertia (its principal moments)"));
        // The moments along the given axes, kept as given (no eigen-decomposition to re-round).
        principal_moments = *spec.inertia;
        axes = require_unit_rotation(*spec.inertia_frame, item, "inertia_frame").to_matrix();
      } else {
        symmetric_eigen(inertia, principal_moments, axes);
      }
      const double slack = 1e-9 * (principal_moments.x + principal_moments.y + principal_moments.z);
      if (!(principal_moments.x > 0) || principal_moments.x + principal_moments.y < principal_moments.z - slack)
        throw Error(message(item, ": inertia is not physical: principal moments (", principal_moments.x, ", ",
                            principal_moments.y, ", ", principal_moments.z,
                            ") must be positive and satisfy the triangle inequality"));
      body.principal_frame = spec.inertia_frame ? unit_or_normalized(*spec.inertia_frame) : quat_from_matrix(axes);
    } else if (spec.inertia_frame) {
      throw Error(message(item, ": a ", type_name(spec.type), " body has no inertia_frame (it has no mass)"));
    }
    centers[b] = center;

    // The body's origin moves to its centre of mass; shapes move with it.
    const Vec3 center_world = orientation.rotate(center);
    state.position[b] = spec.position + center_world;
    state.orientation[b] = orientation;
    state.linear_velocity[b] = spec.linear_velocity + cross(spec.angular_velocity, center_world);
    state.angular_velocity[b] = spec.angular_velocity;
    if (spec.type == BodyType::Static && (squared_norm(spec.linear_velocity) > 0 || squared_norm(spec.angular_velocity) > 0))
      throw Error(message(item, ": a static body cannot have a velocity"));

    body.first_shape = static_cast<int>(model.shapes.size());
    body.shape_count = static_cast<int>(spec.shapes.size());
    for (std::size_t s = 0; s < spec.shapes.size(); ++s) {
      const ShapeSpec& shape_spec = spec.shapes[s];
      Shape shape;
      shape.name = shape_spec.name.empty() ? spec.name + "/" + std::to_string(s) : shape_spec.name;
      if (!names.insert("shape:" + shape.name).second) throw Error(message(item, ": duplicate shape name '", shape.name, "'"));
      shape.type = shape_spec.type;
      shape.body = static_cast<int>(b);
      shape.local_position = shape_spec.position - center;
      shape.local_orientation = unit_or_normalized(shape_spec.orientation);
      shape.collision_group = shape_spec.collision_group;
      shape.collision_mask = shape_spec.collision_mask;
      if (shape_spec.type == ShapeType::ConvexMesh) shape.mesh = add_mesh(model, mesh_index, shape_spec.mesh);
      model.shapes.push_back(shape);
    }

    const std::string prefix = "body/" + spec.name + "/";
    if (spec.type == BodyType::Dynamic) {
      layout.body_mass[b] = add_slice(layout, values, prefix + "mass", {mass});
      layout.body_inertia[b] = add_slice(layout, values, prefix + "inertia",
                                         {principal_moments.x, principal_moments.y, principal_moments.z});
    }
    layout.body_friction[b] = add_slice(layout, values, prefix + "friction", {spec.friction});
    layout.body_restitution[b] = add_slice(layout, values, prefix + "restitution", {spec.restitution});
    if (spec.type == BodyType::Dynamic) {
      layout.body_linear_damping[b] = add_slice(layout, values, prefix + "linear_damping", {spec.linear_damping});
      layout.body_angular_damping[b] = add_slice(layout, values, prefix + "angular_damping", {spec.angular_damping});
      layout.body_force[b] = add_slice(layout, values, prefix + "force", {spec.force.x, spec.force.y, spec.force.z});
      layout.body_torque[b] = add_slice(layout, values, prefix + "torque", {spec.torque.x, spec.torque.y, spec.torque.z});
    }
  }

  // Shape sizes, in shape order (world planes first: no size).
  layout.shape_size.assign(model.shapes.size(), -1);
  {
    std::size_t shape_index = world_shapes_.size();
    for (const BodySpec& spec : bodies_) {
      for (const ShapeSpec& shape : spec.shapes) {
        const std::string prefix = "shape/" + model.shapes[shape_index].name + "/";
        switch (shape.type) {
          case ShapeType::Sphere: layout.shape_size[shape_index] = add_slice(layout, values, prefix + "radius", {shape.radius}); break;
          case ShapeType::Box:
            layout.shape_size[shape_index] = add_slice(layout, values, prefix + "half_extents",
                                                       {shape.half_extents.x, shape.half_extents.y, shape.half_extents.z});
            break;
          case ShapeType::Ellipsoid:
            layout.shape_size[shape_index] = add_slice(layout, values, prefix + "radii",
                                                       {shape.half_extents.x, shape.half_extents.y, shape.half_extents.z});
            break;
          case ShapeType::Capsule:
          case ShapeType::Cylinder:
            layout.shape_size[shape_index] = add_slice(layout, values, prefix + "radius", {shape.radius});
            add_slice(layout, values, prefix + "half_length", {shape.half_length});
            break;
          case ShapeType::Plane: break;
          case ShapeType::ConvexMesh:
            layout.shape_size[shape_index] = add_slice(layout, values, prefix + "scale", {shape.scale});
            break;
        }
        ++shape_index;
      }
    }
  }

  // Joints: anchors and axes move into the two bodies' frames at the build-time pose.
  std::set<std::string> joint_names;
  for (const JointSpec& spec : joints_) {
    const std::string item = "joint '" + spec.name + "'";
    if (spec.name.empty()) throw Error(message("joint #", model.joints.size(), ": a joint needs a name"));
    if (!joint_names.insert(spec.name).second) throw Error(message(item, ": duplicate joint name"));
    Joint joint;
    joint.name = spec.name;
    joint.type = spec.type;
    const auto body_named = [&](const std::string& body_name, const char* role) {
      for (int b = 0; b < body_total; ++b)
        if (model.bodies[static_cast<std::size_t>(b)].name == body_name) return b;
      throw Error(message(item, ": unknown ", role, " body '", body_name, "'"));
    };
    joint.parent = body_named(spec.parent, "parent");
    joint.child = body_named(spec.child, "child");
    if (joint.parent == joint.child) throw Error(message(item, ": parent and child are the same body '", spec.child, "'"));
    if (model.bodies[static_cast<std::size_t>(joint.child)].type == BodyType::Kinematic)
      throw Error(message(item, ": child body '", spec.child,
                          "' is kinematic: its motion is prescribed, no joint may move it (make it the parent)"));
    if (model.bodies[static_cast<std::size_t>(joint.child)].type != BodyType::Dynamic)
      throw Error(message(item, ": child body '", spec.child, "' must be dynamic"));
    const auto p = static_cast<std::size_t>(joint.parent), c = static_cast<std::size_t>(joint.child);
    if (spec.frames) {
      set_joint_frames(*spec.frames, centers[p], centers[c], item, joint);
    } else {
      set_joint_frames_at_build_pose(spec, state, item, joint);
    }
    if (spec.lower_limit.has_value() != spec.upper_limit.has_value())
      throw Error(message(item, ": give both a lower and an upper limit, or neither"));
    if (spec.lower_limit) {
      // One pair of bounds for every coordinate: a planar joint's metres and radians cannot share it.
      if (joint_dof_count(spec.type) == 0 || spec.type == JointType::Ball || spec.type == JointType::Planar)
        throw Error(message(item, ": limits apply to revolute, prismatic and universal joints only, not ",
                            type_name(spec.type)));
      if (!(finite(*spec.lower_limit) && finite(*spec.upper_limit) && *spec.lower_limit <= *spec.upper_limit))
        throw Error(message(item, ": limits must be finite with lower <= upper, got [", *spec.lower_limit, ", ", *spec.upper_limit, "]"));
      joint.has_limits = true;
      joint.lower_limit = *spec.lower_limit;
      joint.upper_limit = *spec.upper_limit;
    }
    if (!(finite(spec.damping) && spec.damping >= 0)) throw Error(message(item, ": damping must be non-negative, got ", spec.damping));
    joint.collide_connected = spec.collide_connected;
    model.joints.push_back(joint);
    layout.joint_damping.push_back(add_slice(layout, values, "joint/" + spec.name + "/damping", {spec.damping}));
  }

  std::set<std::string> actuator_names;
  for (const ActuatorSpec& spec : actuators_) {
    const std::string item = "actuator '" + spec.name + "'";
    if (spec.name.empty()) throw Error(message("actuator #", model.actuators.size(), ": an actuator needs a name"));
    if (!actuator_names.insert(spec.name).second) throw Error(message(item, ": duplicate actuator name"));
    Actuator actuator;
    actuator.name = spec.name;
    actuator.type = spec.type;
    actuator.joint = -1;
    for (int j = 0; j < model.joint_count(); ++j)
      if (model.joints[static_cast<std::size_t>(j)].name == spec.joint) actuator.joint = j;
    if (actuator.joint < 0) throw Error(message(item, ": unknown joint '", spec.joint, "'"));
    const JointType type = model.joints[static_cast<std::size_t>(actuator.joint)].type;
    if (type == JointType::Fixed || type == JointType::Ball)
      throw Error(message(item, ": joint '", spec.joint, "' is not actuable (fixed and ball joints have no actuated coordinate)"));
    if (spec.dof < 0 || spec.dof >= joint_dof_count(type))
      throw Error(message(item, ": dof ", spec.dof, " out of range for joint '", spec.joint, "' (", joint_dof_count(type), " coordinates)"));
    actuator.dof = spec.dof;
    if (!finite(spec.control)) throw Error(message(item, ": control must be finite, got ", spec.control));
    const std::string prefix = "actuator/" + spec.name + "/";
    if (spec.type == ActuatorType::Servo) {
      const auto positive = [&](double value, const char* field) {
        if (!(finite(value) && value > 0)) throw Error(message(item, ": ", field, " must be positive, got ", value));
      };
      positive(spec.gain, "gain");
      positive(spec.max_torque, "max_torque");
      positive(spec.max_velocity, "max_velocity");
      layout.actuator_gain.push_back(add_slice(layout, values, prefix + "gain", {spec.gain}));
      layout.actuator_max_torque.push_back(add_slice(layout, values, prefix + "max_torque", {spec.max_torque}));
      layout.actuator_max_velocity.push_back(add_slice(layout, values, prefix + "max_velocity", {spec.max_velocity}));
    } else {
      if (!(finite(spec.max_torque) && spec.max_torque >= 0))
        throw Error(message(item, ": max_torque must be non-negative (0 = unbounded), got ", spec.max_torque));
      layout.actuator_gain.push_back(-1);
      layout.actuator_max_torque.push_back(add_slice(layout, values, prefix + "max_torque", {spec.max_torque}));
      layout.actuator_max_velocity.push_back(-1);
    }
    model.actuators.push_back(actuator);
    scene.controls.push_back(spec.control);
  }

  build_equalities(equalities_, solver.formulation, state, centers, model, values);

  for (const auto& [name_a, name_b] : collision_exclusions_) {
    const auto body_named = [&](const std::string& body_name) {
      for (int b = 0; b < body_total; ++b)
        if (model.bodies[static_cast<std::size_t>(b)].name == body_name) return b;
      throw Error(message("collision exclusion '", name_a, "'-'", name_b, "': unknown body '", body_name, "'"));
    };
    const int a = body_named(name_a), b = body_named(name_b);
    if (a == b) throw Error(message("collision exclusion '", name_a, "'-'", name_b, "': a body never collides with itself"));
    model.collision_exclusions.emplace_back(std::min(a, b), std::max(a, b));
  }
  std::sort(model.collision_exclusions.begin(), model.collision_exclusions.end());
  model.collision_exclusions.erase(std::unique(model.collision_exclusions.begin(), model.collision_exclusions.end()),
                                   model.collision_exclusions.end());

  // Last in θ, so that set_formulation can add them to a built scene without moving the rest.
  if (solver.formulation == Formulation::Convex) add_compliance_slices(scene, compliance);
  validate_params(model, scene.params);
  validate_state(model, state);
  validate_scales(model, scene.params, state);
  return scene;
}

void set_formulation(Scene& scene, Formulation formulation) {
  if (formulation != Formulation::Convex && !scene.model.equalities.empty())
    throw Error(message("equality '", scene.model.equalities.front().name,
                        "': equality constraints are soft rows of the convex formulation; the scene cannot switch "
                        "to the complementarity formulation"));
  scene.model.solver.formulation = formulation;
  if (formulation == Formulation::Convex && scene.model.layout.compliance_time_constant[0] < 0) {
    add_compliance_slices(scene, ModelBuilder{}.compliance);
    validate_params(scene.model, scene.params);
  }
}

}  // namespace diffphys
