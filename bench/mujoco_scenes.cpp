// bench/mujoco_scenes.cpp — owns the MJCF versions of the benchmark models and their loading.
//
// Each document mirrors the diffphys scene of diffphys_scenes.cpp: same bodies, masses and
// inertias (given with <inertial>, so MuJoCo does not derive them from the geoms), same
// sizes, same time step, integrator Euler, MuJoCo's default solver unless the benchmark asks
// otherwise. Where the engines differ in kind, the closest MuJoCo setting is used and named
// in a comment (restitution as a contact damping ratio, the servo as a velocity actuator).
#include "mujoco_scenes.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <numbers>
#include <sstream>
#include <stdexcept>

#include "bench_models.hpp"

namespace diffphys::bench {
namespace {

// A stream that prints doubles exactly (round-trip precision).
std::ostringstream exact_stream() {
  std::ostringstream out;
  out.precision(17);
  return out;
}

// MuJoCo's three friction coefficients with our Coulomb coefficient for sliding and its
// defaults for torsion and rolling.
std::string friction_attribute(double coulomb) {
  std::ostringstream out = exact_stream();
  out << "friction=\"" << coulomb << " 0.005 0.0001\"";
  return out.str();
}

std::string option_element(double time_step, std::string_view solver = "Newton", std::string_view cone = "pyramidal") {
  std::ostringstream out = exact_stream();
  out << "  <option timestep=\"" << time_step << "\" integrator=\"Euler\" solver=\"" << solver << "\" cone=\"" << cone
      << "\" iterations=\"100\"/>\n";
  return out.str();
}

// The pile's open box: four wall geoms on the world body.
std::string open_box_geoms(double friction) {
  using D = SpherePileDimensions;
  std::ostringstream out = exact_stream();
  const double wall_center = D::box_inner_half_width + D::wall_half_thickness;
  const double outer_half_width = D::box_inner_half_width + 2 * D::wall_half_thickness;
  const struct {
    double x, y, half_x, half_y;
  } walls[4] = {
      {-wall_center, 0, D::wall_half_thickness, outer_half_width},
      {wall_center, 0, D::wall_half_thickness, outer_half_width},
      {0, -wall_center, D::box_inner_half_width, D::wall_half_thickness},
      {0, wall_center, D::box_inner_half_width, D::wall_half_thickness},
  };
  for (const auto& wall : walls)
    out << "    <geom type=\"box\" pos=\"" << wall.x << ' ' << wall.y << ' ' << D::wall_half_height << "\" size=\""
        << wall.half_x << ' ' << wall.half_y << ' ' << D::wall_half_height << "\" " << friction_attribute(friction)
        << "/>\n";
  return out.str();
}

// A free cube: its body (position, optional turn as an axis and angle), inertia and geom.
std::string cube_body(const std::string& name, double x, double y, double z, const double* axis, double angle,
                      double half_size, double mass, double friction) {
  const double inertia = mass * (2 * half_size) * (2 * half_size) / 6.0;
  std::ostringstream out = exact_stream();
  out << "    <body name=\"" << name << "\" pos=\"" << x << ' ' << y << ' ' << z << "\"";
  if (axis != nullptr) out << " axisangle=\"" << axis[0] << ' ' << axis[1] << ' ' << axis[2] << ' ' << angle << "\"";
  out << ">\n      <freejoint/>\n"
      << "      <inertial pos=\"0 0 0\" mass=\"" << mass << "\" diaginertia=\"" << inertia << ' ' << inertia << ' '
      << inertia << "\"/>\n"
      << "      <geom type=\"box\" size=\"" << half_size << ' ' << half_size << ' ' << half_size << "\" "
      << friction_attribute(friction) << "/>\n"
      << "    </body>\n";
  return out.str();
}

}  // namespace

double damping_ratio_for_restitution(double restitution) {
  const double log_e = std::log(restitution);
  return -log_e / std::sqrt(std::numbers::pi * std::numbers::pi + log_e * log_e);
}

std::string chain_mjcf(int link_count) {
  using D = ChainDimensions;
  std::ostringstream out = exact_stream();
  out << "<mujoco model=\"chain" << link_count << "\">\n"
      << "  <compiler angle=\"radian\"/>\n"
      << option_element(D::time_step) << "  <worldbody>\n";
  // Nested bodies: each link's frame sits on its hinge with x along the link; the first is
  // turned about y so the chain starts at release_angle from the downward vertical.
  std::string indent = "    ";
  for (int link = 0; link < link_count; ++link) {
    out << indent << "<body name=\"link" << link << "\" ";
    if (link == 0)
      out << "pos=\"0 0 " << D::pivot_height << "\" euler=\"0 " << (std::numbers::pi / 2 - D::release_angle)
          << " 0\">\n";
    else
      out << "pos=\"" << D::link_length << " 0 0\">\n";
    out << indent << "  <joint name=\"hinge" << link << "\" type=\"hinge\" axis=\"0 1 0\"/>\n"
        << indent << "  <inertial pos=\"" << 0.5 * D::link_length << " 0 0\" mass=\"" << D::link_mass
        << "\" diaginertia=\"" << D::axial_inertia << ' ' << D::transverse_inertia << ' ' << D::transverse_inertia
        << "\"/>\n"
        << indent << "  <geom type=\"capsule\" fromto=\"" << D::link_radius << " 0 0 "
        << D::link_length - D::link_radius << " 0 0\" size=\"" << D::link_radius
        << "\" contype=\"0\" conaffinity=\"0\"/>\n";
    indent += "  ";
  }
  for (int link = link_count - 1; link >= 0; --link) {
    indent.resize(indent.size() - 2);
    out << indent << "</body>\n";
  }
  out << "  </worldbody>\n</mujoco>\n";
  return out.str();
}

std::string motor_chain_mjcf(int link_count) {
  std::string text = chain_mjcf(link_count);
  std::ostringstream actuators;
  actuators << "  <actuator>\n";
  for (int link = 0; link < link_count; ++link)
    actuators << "    <motor name=\"motor" << link << "\" joint=\"hinge" << link << "\" gear=\"1\"/>\n";
  actuators << "  </actuator>\n";
  const std::string closing = "</mujoco>";
  text.insert(text.rfind(closing), actuators.str());
  return text;
}

std::string bouncing_sphere_mjcf() {
  using D = BouncingSphereDimensions;
  // MuJoCo has no restitution coefficient: contacts are damped springs. The bounce comes from
  // an underdamped contact (solref = time constant, damping ratio) on both geoms, so that
  // MuJoCo's mixing of the two geoms' solref leaves it unchanged.
  std::ostringstream solref = exact_stream();
  solref << "solref=\"" << D::mujoco_contact_time_constant << ' ' << damping_ratio_for_restitution(D::restitution)
         << "\"";
  std::ostringstream out = exact_stream();
  out << "<mujoco model=\"bouncing_sphere\">\n"
      << option_element(D::time_step) << "  <worldbody>\n"
      << "    <geom name=\"ground\" type=\"plane\" size=\"0 0 1\" " << friction_attribute(D::friction) << ' '
      << solref.str() << "/>\n"
      << "    <body name=\"sphere\" pos=\"0 0 " << D::drop_height << "\">\n"
      << "      <freejoint/>\n"
      << "      <inertial pos=\"0 0 0\" mass=\"" << D::mass << "\" diaginertia=\"" << D::inertia << ' ' << D::inertia
      << ' ' << D::inertia << "\"/>\n"
      << "      <geom type=\"sphere\" size=\"" << D::radius << "\" " << friction_attribute(D::friction) << ' '
      << solref.str() << "/>\n"
      << "    </body>\n  </worldbody>\n</mujoco>\n";
  return out.str();
}

std::string arm_mjcf() {
  using D = ArmDimensions;
  std::ostringstream out = exact_stream();
  out << "<mujoco model=\"servo_arm_4dof\">\n" << option_element(D::time_step) << "  <worldbody>\n";
  const char* link_names[2] = {"upper_arm", "forearm"};
  const char* joint_names[2] = {"shoulder", "elbow"};
  std::string indent = "    ";
  for (int link = 0; link < 2; ++link) {
    // A universal joint is two hinges in one body: about x (fixed in the parent), then about
    // y (carried by the first rotation, so fixed in the child) — diffphys' axis and axis2.
    out << indent << "<body name=\"" << link_names[link] << "\" pos=\"0 0 "
        << (link == 0 ? D::shoulder_height : -D::link_length) << "\">\n"
        << indent << "  <joint name=\"" << joint_names[link] << "_x\" type=\"hinge\" axis=\"1 0 0\"/>\n"
        << indent << "  <joint name=\"" << joint_names[link] << "_y\" type=\"hinge\" axis=\"0 1 0\"/>\n"
        << indent << "  <inertial pos=\"0 0 " << -0.5 * D::link_length << "\" mass=\"" << D::link_mass
        << "\" diaginertia=\"" << D::transverse_inertia << ' ' << D::transverse_inertia << ' ' << D::axial_inertia
        << "\"/>\n"
        << indent << "  <geom type=\"capsule\" fromto=\"0 0 " << -D::link_radius << " 0 0 "
        << -(D::link_length - D::link_radius) << "\" size=\"" << D::link_radius
        << "\" contype=\"0\" conaffinity=\"0\"/>\n";
    indent += "  ";
  }
  out << "      </body>\n    </body>\n  </worldbody>\n  <actuator>\n";
  // The servo as a velocity actuator: force kv·(ctrl − q̇) clipped to the torque bound, the
  // control (the desired velocity) clipped to the velocity bound; the benchmark sets
  // ctrl = gain·(target − q) before each step.
  for (int link = 0; link < 2; ++link)
    for (const char* axis : {"_x", "_y"})
      out << "    <velocity name=\"" << joint_names[link] << axis << "\" joint=\"" << joint_names[link] << axis
          << "\" kv=\"" << D::mujoco_velocity_gain << "\" ctrllimited=\"true\" ctrlrange=\"" << -D::servo_max_velocity
          << ' ' << D::servo_max_velocity << "\" forcelimited=\"true\" forcerange=\"" << -D::servo_max_torque << ' '
          << D::servo_max_torque << "\"/>\n";
  out << "  </actuator>\n</mujoco>\n";
  return out.str();
}

std::string sphere_pile_mjcf(std::string_view solver, std::string_view cone) {
  using D = SpherePileDimensions;
  std::ostringstream out = exact_stream();
  out << "<mujoco model=\"sphere_pile\">\n"
      << "  <size njmax=\"8000\" nconmax=\"2000\"/>\n"  // room for every contact of the pile
      << option_element(D::time_step, solver, cone) << "  <worldbody>\n"
      << "    <geom name=\"ground\" type=\"plane\" size=\"0 0 1\" " << friction_attribute(D::friction) << "/>\n"
      << open_box_geoms(D::friction);
  for (int index = 0; index < D::sphere_count; ++index) {
    double x = 0, y = 0, z = 0;
    D::initial_position(index, x, y, z);
    out << "    <body name=\"sphere" << index << "\" pos=\"" << x << ' ' << y << ' ' << z << "\">\n"
        << "      <freejoint/>\n"
        << "      <inertial pos=\"0 0 0\" mass=\"" << D::mass << "\" diaginertia=\"" << D::inertia << ' ' << D::inertia
        << ' ' << D::inertia << "\"/>\n"
        << "      <geom type=\"sphere\" size=\"" << D::radius << "\" " << friction_attribute(D::friction) << "/>\n"
        << "    </body>\n";
  }
  out << "  </worldbody>\n</mujoco>\n";
  return out.str();
}

std::string box_tower_mjcf(int height) {
  using D = BoxTowerDimensions;
  std::ostringstream out = exact_stream();
  out << "<mujoco model=\"box_tower" << height << "\">\n"
      << "  <size njmax=\"4000\" nconmax=\"1000\"/>\n"
      << option_element(D::time_step, "Newton", "elliptic") << "  <worldbody>\n"
      << "    <geom name=\"ground\" type=\"plane\" size=\"0 0 1\" " << friction_attribute(D::friction) << "/>\n";
  for (int level = 0; level < height; ++level)
    out << cube_body("box" + std::to_string(level), 0, 0, D::centre_height(level), nullptr, 0, D::half_size, D::mass,
                     D::friction);
  out << "  </worldbody>\n</mujoco>\n";
  return out.str();
}

std::string box_pile_mjcf() {
  using D = BoxPileDimensions;
  std::ostringstream out = exact_stream();
  out << "<mujoco model=\"box_pile\">\n"
      << "  <compiler angle=\"radian\"/>\n"
      << "  <size njmax=\"4000\" nconmax=\"1000\"/>\n"
      << option_element(D::time_step, "Newton", "elliptic") << "  <worldbody>\n"
      << "    <geom name=\"ground\" type=\"plane\" size=\"0 0 1\" " << friction_attribute(D::friction) << "/>\n"
      << open_box_geoms(D::friction);
  for (int index = 0; index < D::box_count; ++index) {
    double x = 0, y = 0, z = 0, angle = 0, axis[3] = {0, 0, 1};
    D::initial_position(index, x, y, z);
    D::initial_turn(index, angle, axis);
    out << cube_body("box" + std::to_string(index), x, y, z, axis, angle, D::half_size, D::mass, D::friction);
  }
  out << "  </worldbody>\n</mujoco>\n";
  return out.str();
}

std::string humanoid_mjcf() {
  std::ifstream file(HumanoidDimensions::mjcf_path);
  if (!file)
    throw std::runtime_error(std::string("cannot read ") + HumanoidDimensions::mjcf_path +
                             " (Debian package libmujoco-samples)");
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

void use_newton_elliptic(mjModel* model) {
  model->opt.solver = mjSOL_NEWTON;
  model->opt.cone = mjCONE_ELLIPTIC;
}

MujocoWorld::MujocoWorld(const std::string& mjcf_text) {
  // mjVFS holds fixed arrays of file names (megabytes): on the heap, never on the stack.
  auto vfs = std::make_unique<mjVFS>();
  mj_defaultVFS(vfs.get());
  const char* file_name = "benchmark_model.xml";
  if (mj_makeEmptyFileVFS(vfs.get(), file_name, static_cast<int>(mjcf_text.size())) != 0)
    throw std::runtime_error("MuJoCo: could not create the in-memory model file");
  const int file = mj_findFileVFS(vfs.get(), file_name);
  std::memcpy(vfs->filedata[file], mjcf_text.data(), mjcf_text.size());
  char error[1024] = "";
  model_ = mj_loadXML(file_name, vfs.get(), error, sizeof error);
  mj_deleteVFS(vfs.get());
  if (model_ == nullptr) throw std::runtime_error(std::string("MuJoCo could not load the benchmark model: ") + error);
  data_ = mj_makeData(model_);
  if (data_ == nullptr) {
    mj_deleteModel(model_);
    throw std::runtime_error("MuJoCo: mj_makeData failed");
  }
}

MujocoWorld::~MujocoWorld() {
  mj_deleteData(data_);
  mj_deleteModel(model_);
}

}  // namespace diffphys::bench
