// bench/bench_models.hpp — owns the numbers that define the benchmark models.
//
// Both engines build their version of each model from these constants (diffphys through
// ModelBuilder in diffphys_scenes.cpp, MuJoCo through MJCF text in mujoco_scenes.cpp), so a
// mass, a size or a time step cannot differ between the two sides of a comparison.
// SI units, z up (DESIGN.md §5).
#pragma once

#include <numbers>

namespace diffphys::bench {

// N-link hinge chain: capsule links hanging from a world pivot, revolute joints about y,
// released straight at an angle from the downward vertical, no damping, no contact.
struct ChainDimensions {
  static constexpr double time_step = 1e-3;                      // s
  static constexpr double link_length = 0.1;                     // m, end to end (caps included)
  static constexpr double link_radius = 0.01;                    // m
  static constexpr double link_mass = 0.1;                       // kg
  static constexpr double pivot_height = 2.0;                    // m
  static constexpr double release_angle = std::numbers::pi / 3;  // rad from the downward vertical
  // Principal moments about the link's centre, link along body x: a slender rod about its
  // two transverse axes (m L²/12) and a solid cylinder about its own axis (m r²/2).
  static constexpr double axial_inertia = 0.5 * link_mass * link_radius * link_radius;
  static constexpr double transverse_inertia = link_mass * link_length * link_length / 12.0;
  // The chain in joint coordinates is put back at its release every 5 s of timed steps: its
  // semi-implicit Euler gains energy over long undamped runs (docs/simulation.md, "Reduced
  // coordinates"), and the 20- and 50-link chains whip into non-finite states after ~10 s.
  static constexpr int reduced_reset_period_steps = 5000;
};

// A sphere dropped on the ground plane; the state is reset to the drop every
// `reset_period_steps` so that the measured steps mix free flight, impacts and resting contact.
struct BouncingSphereDimensions {
  static constexpr double time_step = 1e-3;   // s
  static constexpr double radius = 0.1;       // m
  static constexpr double mass = 1.0;         // kg
  static constexpr double drop_height = 1.0;  // m, centre above the ground
  static constexpr double restitution = 0.5;
  static constexpr double friction = 0.5;
  static constexpr int reset_period_steps = 2000;                  // 2 s: the fall, the bounces, ~0.7 s at rest
  static constexpr double inertia = 0.4 * mass * radius * radius;  // solid sphere
  // MuJoCo's contact is a damped spring (solref = time constant, damping ratio); with this
  // time constant the damping ratio of an ideal spring with restitution 0.5 gives a measured
  // bounce of 0.49 (bench/crosscheck.cpp). Shorter ones are too coarse for the 1 ms step.
  static constexpr double mujoco_contact_time_constant = 0.01;  // s
};

// The 4-DoF arm of Degrave et al. 2019 §3.2.1: two universal joints (shoulder on the world,
// elbow between the links), each coordinate driven by a position servo. Total length 1 m and
// total mass 32 kg, split into two equal capsule links hanging from the shoulder. Axes x then
// y at both joints, so every coordinate works against gravity. With a 30 N·m torque bound
// the arm can only hold small angles (the horizontal arm would need ~160 N·m), hence the
// small targets. Starting straight down, the arm swings past the targets with the shoulder
// torque saturated and settles on them after ~1.5 s (both engines alike, see
// crosscheck.cpp); the warm-up covers that, so the timed steps hold the targets.
struct ArmDimensions {
  static constexpr double time_step = 1e-3;                           // s
  static constexpr double link_length = 0.5;                          // m, each of the two links
  static constexpr double link_radius = 0.05;                         // m
  static constexpr double link_mass = 16.0;                           // kg, each of the two links
  static constexpr double shoulder_height = 1.5;                      // m
  static constexpr double servo_gain = 30.0;                          // 1/s
  static constexpr double servo_max_torque = 30.0;                    // N·m
  static constexpr double servo_max_velocity = std::numbers::pi / 4;  // rad/s (45°/s)
  // Servo targets, rad: shoulder (about x, about y), elbow (about x, about y).
  static constexpr double targets[4] = {0.10, -0.10, 0.20, 0.15};
  static constexpr double axial_inertia = 0.5 * link_mass * link_radius * link_radius;
  static constexpr double transverse_inertia = link_mass * link_length * link_length / 12.0;
  // MuJoCo has no hard velocity servo: it gets a velocity actuator with this gain, its force
  // clipped to ±servo_max_torque and its control set to clip(gain·(target − q), ±max velocity)
  // before each step. 500 N·m·s/rad is stiff yet stable for explicit Euler at 1 ms (the
  // lightest coordinate has ~1.3 kg·m², so kv·dt/I ≈ 0.4).
  static constexpr double mujoco_velocity_gain = 500.0;  // N·m·s/rad
};

// 100 spheres dropped in a loose 5×5×4 grid into an open box (ground plane plus four static
// wall boxes). Odd layers are shifted so the grid collapses into a pile instead of a stack.
struct SpherePileDimensions {
  static constexpr double time_step = 1e-3;  // s
  static constexpr int grid_x = 5, grid_y = 5, layers = 4;
  static constexpr int sphere_count = grid_x * grid_y * layers;
  static constexpr double radius = 0.05;  // m
  static constexpr double mass = 0.1;     // kg
  static constexpr double friction = 0.5;
  static constexpr double grid_spacing = 0.12;                     // m, horizontal
  static constexpr double layer_spacing = 0.12;                    // m, vertical
  static constexpr double lowest_layer_height = 0.1;               // m, centres of the bottom layer
  static constexpr double odd_layer_shift = 0.02;                  // m, +x and −y on odd layers
  static constexpr double box_inner_half_width = 0.32;             // m, inside faces of the walls at ±this
  static constexpr double wall_half_thickness = 0.05;              // m
  static constexpr double wall_half_height = 0.3;                  // m, walls span z ∈ [0, 0.6]
  static constexpr int settle_steps = 1000;                        // 1 s simulated before timing starts
  static constexpr double inertia = 0.4 * mass * radius * radius;  // solid sphere

