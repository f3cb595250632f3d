// fluid/fluid_model.cpp — building a FluidModel from a FluidSpec (with the checks that name the
// item and value), θ's slices, state checks, the workspace's buffers and the closed-form
// diagnostics (kinetic energy, scalar mass, divergence).
#include <algorithm>
#include <array>
#include <cmath>

#include "diffphys/error.hpp"
#include "fluid/workspace.hpp"

namespace diffphys::fluid {
namespace {

const char* side_name(int side) {
  static const char* const names[4] = {"left", "right", "bottom", "top"};
  return names[side];
}

int add_slice(FluidParamLayout& layout, std::vector<double>& theta, std::string name,
              const std::vector<double>& values) {
  const int offset = layout.count;
  layout.slices.push_back({std::move(name), offset, static_cast<int>(values.size())});
  theta.insert(theta.end(), values.begin(), values.end());
  layout.count += static_cast<int>(values.size());
  return offset;
}

// The largest fluid a scene may describe: its state (two velocity faces and the scalars per
// cell) at most 2^24 values, 128 MiB. Stepping it takes ~33 times that (measured: 790 B a cell
// at 512 x 512 with one scalar, trajectory output included), so the bound is ~4 GB of memory
// and a few seconds a step on one core: beyond it a request is a mistake more often than a plan,
// and it would end in an allocation failure minutes later instead of a message now.
constexpr long long kMaxFluidStateValues = 1LL << 24;

// An obstacle's θ values (ObstacleSpec's order): finite, semi-axes positive.
void check_obstacle(const std::string& fluid, const std::string& obstacle, std::array<double, kObstacleParams> values) {
  static const char* const names[kObstacleParams] = {"center[0]", "center[1]", "semi_axes[0]", "semi_axes[1]",
                                                     "angle",     "velocity[0]", "velocity[1]"};
  for (int k = 0; k < kObstacleParams; ++k) {
    const bool axis = k == 2 || k == 3;
    if (!std::isfinite(values[static_cast<std::size_t>(k)]) || (axis && !(values[static_cast<std::size_t>(k)] > 0.0)))
      throw Error(message("fluid '", fluid, "': obstacle '", obstacle, "': ", names[k], " must be ",
                          axis ? "positive and finite" : "finite", ", got ", values[static_cast<std::size_t>(k)]));
  }
}

}  // namespace

FluidBuild build_fluid(const FluidSpec& spec) {
  const std::string& n = spec.name;
  if (spec.nx < 2 || spec.ny < 2)
    throw Error(message("fluid '", n, "': resolution must be at least 2 cells per side, got nx = ", spec.nx,
                        ", ny = ", spec.ny));
  if (spec.scalar_count < 0)
    throw Error(message("fluid '", n, "': scalar_count must be non-negative, got ", spec.scalar_count));
  // Counted in doubles: nx, ny up to 2^16 each and any scalar count overflow an int product.
  const double state_values = static_cast<double>(spec.nx) * spec.ny * (2.0 + spec.scalar_count);
  if (state_values > static_cast<double>(kMaxFluidStateValues))
    throw Error(message("fluid '", n, "': resolution ", spec.nx, " x ", spec.ny, " with ", spec.scalar_count,
                        " scalars makes ", static_cast<long long>(state_values),
                        " state values (two velocities and the scalars per cell); a fluid holds at most ",
                        kMaxFluidStateValues, " (2^24: 2048 x 2048 with two scalars)"));
  if (!(spec.spacing > 0.0) || !std::isfinite(spec.spacing))
    throw Error(message("fluid '", n, "': spacing must be positive and finite, got ", spec.spacing));
  if (!(spec.dt > 0.0) || !std::isfinite(spec.dt))
    throw Error(message("fluid '", n, "': dt must be positive and finite, got ", spec.dt));
  if (!(spec.viscosity >= 0.0) || !std::isfinite(spec.viscosity))
    throw Error(message("fluid '", n, "': viscosity must be non-negative and finite, got ", spec.viscosity));
  if (!spec.buoyancy.empty() && static_cast<int>(spec.buoyancy.size()) != spec.scalar_count)
    throw Error(
        message("fluid '", n, "': buoyancy has ", spec.buoyancy.size(), " values for ", spec.scalar_count, " scalars"));
  for (std::size_t k = 0; k < spec.buoyancy.size(); ++k)
    if (!std::isfinite(spec.buoyancy[k]))
      throw Error(message("fluid '", n, "': buoyancy[", k, "] must be finite, got ", spec.buoyancy[k]));
  for (int side = 0; side < 4; ++side)
    if (!std::isfinite(spec.walls[side].tangential_velocity))
      throw Error(message("fluid '", n, "': ", side_name(side), " wall's tangential_velocity must be finite, got ",
                          spec.walls[side].tangential_velocity));
  if (!(spec.viscosity_theta >= 0.5 && spec.viscosity_theta <= 1.0))
    throw Error(message("fluid '", n, "': viscosity_theta must be in [0.5, 1], got ", spec.viscosity_theta));
  if (!(spec.max_cfl > 0.0 && spec.max_cfl <= 20.0))
    throw Error(message("fluid '", n, "': max_cfl must be in (0, 20], got ", spec.max_cfl));
  if (!spec.scalar_names.empty() && static_cast<int>(spec.scalar_names.size()) != spec.scalar_count)
    throw Error(message("fluid '", n, "': scalar_names has ", spec.scalar_names.size(), " names for ", spec.scalar_count,
                        " scalars"));
  for (std::size_t k = 0; k < spec.scalar_names.size(); ++k) {
    const std::string& name = spec.scalar_names[k];
    if (name.empty() || name.find('/') != std::string::npos)
      throw Error(message("fluid '", n, "': scalar name '", name, "' must be non-empty and without '/'"));
    for (std::size_t j = 0; j < k; ++j)
      if (spec.scalar_names[j] == name) throw Error(message("fluid '", n, "': scalar name '", name, "' is given twice"));
  }
  if (!(spec.obstacle_permeability > 0.0) || !std::isfinite(spec.obstacle_permeability))
    throw Error(message("fluid '", n, "': obstacle_permeability must be positive and finite, got ",
                        spec.obstacle_permeability));
  if (!(spec.obstacle_band > 0.0) || !std::isfinite(spec.obstacle_band))
    throw Error(message("fluid '", n, "': obstacle_band must be positive and finite (cells), got ", spec.obstacle_band));
  for (std::size_t k = 0; k < spec.obstacles.size(); ++k) {
    const ObstacleSpec& o = spec.obstacles[k];
    if (o.name.empty() || o.name.find('/') != std::string::npos)
      throw Error(message("fluid '", n, "': obstacle ", k, "'s name '", o.name, "' must be non-empty and without '/'"));
    for (std::size_t j = 0; j < k; ++j)
      if (spec.obstacles[j].name == o.name)
        throw Error(message("fluid '", n, "': obstacle name '", o.name, "' is given twice"));
    check_obstacle(n, o.name, {o.center[0], o.center[1], o.semi_axes[0], o.semi_axes[1], o.angle, o.velocity[0],
                               o.velocity[1]});
    const double width = spec.nx * spec.spacing, height = spec.ny * spec.spacing;
    if (!(o.center[0] >= 0.0 && o.center[0] <= width && o.center[1] >= 0.0 && o.center[1] <= height))
      throw Error(message("fluid '", n, "': obstacle '", o.name, "': center (", o.center[0], ", ", o.center[1],
                          ") lies outside the domain [0, ", width, "] x [0, ", height, "]"));
  }
  const FluidSolverSettings& solver = spec.solver;
  if (!(solver.relative_tolerance > 0.0 && solver.relative_tolerance < 1.0))
    throw Error(
        message("fluid '", n, "': solver relative_tolerance must be in (0, 1), got ", solver.relative_tolerance));
  if (solver.max_iterations < 1)
    throw Error(message("fluid '", n, "': solver max_iterations must be positive, got ", solver.max_iterations));
  if (solver.smoothing_sweeps < 1)
    throw Error(message("fluid '", n, "': solver smoothing_sweeps must be positive, got ", solver.smoothing_sweeps));

  FluidBuild built;
  FluidModel& model = built.model;
  model.name = spec.name;
  model.nx = spec.nx;
  model.ny = spec.ny;
  model.spacing = spec.spacing;
  model.dt = spec.dt;
  model.scalar_count = spec.scalar_count;
  model.scalar_names = spec.scalar_names;
  for (int k = static_cast<int>(model.scalar_names.size()); k < spec.scalar_count; ++k)
    model.scalar_names.push_back("scalar" + std::to_string(k));
  model.walls = spec.walls;
  model.advection = spec.advection;
  model.viscosity_theta = spec.viscosity_theta;
  model.max_cfl = spec.max_cfl;
  model.solver = spec.solver;
  std::vector<double>& theta = built.params.values;
  model.layout.viscosity = add_slice(model.layout, theta, "fluid/viscosity", {spec.viscosity});
  model.layout.buoyancy = add_slice(
      model.layout, theta, "fluid/buoyancy",
      spec.buoyancy.empty() ? std::vector<double>(static_cast<std::size_t>(spec.scalar_count), 0.0) : spec.buoyancy);
  model.obstacle_permeability = spec.obstacle_permeability;
  model.obstacle_band = spec.obstacle_band;
  model.layout.obstacles = model.layout.count;
  for (const ObstacleSpec& o : spec.obstacles) {
    model.obstacle_names.push_back(o.name);
    const std::string prefix = "fluid/obstacle/" + o.name + "/";
    add_slice(model.layout, theta, prefix + "center", {o.center[0], o.center[1]});
    add_slice(model.layout, theta, prefix + "semi_axes", {o.semi_axes[0], o.semi_axes[1]});
    add_slice(model.layout, theta, prefix + "angle", {o.angle});
    add_slice(model.layout, theta, prefix + "velocity", {o.velocity[0], o.velocity[1]});
  }
  built.state.velocities.assign(static_cast<std::size_t>(model.velocity_count()), 0.0);
  built.state.scalars.assign(static_cast<std::size_t>(model.scalar_count) * model.cell_count(), 0.0);
  return built;
}

std::span<double> FluidParams::slice(const FluidModel& model, std::string_view name) {
  for (const FluidParamLayout::Slice& s : model.layout.slices)
    if (s.name == name)
      return std::span<double>(values).subspan(static_cast<std::size_t>(s.offset), static_cast<std::size_t>(s.size));
  throw Error(message("fluid params: no slice named '", name,
                      "' (fluid/viscosity, fluid/buoyancy, fluid/obstacle/<name>/center|semi_axes|angle|velocity)"));
}
std::span<const double> FluidParams::slice(const FluidModel& model, std::string_view name) const {
  return const_cast<FluidParams*>(this)->slice(model, name);
}

void validate_fluid_params(const FluidModel& model, const FluidParams& params) {
  if (static_cast<int>(params.values.size()) != model.param_count())
    throw Error(
        message("fluid '", model.name, "': θ has ", params.values.size(), " values, the model ", model.param_count()));
  const double viscosity = params.values[static_cast<std::size_t>(model.layout.viscosity)];
  if (!(viscosity >= 0.0) || !std::isfinite(viscosity))
    throw Error(message("fluid '", model.name, "': fluid/viscosity must be non-negative and finite, got ", viscosity));
  for (int k = 0; k < model.scalar_count; ++k) {
    const double beta = params.values[static_cast<std::size_t>(model.layout.buoyancy + k)];
    if (!std::isfinite(beta))
      throw Error(message("fluid '", model.name, "': fluid/buoyancy[", k, "] must be finite, got ", beta));
  }
  for (int o = 0; o < model.obstacle_count(); ++o) {
    std::array<double, kObstacleParams> values{};
    std::copy_n(params.values.begin() + model.layout.obstacles + kObstacleParams * o, kObstacleParams, values.begin());
    check_obstacle(model.name, model.obstacle_names[static_cast<std::size_t>(o)], values);
  }
}

void validate_fluid_state(const FluidModel& model, const FluidState& state) {
  const std::string& n = model.name;
  if (static_cast<int>(state.velocities.size()) != model.velocity_count())
    throw Error(message("fluid '", n, "': state has ", state.velocities.size(), " velocities, the grid ",
                        model.velocity_count(), " faces"));
  if (state.scalars.size() != static_cast<std::size_t>(model.scalar_count) * model.cell_count())
    throw Error(message("fluid '", n, "': state has ", state.scalars.size(), " scalar values, expected ",
                        model.scalar_count, " x ", model.cell_count()));
  double speed = 0.0;
  for (std::size_t k = 0; k < state.velocities.size(); ++k) {
    if (!std::isfinite(state.velocities[k]))
      throw Error(message("fluid '", n, "': velocity of face ", k, " must be finite, got ", state.velocities[k]));
    speed = std::max(speed, std::abs(state.velocities[k]));
  }
  for (std::size_t k = 0; k < state.scalars.size(); ++k)
    if (!std::isfinite(state.scalars[k]))
      throw Error(message("fluid '", n, "': scalar value ", k, " must be finite, got ", state.scalars[k]));
  const int nx = model.nx, ny = model.ny;
  for (int j = 0; j < ny; ++j)
    for (const int i : {0, nx})
      if (state.velocities[static_cast<std::size_t>(j * (nx + 1) + i)] != 0.0)
        throw Error(message("fluid '", n, "': u face (", i, ", ", j, ") lies on a wall and must be 0, got ",
                            state.velocities[static_cast<std::size_t>(j * (nx + 1) + i)]));
  for (const int j : {0, ny})
    for (int i = 0; i < nx; ++i)
      if (state.velocities[static_cast<std::size_t>(model.u_count() + j * nx + i)] != 0.0)
        throw Error(message("fluid '", n, "': v face (", i, ", ", j, ") lies on a wall and must be 0, got ",
                            state.velocities[static_cast<std::size_t>(model.u_count() + j * nx + i)]));
  const double cfl = speed * model.dt / model.spacing;
  if (cfl > model.max_cfl)
    throw Error(message("fluid '", n, "': CFL number ", cfl, " (max |u| ", speed, " m/s x dt ", model.dt,
                        " s / spacing ", model.spacing, " m) exceeds max_cfl ", model.max_cfl));
}

FluidWorkspace::Impl::Impl(const FluidModel& model)
    : velocity_count(model.velocity_count()),
      cell_count(model.cell_count()),
      scalar_count(model.scalar_count),
      lattice_max(std::max(model.u_count(), model.v_count())),
      pressure_solver(model) {
  const std::size_t faces = static_cast<std::size_t>(velocity_count);
  for (std::vector<double>* buffer : {&advected, &forced, &viscous, &rhs, &adjoint, &solve_residual, &solve_direction,
                                      &solve_preconditioned, &solve_product, &velocity_bar, &viscous_bar, &forced_bar})
    buffer->assign(faces, 0.0);
  pressure.assign(static_cast<std::size_t>(cell_count), 0.0);
  divergence = pressure;
  scalars_advected.assign(static_cast<std::size_t>(scalar_count) * cell_count, 0.0);
  scalars_bar = scalars_advected;
  for (std::vector<double>* buffer : {&hat, &check, &hat_bar, &check_bar, &low, &high})
    buffer->assign(static_cast<std::size_t>(lattice_max), 0.0);
  obstacle_forces.assign(2 * static_cast<std::size_t>(model.obstacle_count()), 0.0);
}

std::span<const double> FluidWorkspace::obstacle_forces() const { return impl_->obstacle_forces; }

FluidWorkspace::FluidWorkspace(const FluidModel& model) : impl_(std::make_unique<Impl>(model)) {}
FluidWorkspace::~FluidWorkspace() = default;
FluidWorkspace::FluidWorkspace(FluidWorkspace&&) noexcept = default;
FluidWorkspace& FluidWorkspace::operator=(FluidWorkspace&&) noexcept = default;

double kinetic_energy(const FluidModel& model, const FluidState& state) {
  double sum = 0.0;
  for (const double value : state.velocities) sum += value * value;  // wall faces are 0
  return 0.5 * sum * model.spacing * model.spacing;
}

double scalar_mass(const FluidModel& model, const FluidState& state, int scalar) {
  if (scalar < 0 || scalar >= model.scalar_count)
    throw Error(message("scalar_mass: unknown scalar ", scalar, " (the model has ", model.scalar_count, ")"));
  double sum = 0.0;
  const std::size_t offset = static_cast<std::size_t>(scalar) * model.cell_count();
  for (int c = 0; c < model.cell_count(); ++c) sum += state.scalars[offset + c];
  return sum * model.spacing * model.spacing;
}

double divergence_rms(const FluidModel& model, std::span<const double> velocities) {
  std::vector<double> divergence(static_cast<std::size_t>(model.cell_count()));
  cell_divergence(model, velocities.data(), divergence.data());
  double sum = 0.0;
  for (const double d : divergence) sum += d * d;
  return std::sqrt(sum / model.cell_count());
}

}  // namespace diffphys::fluid
