// rigid/step_workspace.hpp — what one step keeps in its Workspace: the scratch buffers of
// every stage and, after the step, its record — the contacts, the constraint rows and where
// each came from, the solver's solution — which the backward pass (src/adjoint/) reads after
// re-running the step from its recorded or recomputed state.
#pragma once

#include <vector>

#include "collision/detect_contacts.hpp"
#include "diffphys/contact.hpp"
#include "diffphys/simulator.hpp"
#include "rigid/body_dynamics.hpp"
#include "rigid/inequality_rows.hpp"
#include "rigid/integrate.hpp"
#include "rigid/warm_start.hpp"
#include "solve/mlcp.hpp"

namespace diffphys {

struct Workspace::Impl {
  rigid::BodyDynamics bodies;          // at the start of the step
  collision::CollisionWorkspace collision;
  std::vector<Contact> contacts;
  std::vector<double> free_velocity;  // (6 nbody) v_free
  std::vector<double> velocity;       // (6 nbody) solved v⁺
  std::vector<solve::ConstraintRow> rows;
  std::vector<double> lambda;         // (rows) impulses, N·s (γ rows: m/s)
  // Row blocks, in order: joints [0, joint_rows), limits [joint_rows, limit_rows_end),
  // servos (3 per servo actuator) [limit_rows_end, first_contact_row), contacts after.
  std::size_t joint_rows = 0, limit_rows_end = 0, first_contact_row = 0;
  std::vector<rigid::LimitRowSource> limit_sources;  // (limit rows) joint, dof, side of each
  solve::MlcpWorkspace solver;
  // The velocity problem had joint rows only and solver holds the envelope factorisation of
  // its A = J M⁻¹ Jᵀ (the joint projection and the backward pass reuse it).
  bool joint_factorization_valid = false;
  rigid::StabilizationBuffers stabilization;
  rigid::WarmStart warm_start;  // the previous step's λ, for PGS (rigid/warm_start.hpp)
};

}  // namespace diffphys