  // Centre of sphere `index` at release: x fastest, then y, then the layer.
  static constexpr void initial_position(int index, double& x, double& y, double& z) {
    const int ix = index % grid_x;
    const int iy = (index / grid_x) % grid_y;
    const int layer = index / (grid_x * grid_y);
    const double shift = (layer % 2 == 1) ? odd_layer_shift : 0.0;
    x = (ix - (grid_x - 1) / 2.0) * grid_spacing + shift;
    y = (iy - (grid_y - 1) / 2.0) * grid_spacing - shift;
    z = lowest_layer_height + layer * layer_spacing;
  }
};

// A tower of equal cubes stacked on the ground plane, each centred on the one below, started
// 1 mm apart so that the tower settles onto its springs (the convex formulation) or its
// contacts before timing. Each face contact has 4 corner contacts: 4·N in all.
struct BoxTowerDimensions {
  static constexpr double time_step = 1e-3;  // s
  static constexpr double half_size = 0.05;  // m, half the cube's side
  static constexpr double mass = 0.5;        // kg
  static constexpr double friction = 0.5;
  static constexpr double start_gap = 1e-3;  // m, between neighbours and above the ground at release
  static constexpr double inertia = mass * (2 * half_size) * (2 * half_size) / 6.0;  // solid cube
  static constexpr int settle_steps = 500;
  static constexpr int heights[] = {1, 2, 4, 8, 16, 32};

  static constexpr double centre_height(int level) { return half_size + start_gap + level * (2 * half_size + start_gap); }
};

// 27 cubes in a 3×3×3 grid, each turned about its own axis, dropped into the open box of the
// sphere pile: they tumble, hit the floor, the walls and each other, and come to rest. The
// state is reset to the drop every `reset_period_steps`, so the timed steps mix the tumble and
// the settling (as the bouncing sphere's do).
struct BoxPileDimensions {
  static constexpr double time_step = 1e-3;  // s
  static constexpr int grid = 3;
  static constexpr int box_count = grid * grid * grid;
  static constexpr double half_size = 0.05;  // m
  static constexpr double mass = 0.2;        // kg
  static constexpr double friction = 0.5;
  static constexpr double grid_spacing = 0.16;          // m
  static constexpr double lowest_layer_height = 0.15;   // m
  static constexpr double inertia = mass * (2 * half_size) * (2 * half_size) / 6.0;
  static constexpr int reset_period_steps = 1500;       // 1.5 s: the fall, the tumble, the pile at rest

  static constexpr void initial_position(int index, double& x, double& y, double& z) {
    const int ix = index % grid, iy = (index / grid) % grid, layer = index / (grid * grid);
    x = (ix - 1) * grid_spacing;
    y = (iy - 1) * grid_spacing;
    z = lowest_layer_height + layer * grid_spacing;
  }
  // The turn of box `index` as an angle about a unit axis (x, y, z).
  static constexpr void initial_turn(int index, double& angle, double axis[3]) {
    angle = 0.4 + 0.37 * index;
    const double raw[3] = {1.0 + index % 3, 2.0 - index % 2, 0.5 + index % 5};
    const double norm2 = raw[0] * raw[0] + raw[1] * raw[1] + raw[2] * raw[2];
    // A unit vector without std::sqrt (not constexpr in C++20): Newton on √norm2 from above.
    double root = norm2;
    for (int k = 0; k < 30; ++k) root = 0.5 * (root + norm2 / root);
    for (int d = 0; d < 3; ++d) axis[d] = raw[d] / root;
  }
};

// MuJoCo's humanoid sample (Debian's libmujoco-samples), loaded from this one file by both
// engines: diffphys through its MJCF loader (diffphys/robot_loaders.hpp), MuJoCo through its
// own compiler. Everything comes from the file: bodies, geoms, masses, the 5 ms time step.
// Released at rest from the file's pose (qpos0: standing, feet 0.215 m above the floor), all
// controls zero: the body drops, lands on its feet after ~0.21 s, folds and falls, and lies on
// the floor, at rest, from ~2.5 s on (both engines; docs/BENCHMARKS.md). What diffphys
// approximates of the file (no joint springs, hips as ball joints, ...) is in its loader's
// warnings.
struct HumanoidDimensions {
  static constexpr const char* mjcf_path = "/usr/share/mujoco/model/humanoid/humanoid.xml";
  // The falling benchmarks put the humanoid back at its release every 0.5 s of timed steps.
  static constexpr int fall_period_steps = 100;
  // The lying benchmarks time steps from 3 s of simulated time on.
  static constexpr int lying_settle_steps = 600;
};

// Warm-up before timing, in steps: long enough that the step's buffers have grown to their
// steady size (contacts included) and the motion is past its start-up transient.
inline constexpr int chain_warmup_steps = 200;
inline constexpr int arm_warmup_steps = 2000;

}  // namespace diffphys::bench
