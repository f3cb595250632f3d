// bench/diffphys_scenes.hpp — owns the diffphys side of the benchmark models: one function
// per model, each returning a freshly built Scene from the constants of bench_models.hpp.
#pragma once

#include "diffphys/model.hpp"
#include "diffphys/model_builder.hpp"

namespace diffphys::bench {

// `link_count` capsule links on revolute joints (axis y), hanging from the world, simulated
// in maximal or in joint coordinates (Coordinates::Reduced, rigid/articulated.hpp).
Scene build_chain_scene(int link_count, Coordinates coordinates = Coordinates::Maximal);

// The same chain with a motor on every hinge ("motor<k>" on "hinge<k>", torque unbounded):
// scene.controls holds the N hinge torques, all zero.
Scene build_motor_chain_scene(int link_count, Coordinates coordinates = Coordinates::Maximal);

// One sphere above the ground plane, restitution 0.5.
Scene build_bouncing_sphere_scene();

// The 4-DoF servo arm; scene.controls holds the servo targets.
Scene build_arm_scene();

// 100 spheres above the floor of an open box, solved with `solver` (the complementarity
// formulation) or by the convex formulation's Newton method.
Scene build_sphere_pile_scene(SolverType solver, Formulation formulation = Formulation::Complementarity);

// `height` cubes stacked on the ground plane, 1 mm apart at release (BoxTowerDimensions).
Scene build_box_tower_scene(int height, SolverType solver, Formulation formulation);

// 27 turned cubes above the floor of the pile's open box (BoxPileDimensions).
Scene build_box_pile_scene(SolverType solver, Formulation formulation);

// MuJoCo's humanoid.xml (HumanoidDimensions::mjcf_path) through diffphys' MJCF loader, in the
// given formulation (the loader's warnings are in scene.warnings).
Scene build_humanoid_scene(Formulation formulation);

// The same pile after SpherePileDimensions::settle_steps steps with projected Gauss–Seidel
// (~10 s of stepping): scene.state is the settled pile, the scene solves with `solver`.
Scene build_settled_sphere_pile_scene(SolverType solver);

}  // namespace diffphys::bench
