// rigid/body_dynamics.hpp — per-step mass quantities of every body in the world frame:
// rotation matrices, inverse mass, world inertia and its inverse (zero for static bodies).
// Computed once per step from (Model, Params, State) and read by every later stage.
#pragma once

#include <vector>

#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/state.hpp"
#include "solve/mlcp.hpp"

namespace diffphys::rigid {

struct BodyDynamics {
  std::vector<Mat3> rotation;               // (nbody) R_WB
  std::vector<double> inverse_mass;         // (nbody) 1/kg; 0 for static bodies
  std::vector<Mat3> inertia_world;          // (nbody) R I_body Rᵀ, kg·m²; 0 for static bodies
  std::vector<Mat3> inverse_inertia_world;  // (nbody) its inverse; 0 for static bodies

  solve::MassBlocks mass_blocks() const { return {inverse_mass, inverse_inertia_world}; }
};

void compute_body_dynamics(const Model& model, const Params& params, const State& state, BodyDynamics& bodies);

// I_body = R_p diag(moments) R_pᵀ for body b, in its own frame.
Mat3 body_frame_inertia(const Model& model, const Params& params, int body);

}  // namespace diffphys::rigid
