// tests/soft_test_scenes.hpp — small soft-body scenes shared by the soft_*_test files.
#pragma once

#include <string>

#include "diffphys/soft.hpp"
#include "diffphys/soft_mesh.hpp"

namespace diffphys::soft::testing {

// A damped spring chain: node 0 pinned, nodes 1–2 hanging, one attachment.
inline SoftSpec spring_chain_spec() {
  SoftSpec spec;
  spec.name = "spring_chain";
  spec.dt = 0.01;
  spec.nodes = {{0, 0, 1}, {0.3, 0, 0.9}, {0.5, 0.1, 0.7}};
  spec.node_masses = {0.0, 0.5, 0.3};
  spec.pinned = {0};
  spec.springs = {{0, 1, 60.0, 0.25, 0.4}, {1, 2, 40.0, 0.2, 0.2}};
  spec.attachments = {{2, {0.6, 0.0, 0.6}, 5.0}};
  return spec;
}

// Two one-cell tet boxes (Neo-Hookean and corotated) resting just above the ground, sliding.
inline SoftSpec tet_pair_spec() {
  SoftSpec spec;
  spec.name = "tet_pair";
  spec.dt = 0.01;
  spec.tet_materials = {{"rubber", ElasticModel::NeoHookean, 2e4, 0.3, 800.0, 5.0},
                        {"foam", ElasticModel::Corotated, 1e4, 0.25, 500.0, 0.0}};
  add_tet_box(spec, {0, 0, 0.0005}, {0.1, 0.1, 0.1}, {1, 1, 1}, 0);
  add_tet_box(spec, {0.3, 0, 0.05}, {0.1, 0.12, 0.08}, {1, 1, 1}, 1);
  spec.initial_velocities.assign(spec.nodes.size(), {0.3, 0.1, -0.05});
  spec.contact.barrier_distance = 1e-3;
  spec.contact.stiffness = 50.0;
  spec.obstacles = {{"ground", ObstacleType::Plane, {0, 0, 0}, {0, 0, 1}, 0.0, 0.5}};
  return spec;
}

// A 2 × 2 cloth with bending, pinned at one corner; its centre node starts within the
// sphere's barrier distance (0.7 mm), so contact and friction act from the first step.
inline SoftSpec small_cloth_spec() {
  SoftSpec spec;
  spec.name = "small_cloth";
  spec.dt = 0.01;
  spec.cloth_materials = {{"cotton", 50.0, 0.3, 2e-3, 0.2}};
  add_cloth_rectangle(spec, {-0.1, -0.1, 0.2}, {0.2, 0, 0.01}, {0, 0.2, 0}, 2, 2, 0);
  spec.pinned = {0};
  spec.obstacles = {{"ball", ObstacleType::Sphere, {0, 0, 0}, {0, 0, 1}, 0.2043, 0.3}};
  spec.contact.stiffness = 20.0;
  spec.initial_velocities.assign(spec.nodes.size(), {0.05, 0.0, -0.1});
  return spec;
}

// A coupled scene: a 4 × 4 cloth just above a light free tray (0.02 kg, no rigid gravity) it
// collides with; two_way: the contact's reaction acts on the tray.
inline std::string cloth_on_tray_scene(bool two_way) {
  return std::string(R"({
    "rigid": {"dt": 0.005, "gravity": [0, 0, 0],
              "bodies": [{"name": "tray", "position": [0, 0, 1], "mass": 0.02,
                          "shapes": [{"name": "plate", "type": "box", "half_extents": [0.15, 0.15, 0.02]}]}]},
    "soft": {"dt": 0.01,
             "contact": {"barrier_distance": 0.002, "stiffness": 1.0},
             "cloth_materials": [{"name": "c", "stretch_modulus": 40, "poisson_ratio": 0.3, "bending_stiffness": 0.0005,
                                  "areal_density": 0.2}],
             "cloth_rectangles": [{"material": "c", "origin": [-0.1, -0.1, 1.0215], "edge_u": [0.2, 0, 0], "edge_v": [0, 0.2, 0],
                                   "cells": [4, 4]}]},
    "coupling": {)") + (two_way ? R"("two_way": true, )" : "") + R"("colliders": [{"body": "tray", "friction": 0.3}]}
  })";
}

}  // namespace diffphys::soft::testing
