// fluid/fluid_scene_json.cpp — read_fluid_section (fluid_scene_json.hpp): a scene's "fluid"
// section into a FluidSpec, built by build_fluid, then the scalars' initial shapes painted
// on the cell centres.
#include "fluid/fluid_scene_json.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "diffphys/error.hpp"
#include "model/json_reader.hpp"

namespace diffphys::fluid {
namespace {

using json::Json;

constexpr std::array<const char*, 4> kSideNames = {"left", "right", "bottom", "top"};

// A positive finite number.
double read_positive(const json::Reader& reader, const Json& value, const std::string& path) {
  const double x = reader.read_number(value, path);
  if (!(x > 0.0)) reader.fail(path, message("must be positive, got ", json::describe(value)));
  return x;
}

WallSpec read_wall(const json::Reader& reader, const Json& value, const std::string& path) {
  if (!value.is_object()) reader.fail(path, message("expected an object, got ", json::describe(value)));
  reader.check_keys(value, path, {"type", "velocity"});
  WallSpec wall;
  if (value.contains("type"))
    wall.type = reader.read_enum<WallType>(value["type"], json::key_path(path, "type"), "wall type",
                                           {{"no_slip", WallType::NoSlip}, {"free_slip", WallType::FreeSlip}});
  if (value.contains("velocity")) {
    wall.tangential_velocity = reader.read_number(value["velocity"], json::key_path(path, "velocity"));
    if (wall.type == WallType::FreeSlip && wall.tangential_velocity != 0.0)
      reader.fail(json::key_path(path, "velocity"),
                  message("a free-slip wall does not drag the fluid, so it cannot move (got ",
                          json::describe(value["velocity"]), "); make it \"no_slip\""));
  }
  return wall;
}

// One obstacle: {"name", "center": [x, y], "semi_axes": [a, b], "angle", "velocity": [vx, vy]}.
// Its center must lie in the domain (build_fluid checks it, naming the obstacle).
ObstacleSpec read_obstacle(const json::Reader& reader, const Json& value, const std::string& path,
                           const std::vector<ObstacleSpec>& earlier) {
  if (!value.is_object()) reader.fail(path, message("expected an object, got ", json::describe(value)));
  reader.check_keys(value, path, {"name", "center", "semi_axes", "angle", "velocity"});
  for (const char* key : {"name", "center", "semi_axes"}) reader.require_key(value, path, key);
  ObstacleSpec obstacle;
  obstacle.name = reader.read_string(value["name"], json::key_path(path, "name"));
  if (obstacle.name.empty() || obstacle.name.find('/') != std::string::npos)
    reader.fail(json::key_path(path, "name"), message("must be non-empty and without '/', got ", json::describe(value["name"])));
  for (const ObstacleSpec& other : earlier)
    if (other.name == obstacle.name)
      reader.fail(json::key_path(path, "name"), message("obstacle ", json::describe(value["name"]), " is given twice"));
  const std::vector<double> center = reader.read_numbers(value["center"], json::key_path(path, "center"), 2);
  obstacle.center = {center[0], center[1]};
  const std::string axes_path = json::key_path(path, "semi_axes");
  const Json& axes = value["semi_axes"];
  if (!axes.is_array() || axes.size() != 2) reader.fail(axes_path, message("expected [a, b], got ", json::describe(axes)));
  obstacle.semi_axes = {read_positive(reader, axes[0], json::element_path(axes_path, 0)),
                        read_positive(reader, axes[1], json::element_path(axes_path, 1))};
  if (value.contains("angle")) obstacle.angle = reader.read_number(value["angle"], json::key_path(path, "angle"));
  if (value.contains("velocity")) {
    const std::vector<double> velocity = reader.read_numbers(value["velocity"], json::key_path(path, "velocity"), 2);
    obstacle.velocity = {velocity[0], velocity[1]};
  }
  return obstacle;
}

// One initial shape of a scalar, added into `field` (ncell, cell centres).
void paint_shape(const json::Reader& reader, const Json& shape, const std::string& path, const FluidModel& model,
                 std::span<double> field) {
  if (!shape.is_object()) reader.fail(path, message("expected an object, got ", json::describe(shape)));
  reader.require_key(shape, path, "type");
  const std::string type = reader.read_string(shape["type"], json::key_path(path, "type"));
  const double h = model.spacing;
  const double width = model.nx * h, height = model.ny * h;
  if (type == "blob") {
    // A smooth bump value (1 − d²/r²)² within radius r of the centre (C¹ at its rim).
    reader.check_keys(shape, path, {"type", "center", "radius", "value"});
    reader.require_key(shape, path, "center");
    reader.require_key(shape, path, "radius");
    const std::vector<double> c = reader.read_numbers(shape["center"], json::key_path(path, "center"), 2);
    const double r = read_positive(reader, shape["radius"], json::key_path(path, "radius"));
    const double value = shape.contains("value") ? reader.read_number(shape["value"], json::key_path(path, "value")) : 1.0;
    if (c[0] < 0 || c[0] > width || c[1] < 0 || c[1] > height)
      reader.fail(json::key_path(path, "center"),
                  message("(", c[0], ", ", c[1], ") lies outside the domain [0, ", width, "] x [0, ", height, "]"));
    for (int j = 0; j < model.ny; ++j)
      for (int i = 0; i < model.nx; ++i) {
        const double dx = (i + 0.5) * h - c[0], dy = (j + 0.5) * h - c[1];
        const double q = (dx * dx + dy * dy) / (r * r);
        if (q < 1.0) field[static_cast<std::size_t>(j * model.nx + i)] += value * (1.0 - q) * (1.0 - q);
      }
  } else if (type == "rectangle") {
    // value in every cell whose centre lies in [min, max].
    reader.check_keys(shape, path, {"type", "min", "max", "value"});
    reader.require_key(shape, path, "min");
    reader.require_key(shape, path, "max");
    const std::vector<double> lo = reader.read_numbers(shape["min"], json::key_path(path, "min"), 2);
    const std::vector<double> hi = reader.read_numbers(shape["max"], json::key_path(path, "max"), 2);
    const double value = shape.contains("value") ? reader.read_number(shape["value"], json::key_path(path, "value")) : 1.0;
    if (!(lo[0] < hi[0] && lo[1] < hi[1]))
      reader.fail(path, message("min (", lo[0], ", ", lo[1], ") must lie below and left of max (", hi[0], ", ", hi[1], ")"));
    for (int j = 0; j < model.ny; ++j)
      for (int i = 0; i < model.nx; ++i) {
        const double x = (i + 0.5) * h, y = (j + 0.5) * h;
        if (x >= lo[0] && x <= hi[0] && y >= lo[1] && y <= hi[1]) field[static_cast<std::size_t>(j * model.nx + i)] += value;
      }
  } else {
    reader.fail(json::key_path(path, "type"), message("unknown shape ", json::describe(shape["type"]), " (expected \"blob\" or \"rectangle\")"));
  }
}

}  // namespace

FluidBuild read_fluid_section(const Json& section, const std::string& source) {
  const json::Reader reader(source);
  const std::string root = "fluid";
  if (!section.is_object()) reader.fail(root, message("expected an object, got ", json::describe(section)));
  reader.check_keys(section, root,
                    {"name", "resolution", "spacing", "dt", "viscosity", "viscosity_theta", "advection", "max_cfl", "walls",
                     "scalars", "solver", "obstacles", "obstacle_permeability", "obstacle_band"});
  for (const char* key : {"resolution", "spacing", "dt"}) reader.require_key(section, root, key);
  FluidSpec spec;
  spec.name = section.contains("name") ? reader.read_string(section["name"], json::key_path(root, "name")) : "fluid";
  {
    const std::string path = json::key_path(root, "resolution");
    const Json& value = section["resolution"];
    if (!value.is_array() || value.size() != 2)
      reader.fail(path, message("expected [nx, ny], got ", json::describe(value)));
    spec.nx = static_cast<int>(reader.read_integer(value[0], json::element_path(path, 0), 2, 1 << 16));
    spec.ny = static_cast<int>(reader.read_integer(value[1], json::element_path(path, 1), 2, 1 << 16));
  }
  spec.spacing = read_positive(reader, section["spacing"], json::key_path(root, "spacing"));
  spec.dt = read_positive(reader, section["dt"], json::key_path(root, "dt"));
  if (section.contains("viscosity")) {
    const std::string path = json::key_path(root, "viscosity");
    spec.viscosity = reader.read_number(section["viscosity"], path);
    if (spec.viscosity < 0.0) reader.fail(path, message("must be non-negative, got ", json::describe(section["viscosity"])));
  }
  if (section.contains("viscosity_theta"))
    spec.viscosity_theta = reader.read_number(section["viscosity_theta"], json::key_path(root, "viscosity_theta"));
  if (section.contains("max_cfl")) spec.max_cfl = read_positive(reader, section["max_cfl"], json::key_path(root, "max_cfl"));
  if (section.contains("advection"))
    spec.advection = reader.read_enum<AdvectionScheme>(
        section["advection"], json::key_path(root, "advection"), "advection scheme",
        {{"maccormack", AdvectionScheme::MacCormack}, {"semi_lagrangian", AdvectionScheme::SemiLagrangian}});
  if (section.contains("walls")) {
    const std::string path = json::key_path(root, "walls");
    const Json& walls = section["walls"];
    if (!walls.is_object()) reader.fail(path, message("expected an object of sides, got ", json::describe(walls)));
    reader.check_keys(walls, path, {"left", "right", "bottom", "top"});
    for (std::size_t side = 0; side < kSideNames.size(); ++side)
      if (walls.contains(kSideNames[side]))
        spec.walls[side] = read_wall(reader, walls[kSideNames[side]], json::key_path(path, kSideNames[side]));
  }
  if (section.contains("solver")) {
    const std::string path = json::key_path(root, "solver");
    const Json& solver = section["solver"];
    if (!solver.is_object()) reader.fail(path, message("expected an object, got ", json::describe(solver)));
    reader.check_keys(solver, path, {"relative_tolerance", "max_iterations", "smoothing_sweeps"});
    if (solver.contains("relative_tolerance"))
      spec.solver.relative_tolerance = read_positive(reader, solver["relative_tolerance"], json::key_path(path, "relative_tolerance"));
    if (solver.contains("max_iterations"))
      spec.solver.max_iterations = static_cast<int>(reader.read_integer(solver["max_iterations"], json::key_path(path, "max_iterations"), 1, 1000000));
    if (solver.contains("smoothing_sweeps"))
      spec.solver.smoothing_sweeps = static_cast<int>(reader.read_integer(solver["smoothing_sweeps"], json::key_path(path, "smoothing_sweeps"), 1, 100));
  }
  if (section.contains("obstacle_permeability"))
    spec.obstacle_permeability =
        read_positive(reader, section["obstacle_permeability"], json::key_path(root, "obstacle_permeability"));
  if (section.contains("obstacle_band"))
    spec.obstacle_band = read_positive(reader, section["obstacle_band"], json::key_path(root, "obstacle_band"));
  reader.for_each_element(reader.optional_array(section, "obstacles", root), json::key_path(root, "obstacles"),
                          [&](const Json& obstacle, const std::string& path) {
                            spec.obstacles.push_back(read_obstacle(reader, obstacle, path, spec.obstacles));
                          });
  // Scalars: their names and buoyancy first (they shape the model), their shapes after the build.
  const Json& scalars = reader.optional_array(section, "scalars", root);
  const std::string scalars_path = json::key_path(root, "scalars");
  spec.scalar_count = static_cast<int>(scalars.size());
  spec.scalar_names.clear();
  spec.buoyancy.assign(scalars.size(), 0.0);
  reader.for_each_element(scalars, scalars_path, [&](const Json& scalar, const std::string& path) {
    if (!scalar.is_object()) reader.fail(path, message("expected an object, got ", json::describe(scalar)));
    reader.check_keys(scalar, path, {"name", "buoyancy", "initial"});
    reader.require_key(scalar, path, "name");
    const std::string name = reader.read_string(scalar["name"], json::key_path(path, "name"));
    if (name.empty() || name.find('/') != std::string::npos)
      reader.fail(json::key_path(path, "name"), message("must be non-empty and without '/', got ", json::describe(scalar["name"])));
    if (std::find(spec.scalar_names.begin(), spec.scalar_names.end(), name) != spec.scalar_names.end())
      reader.fail(json::key_path(path, "name"), message("scalar ", json::describe(scalar["name"]), " is given twice"));
    if (scalar.contains("buoyancy"))
      spec.buoyancy[spec.scalar_names.size()] = reader.read_number(scalar["buoyancy"], json::key_path(path, "buoyancy"));
    spec.scalar_names.push_back(name);
  });
  FluidBuild built;
  try {
    built = build_fluid(spec);
  } catch (const Error& error) {
    throw Error(message(source, ": fluid: ", error.what()));
  }
  const auto cells = static_cast<std::size_t>(built.model.cell_count());
  for (std::size_t k = 0; k < scalars.size(); ++k) {
    const std::string path = json::element_path(scalars_path, k);
    const std::span<double> field = std::span<double>(built.state.scalars).subspan(k * cells, cells);
    reader.for_each_element(reader.optional_array(scalars[k], "initial", path), json::key_path(path, "initial"),
                            [&](const Json& shape, const std::string& shape_path) { paint_shape(reader, shape, shape_path, built.model, field); });
  }
  return built;
}

}  // namespace diffphys::fluid
