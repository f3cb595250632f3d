// adjoint/step_vjp.cpp — see step_vjp.hpp. Each stage's adjoint equations are written next
// to its code; the forward stage they reverse is named in the comment.
#include "adjoint/step_vjp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "adjoint/contact_geometry.hpp"
#include "adjoint/equality_vjp.hpp"
#include "adjoint/joints_vjp.hpp"
#include "adjoint/time_of_impact_vjp.hpp"
#include "math/dual.hpp"
#include "rigid/compliance.hpp"
#include "rigid/inequality_rows.hpp"
#include "rigid/forces.hpp"
#include "rigid/integrate.hpp"
#include "rigid/joints.hpp"
#include "rigid/step_workspace.hpp"
#include "solve/dense_lu.hpp"
#include "solve/envelope_ldlt.hpp"
#include "solve/row_algebra.hpp"

namespace diffphys::adjoint {

using solve::ConstraintRow;
using solve::RowType;
using solve::add_row_transpose;
using solve::add_vec3;
using solve::apply_inverse_mass;
using solve::read_vec3;

Mat3 left_jacobian(const Vec3& rotation) {
  const double angle = norm(rotation);
  const Mat3 k = Mat3::skew(rotation);
  double a, b;  // J_l = I + a [φ]× + b [φ]×²
  if (angle < 1e-4) {
    a = 0.5 - angle * angle / 24.0;
    b = 1.0 / 6.0 - angle * angle / 120.0;
  } else {
    a = (1.0 - std::cos(angle)) / (angle * angle);
    b = (angle - std::sin(angle)) / (angle * angle * angle);
  }
  return Mat3::identity() + k * a + k * k * b;
}

namespace {

// θ̄ of a world inertia-like matrix X(R) = R X_body Rᵀ under q' = exp(δθ) q:
// dX = [δθ]× X − X [δθ]×, so θ̄ = vee(X X̄ᵀ − X̄ᵀ X) with vee(C) = (C₁₂−C₂₁, C₂₀−C₀₂, C₀₁−C₁₀).
Vec3 rotation_adjoint_of_world_matrix(const Mat3& x, const Mat3& x_adjoint) {
  const Mat3 c = x * x_adjoint.transposed() - x_adjoint.transposed() * x;
  return {c(1, 2) - c(2, 1), c(2, 0) - c(0, 2), c(0, 1) - c(1, 0)};
}

void add_outer(Mat3& m, const Vec3& a, const Vec3& b, double scale = 1.0) {
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) m(r, c) += scale * a[r] * b[c];
}

struct BodyAdjointView {
  std::span<double> values;
  void add_position(int body, const Vec3& v) { add_vec3(values, kBodyTangent * body, v); }
  void add_rotation(int body, const Vec3& v) { add_vec3(values, kBodyTangent * body + 3, v); }
  void add_linear(int body, const Vec3& v) { add_vec3(values, kBodyTangent * body + 6, v); }
  void add_angular(int body, const Vec3& v) { add_vec3(values, kBodyTangent * body + 9, v); }
  void add_pose(int body, const PoseAdjoint& pose) {
    add_position(body, pose.position);
    add_rotation(body, pose.rotation);
  }
};

RowAdjoint scaled(const RowAdjoint& a, double s) {
  RowAdjoint r;
  r.linear_a = a.linear_a * s;
  r.angular_a = a.angular_a * s;
  r.linear_b = a.linear_b * s;
  r.angular_b = a.angular_b * s;
  r.rhs = a.rhs * s;
  r.coefficient = a.coefficient * s;
  r.softness = a.softness * s;
  return r;
}

RowAdjoint sum(const RowAdjoint& a, const RowAdjoint& b) {
  RowAdjoint r = a;
  r.linear_a += b.linear_a;
  r.angular_a += b.angular_a;
  r.linear_b += b.linear_b;
  r.angular_b += b.angular_b;
  r.rhs += b.rhs;
  r.coefficient += b.coefficient;
  r.softness += b.softness;
  return r;
}

// J_i restricted to its bodies, dotted with a 6-per-body vector's blocks: the adjoint of
// "J̄_i += s · x" for a vector x (6 per body).
void add_row_adjoint_from_vector(const ConstraintRow& row, std::span<const double> x, double s, RowAdjoint& adjoint) {
  adjoint.linear_a += read_vec3(x, 6 * row.body_a) * s;
  adjoint.angular_a += read_vec3(x, 6 * row.body_a + 3) * s;
  adjoint.linear_b += read_vec3(x, 6 * row.body_b) * s;
  adjoint.angular_b += read_vec3(x, 6 * row.body_b + 3) * s;
}

double row_dot(const ConstraintRow& row, std::span<const double> x) { return solve::row_times_velocity(row, x); }

// Jacobians of orthonormal_basis(n) → (t1, t2) with respect to n, by dual numbers.
void basis_jacobians(const Vec3& normal, Mat3& dt1_dn, Mat3& dt2_dn) {
  using D = Dual<3>;
  const Vec3T<D> n{D::variable(normal.x, 0), D::variable(normal.y, 1), D::variable(normal.z, 2)};
  Vec3T<D> t1, t2;
  orthonormal_basis(n, t1, t2);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      dt1_dn(r, c) = t1[r].derivative[static_cast<std::size_t>(c)];
      dt2_dn(r, c) = t2[r].derivative[static_cast<std::size_t>(c)];
    }
}

}  // namespace

void step_vjp(const Model& model, const Params& params, const State& state_in, std::span<const double> controls,
              const Workspace& workspace, const State& state_out, std::span<const double> next_state_adjoint,
              std::span<double> state_adjoint, std::span<double> control_adjoint, std::span<double> param_adjoint,
              StepVjpWorkspace& vjp) {
  const Workspace::Impl& record = workspace.impl();
  vjp.non_finite_stage.clear();
  if (model.solver.coordinates == Coordinates::Reduced) {
    articulated_step_vjp(model, params, state_in, controls, record.articulated, next_state_adjoint, state_adjoint,
                         control_adjoint, param_adjoint, vjp.articulated);
    return;
  }
  const ParamLayout& layout = model.layout;
  const SolverSettings& settings = model.solver;
  const bool convex = settings.formulation == Formulation::Convex;
  const double h = model.dt;
  const auto body_count = static_cast<std::size_t>(model.body_count());
  const std::size_t dof = 6 * body_count;
  const solve::MassBlocks mass = record.bodies.mass_blocks();
  BodyAdjointView out{state_adjoint};
  const auto param = [&](int offset) -> double& { return param_adjoint[static_cast<std::size_t>(offset)]; };

  const auto check_stage = [&](std::span<const double> values, const char* stage) {
    if (!vjp.non_finite_stage.empty()) return;
    for (const double v : values)
      if (!std::isfinite(v)) {
        vjp.non_finite_stage = stage;
        return;
      }
  };
  vjp.velocity_adjoint.assign(dof, 0.0);       // v̄⁺
  vjp.free_velocity_adjoint.assign(dof, 0.0);  // v̄_free
  vjp.row_adjoints.assign(record.rows.size(), RowAdjoint{});
  vjp.mass_adjoint.inverse_mass.assign(body_count, 0.0);
  vjp.mass_adjoint.inverse_inertia.assign(body_count, Mat3{});
  vjp.inertia_adjoint.assign(body_count, Mat3{});
  // Pose adjoint at the integrated (pre-projection) state q̃: p̃̄ and θ̃̄, 6 per body.
  vjp.displacement_adjoint.assign(dof, 0.0);

  // Static bodies never move: their adjoint passes straight through. (A kinematic body moves
  // by its own velocity like a dynamic one whose inverse mass is 0: it takes the paths below.)
  for (std::size_t b = 0; b < body_count; ++b)
    if (model.bodies[b].type == BodyType::Static)
      for (int k = 0; k < kBodyTangent; ++k)
        state_adjoint[kBodyTangent * b + static_cast<std::size_t>(k)] += next_state_adjoint[kBodyTangent * b + static_cast<std::size_t>(k)];

  // --- Joint projection (rigid/integrate.cpp, stabilize_joints), reversed. -------------
  // Forward: q̃ = integrate(x_t, v⁺); q⁺ = q̃ ⊕ Δ, Δ = M⁻¹J_tᵀδ with φ(q⁺) = 0; v_{t+1} = v⁺ + Δ/h.
  // Implicit function theorem on F(δ) = φ(q̃ ⊕ M⁻¹J_tᵀδ) = 0 with G = ∂φ/∂q at q⁺ (the joint
  // rows at the end state), L = ∂(q̃ ⊕ Δ)/∂Δ (J_l(Δθ) on rotations), T = ∂(q̃ ⊕ Δ)/∂q̃ (R(Δθ)):
  //   S = G L M⁻¹ J_tᵀ,  ρ = S⁻ᵀ (J_t M⁻¹ Δ̄),  Δ̄ = Lᵀ q̄⁺ + v̄_{t+1}/h,
  //   q̃̄ = Tᵀ(q̄⁺ − Gᵀρ),  η = Δ̄ − Lᵀ Gᵀ ρ,  J̄_t,i += δ_i M⁻¹η,  (M⁻¹)‾ += η (J_tᵀδ)ᵀ.
  vjp.integrated = state_in;
  rigid::integrate(model, state_in, record.velocity, record.free_velocity, record.impacts, vjp.integrated);
  const std::size_t joint_rows = record.joint_rows;
  // Flexible joints are not projected; their rows' targets are springs (rigid/compliance.hpp).
  const bool projected = rigid::projects_joints(model, params);
  // With joint rows only, the forward interior point factorised A_t = J_t M⁻¹ J_tᵀ (envelope
  // LDLᵀ) and left it in its workspace: the projection and LCP adjoints solve with it too.
  const solve::MlcpWorkspace* forward_factorization = record.joint_factorization_valid ? &record.solver : nullptr;
  vjp.displacement.assign(dof, 0.0);
  for (std::size_t b = 0; b < body_count; ++b) {
    if (model.bodies[b].type != BodyType::Dynamic) continue;  // the projection moves dynamic bodies only
    const int o = static_cast<int>(6 * b);
    add_vec3(vjp.displacement, o, state_out.position[b] - vjp.integrated.position[b]);
    add_vec3(vjp.displacement, o + 3, rotation_vector(state_out.orientation[b] * vjp.integrated.orientation[b].conjugate()));
  }
  for (std::size_t b = 0; b < body_count; ++b) {
    if (model.bodies[b].type == BodyType::Static) continue;
    const std::size_t o = kBodyTangent * b;
    const Vec3 position_adjoint = read_vec3(next_state_adjoint, static_cast<int>(o));
    const Vec3 rotation_adjoint = read_vec3(next_state_adjoint, static_cast<int>(o + 3));
    const Vec3 linear_adjoint = read_vec3(next_state_adjoint, static_cast<int>(o + 6));
    const Vec3 angular_adjoint = read_vec3(next_state_adjoint, static_cast<int>(o + 9));
    const Vec3 delta_rotation = read_vec3(vjp.displacement, static_cast<int>(6 * b + 3));
    // v_{t+1} = v⁺ + Δ/h: both feed v̄⁺ and Δ̄.
    add_vec3(vjp.velocity_adjoint, static_cast<int>(6 * b), linear_adjoint);
    add_vec3(vjp.velocity_adjoint, static_cast<int>(6 * b + 3), angular_adjoint);
    const Mat3 rotation_of_delta = Quat::from_rotation_vector(delta_rotation).to_matrix();
    add_vec3(vjp.displacement_adjoint, static_cast<int>(6 * b), position_adjoint);
    add_vec3(vjp.displacement_adjoint, static_cast<int>(6 * b + 3), rotation_of_delta.transpose_times(rotation_adjoint));
  }
  // Joints a convex step leaves unprojected: q⁺ = q̃, v_{t+1} = v⁺.
  if (joint_rows > 0 && projected) {
    const std::span<const ConstraintRow> rows_t(record.rows.data(), joint_rows);
    // Δ̄ per body (6), and δ from A_t δ = J_t Δ.
    std::vector<double>& delta_adjoint = vjp.correction;
    delta_adjoint.assign(dof, 0.0);
    for (std::size_t b = 0; b < body_count; ++b) {
      if (model.bodies[b].type != BodyType::Dynamic) continue;
      const std::size_t o = kBodyTangent * b;
      const Vec3 delta_rotation = read_vec3(vjp.displacement, static_cast<int>(6 * b + 3));
      add_vec3(delta_adjoint, static_cast<int>(6 * b),
               read_vec3(next_state_adjoint, static_cast<int>(o)) + read_vec3(next_state_adjoint, static_cast<int>(o + 6)) / h);
      add_vec3(delta_adjoint, static_cast<int>(6 * b + 3),
               left_jacobian(delta_rotation).transpose_times(read_vec3(next_state_adjoint, static_cast<int>(o + 3))) +
                   read_vec3(next_state_adjoint, static_cast<int>(o + 9)) / h);
    }
    // The projection's total impulse δ: Δ = M⁻¹J_tᵀδ exactly, so A_t δ = J_t Δ recovers it.
    // A_t's factorisation: the forward velocity solve's when it had joint rows only.
    vjp.joint_impulse.resize(joint_rows);
    for (std::size_t i = 0; i < joint_rows; ++i) vjp.joint_impulse[i] = row_dot(rows_t[i], vjp.displacement);
    // Else the forward projection's own, when it factorised A_t (in its profile-reducing row
    // order, rigid::StabilizationBuffers): the same matrix, its rows permuted.
    const rigid::StabilizationBuffers& projection = record.stabilization;
    if (forward_factorization == nullptr && projection.factorized) {
      if (projection.reordered) {
        vjp.scratch.resize(joint_rows);
        for (std::size_t k = 0; k < joint_rows; ++k)
          vjp.scratch[k] = vjp.joint_impulse[static_cast<std::size_t>(projection.order[k])];
        solve::envelope_solve(projection.solver, vjp.scratch);
        for (std::size_t k = 0; k < joint_rows; ++k)
          vjp.joint_impulse[static_cast<std::size_t>(projection.order[k])] = vjp.scratch[k];
      } else {
        solve::envelope_solve(projection.solver, vjp.joint_impulse);
      }
    } else {
      if (forward_factorization == nullptr) {
        solve::compute_responses(rows_t, mass, vjp.solver);
        if (!solve::envelope_factorize(rows_t, mass, vjp.solver))
          std::fill(vjp.joint_impulse.begin(), vjp.joint_impulse.end(), 0.0);
      }
      const solve::MlcpWorkspace& joint_factors = forward_factorization != nullptr ? *forward_factorization : vjp.solver;
      solve::envelope_solve(joint_factors, vjp.joint_impulse);
    }
    // G: joint rows at the end state.
    rigid::BodyDynamics& end_bodies = vjp.end_bodies;
    end_bodies.rotation.resize(body_count);
    for (std::size_t b = 0; b < body_count; ++b) end_bodies.rotation[b] = state_out.orientation[b].to_matrix();
    vjp.end_rows.clear();
    rigid::append_joint_rows(model, state_out, end_bodies, vjp.end_rows);
    // ρ = S⁻ᵀ r with S = G L M⁻¹ J_tᵀ and r = J_t M⁻¹ Δ̄. Sᵀ_ij = J_t,i · M⁻¹ Lᵀ G_jᵀ has the
    // sparsity of A_t = J_t M⁻¹ J_tᵀ and differs from it by O(h·ω): a sparse LU without
    // pivoting (solve/envelope_lu.hpp), linear in the chain's length.
    const std::size_t m = joint_rows;
    std::vector<Mat3>& left_jacobians = vjp.left_jacobians;
    left_jacobians.resize(body_count);
    for (std::size_t b = 0; b < body_count; ++b)
      left_jacobians[b] = left_jacobian(read_vec3(vjp.displacement, static_cast<int>(6 * b + 3)));
    vjp.scratch.resize(dof);
    apply_inverse_mass(mass, delta_adjoint, vjp.scratch);
    std::vector<double>& rho = vjp.joint_multiplier;  // r, then ρ
    rho.resize(m);
    for (std::size_t i = 0; i < m; ++i) rho[i] = row_dot(rows_t[i], vjp.scratch);
    vjp.projected_columns.resize(m);
    for (std::size_t j = 0; j < m; ++j) {
      const ConstraintRow& end_row = vjp.end_rows[j];
      const auto a = static_cast<std::size_t>(end_row.body_a), b = static_cast<std::size_t>(end_row.body_b);
      vjp.projected_columns[j] = {end_row.linear_a * mass.inverse_mass[a],
                                  mass.inverse_inertia[a] * left_jacobians[a].transpose_times(end_row.angular_a),
                                  end_row.linear_b * mass.inverse_mass[b],
                                  mass.inverse_inertia[b] * left_jacobians[b].transpose_times(end_row.angular_b)};
    }
    if (solve::envelope_lu_factorize(rows_t, vjp.projected_columns, mass.inverse_mass, vjp.projection_lu)) {
      solve::envelope_lu_solve(vjp.projection_lu, rho);
    } else {  // a vanishing pivot: redundant joints at a singular configuration; say so
      std::fill(rho.begin(), rho.end(), std::numeric_limits<double>::quiet_NaN());
    }
    // Gᵀρ, then q̃̄ = Tᵀ(q̄⁺ − Gᵀρ) and η = Δ̄ − Lᵀ Gᵀ ρ.
    std::vector<double>& g_rho = vjp.g_rho;
    g_rho.assign(dof, 0.0);
    for (std::size_t i = 0; i < m; ++i) add_row_transpose(vjp.end_rows[i], rho[i], g_rho);
    std::vector<double>& eta = vjp.eta;
    eta.assign(delta_adjoint.begin(), delta_adjoint.end());
    // (A kinematic parent too: φ depends on its pose, though the projection never moves it.)
    for (std::size_t b = 0; b < body_count; ++b) {
      if (model.bodies[b].type == BodyType::Static) continue;
      const int o = static_cast<int>(6 * b);
      const Vec3 delta_rotation = read_vec3(vjp.displacement, o + 3);
      const Mat3 rotation_of_delta = Quat::from_rotation_vector(delta_rotation).to_matrix();
      add_vec3(vjp.displacement_adjoint, o, -read_vec3(g_rho, o));
      add_vec3(vjp.displacement_adjoint, o + 3, -rotation_of_delta.transpose_times(read_vec3(g_rho, o + 3)));
      add_vec3(eta, o, -read_vec3(g_rho, o));
      add_vec3(eta, o + 3, -left_jacobians[b].transpose_times(read_vec3(g_rho, o + 3)));
    }
    // M⁻¹η, J̄_t,i += δ_i M⁻¹η, (M⁻¹)‾ += η (J_tᵀδ)ᵀ.
    std::vector<double>& scaled_eta = vjp.scaled_eta;
    std::vector<double>& joint_force = vjp.joint_force;
    scaled_eta.assign(dof, 0.0);
    joint_force.assign(dof, 0.0);
    apply_inverse_mass(mass, eta, scaled_eta);
    for (std::size_t i = 0; i < m; ++i) {
      add_row_adjoint_from_vector(rows_t[i], scaled_eta, vjp.joint_impulse[i], vjp.row_adjoints[i]);
      add_row_transpose(rows_t[i], vjp.joint_impulse[i], joint_force);
    }
    for (std::size_t b = 0; b < body_count; ++b) {
      const int o = static_cast<int>(6 * b);
      vjp.mass_adjoint.inverse_mass[b] += dot(read_vec3(eta, o), read_vec3(joint_force, o));
      add_outer(vjp.mass_adjoint.inverse_inertia[b], read_vec3(eta, o + 3), read_vec3(joint_force, o + 3));
    }
  }

  // --- Integration (rigid/integrate.cpp), reversed. -----------------------------------
  // p̃ = p + h v⁺, q̃ = exp(h ω⁺) ⊗ q:  p̄ += p̃̄, v̄⁺ += h p̃̄, θ̄ += R(hω⁺)ᵀ θ̃̄, ω̄⁺ += h J_l(hω⁺)ᵀ θ̃̄.
  // Bodies moved to a time of impact first: adjoint/time_of_impact_vjp.hpp.
  const rigid::ImpactRecord& impacts = record.impacts;
  vjp.contact_time_adjoint.assign(record.contacts.size(), 0.0);
  if (impacts.any) {
    vjp.impact_free_velocity_adjoint.assign(dof, 0.0);
    time_of_impact_integrate_vjp(model, record.velocity, record.free_velocity, impacts, vjp.displacement_adjoint,
                                 state_adjoint, vjp.velocity_adjoint, vjp.impact_free_velocity_adjoint,
                                 vjp.contact_time_adjoint);
  }
  for (std::size_t b = 0; b < body_count; ++b) {
    if (model.bodies[b].type == BodyType::Static) continue;
    if (impacts.any && impacts.body_contact[b] >= 0) continue;
    const int o = static_cast<int>(6 * b);
    const Vec3 position_adjoint = read_vec3(vjp.displacement_adjoint, o);
    const Vec3 rotation_adjoint = read_vec3(vjp.displacement_adjoint, o + 3);
    const Vec3 step_rotation = read_vec3(record.velocity, o + 3) * h;
    out.add_position(static_cast<int>(b), position_adjoint);
    add_vec3(vjp.velocity_adjoint, o, position_adjoint * h);
    out.add_rotation(static_cast<int>(b), Quat::from_rotation_vector(step_rotation).to_matrix().transpose_times(rotation_adjoint));
    add_vec3(vjp.velocity_adjoint, o + 3, left_jacobian(step_rotation).transpose_times(rotation_adjoint) * h);
  }

  check_stage(vjp.velocity_adjoint, "joint projection and integration");

  // --- Mixed LCP (solve/), reversed: implicit, active set fixed. -----------------------
  if (record.rows.empty()) {
    vjp.free_velocity_adjoint = vjp.velocity_adjoint;
  } else if (convex) {
    convex_vjp(record.rows, mass, record.velocity, vjp.velocity_adjoint, vjp.free_velocity_adjoint, vjp.row_adjoints,
               vjp.mass_adjoint, record.convex_problem_current ? &record.convex : nullptr, vjp.convex);
  } else {
    lcp_vjp(record.rows, mass, record.lambda, record.velocity, vjp.velocity_adjoint, vjp.free_velocity_adjoint,
            vjp.row_adjoints, vjp.mass_adjoint, vjp.lcp, forward_factorization);
  }

  if (impacts.any)
    for (std::size_t i = 0; i < dof; ++i) vjp.free_velocity_adjoint[i] += vjp.impact_free_velocity_adjoint[i];

  check_stage(vjp.free_velocity_adjoint, "LCP");

  // --- Softness of the convex formulation's rows (rigid/compliance.hpp), reversed. ----
  if (convex) {
    rigid::Softness softness_of[kRowClassCount];
    for (int c = 0; c < kRowClassCount; ++c)
      softness_of[c] = rigid::softness(h, rigid::row_compliance(model, params, static_cast<RowClass>(c)));
    // (The equality rows after the contacts have their own compliance: below.)
    for (std::size_t i = 0; i < record.equality_rows_begin; ++i) {
      const double kappa_adjoint = vjp.row_adjoints[i].softness;
      if (kappa_adjoint == 0.0) continue;
      const auto c = static_cast<int>(rigid::row_class(joint_rows, record.limit_rows_end, record.first_contact_row, i));
      param(layout.compliance_time_constant[c]) += kappa_adjoint * softness_of[c].d_time_constant;
      param(layout.compliance_damping_ratio[c]) += kappa_adjoint * softness_of[c].d_damping_ratio;
    }
  }

  // --- Rows (rigid/joints.cpp, rigid/inequality_rows.cpp), reversed. ------------------
  const auto add_pose_adjoints = [&](const Joint& joint, const PoseAdjoint& parent, const PoseAdjoint& child) {
    out.add_pose(joint.parent, parent);
    out.add_pose(joint.child, child);
  };
  {
    std::size_t row = 0;
    for (int j = 0; j < model.joint_count(); ++j) {
      const Joint& joint = model.joints[static_cast<std::size_t>(j)];
      const auto count = static_cast<std::size_t>(joint_constraint_count(joint.type));
      PoseAdjoint parent, child;
      joint_rows_vjp(model, state_in, j, std::span<const RowAdjoint>(vjp.row_adjoints.data() + row, count), parent, child);
      add_pose_adjoints(joint, parent, child);
      row += count;
    }
  }
  {
    // Soft equality rows (rigid/equality_rows.hpp): J entries, spring targets, softness.
    std::size_t row = record.equality_rows_begin;
    for (int e = 0; e < model.equality_count(); ++e) {
      const Equality& equality = model.equalities[static_cast<std::size_t>(e)];
      const auto count = static_cast<std::size_t>(equality_constraint_count(equality.type));
      PoseAdjoint body_a, body_b;
      equality_rows_vjp(model, params, state_in, e, std::span<const RowAdjoint>(vjp.row_adjoints.data() + row, count),
                        body_a, body_b, param_adjoint);
      out.add_pose(equality.body_a, body_a);
      out.add_pose(equality.body_b, body_b);
      row += count;
    }
  }
  if (joint_rows > 0 && !projected) {
    // Flexible joints' targets rhs_i = s φ_i(q), s = −1/(h + 2ζ²τ) (rigid/compliance.hpp):
    // φ̄_i = s · rhs̄_i onto the joint's poses, and s's derivatives onto the compliance.
    const rigid::TargetSlope slope = rigid::spring_target_slope(h, rigid::row_compliance(model, params, RowClass::Joint));
    vjp.joint_errors.resize(joint_rows);
    vjp.joint_error_adjoints.resize(joint_rows);
    rigid::joint_position_errors(model, state_in, record.bodies, vjp.joint_errors);
    double slope_adjoint = 0.0;
    for (std::size_t i = 0; i < joint_rows; ++i) {
      const double rhs_adjoint = vjp.row_adjoints[i].rhs;
      vjp.joint_error_adjoints[i] = slope.value * rhs_adjoint;
      slope_adjoint += rhs_adjoint * vjp.joint_errors[i];
    }
    param(layout.compliance_time_constant[static_cast<int>(RowClass::Joint)]) += slope_adjoint * slope.d_time_constant;
    param(layout.compliance_damping_ratio[static_cast<int>(RowClass::Joint)]) += slope_adjoint * slope.d_damping_ratio;
    std::size_t row = 0;
    for (int j = 0; j < model.joint_count(); ++j) {
      const Joint& joint = model.joints[static_cast<std::size_t>(j)];
      const auto count = static_cast<std::size_t>(joint_constraint_count(joint.type));
      PoseAdjoint parent, child;
      joint_errors_vjp(model, state_in, j, std::span<const double>(vjp.joint_error_adjoints.data() + row, count), parent,
                       child);
      add_pose_adjoints(joint, parent, child);
      row += count;
    }
  }
  for (std::size_t i = joint_rows; i < record.limit_rows_end; ++i) {
    const rigid::LimitRowSource& source = record.limit_sources[i - joint_rows];
    const Joint& joint = model.joints[static_cast<std::size_t>(source.joint)];
    const RowAdjoint& adjoint = vjp.row_adjoints[i];
    PoseAdjoint parent, child;
    coordinate_row_vjp(model, state_in, source.joint, source.dof, scaled(adjoint, source.upper ? -1.0 : 1.0), parent, child);
    // rhs = gap_target(gap) (convex: compliant_gap_target), gap = ±(q − bound).
    const double position = joint_position(model, state_in, source.joint, source.dof);
    const double gap = source.upper ? joint.upper_limit - position : position - joint.lower_limit;
    double target_slope = gap >= 0 ? -1.0 / h : (-gap - settings.penetration_slop > 0 ? -settings.contact_erp / h : 0.0);
    if (convex) {
      const rigid::GapTarget target =
          rigid::compliant_gap_target(gap, h, rigid::row_compliance(model, params, RowClass::Limit), settings.penetration_slop);
      target_slope = target.d_gap;
      param(layout.compliance_time_constant[static_cast<int>(RowClass::Limit)]) += adjoint.rhs * target.d_time_constant;
      param(layout.compliance_damping_ratio[static_cast<int>(RowClass::Limit)]) += adjoint.rhs * target.d_damping_ratio;
    }
    coordinate_value_vjp(model, state_in, source.joint, source.dof,
                         adjoint.rhs * target_slope * (source.upper ? -1.0 : 1.0), parent, child);
    add_pose_adjoints(joint, parent, child);
  }
  {
    std::size_t row = record.limit_rows_end;
    for (int a = 0; a < model.actuator_count(); ++a) {
      const Actuator& actuator = model.actuators[static_cast<std::size_t>(a)];
      if (actuator.type != ActuatorType::Servo) continue;
      const auto i = static_cast<std::size_t>(a);
      const Joint& joint = model.joints[static_cast<std::size_t>(actuator.joint)];
      const RowAdjoint& positive = vjp.row_adjoints[row];
      const RowAdjoint& negative = vjp.row_adjoints[row + 1];
      const RowAdjoint& bound = vjp.row_adjoints[row + 2];
      PoseAdjoint parent, child;
      coordinate_row_vjp(model, state_in, actuator.joint, actuator.dof, sum(positive, scaled(negative, -1.0)), parent, child);
      // ω* = clamp(gain (u − q), ±max_velocity); rows' rhs ±ω*; bound rhs −max_torque h.
      const double rate_adjoint = positive.rhs - negative.rhs;
      const double gain = params.at(layout.actuator_gain[i]);
      const double error = controls[i] - joint_position(model, state_in, actuator.joint, actuator.dof);
      const double raw = gain * error;
      if (std::abs(raw) < params.at(layout.actuator_max_velocity[i])) {
        param(layout.actuator_gain[i]) += rate_adjoint * error;
        control_adjoint[i] += rate_adjoint * gain;
        coordinate_value_vjp(model, state_in, actuator.joint, actuator.dof, -rate_adjoint * gain, parent, child);
      } else {
        param(layout.actuator_max_velocity[i]) += rate_adjoint * (raw > 0 ? 1.0 : -1.0);
      }
      param(layout.actuator_max_torque[i]) += -h * bound.rhs;
      add_pose_adjoints(joint, parent, child);
      row += 3;
    }
  }
  {
    const int directions = rigid::friction_row_count(settings);
    std::size_t row = record.first_contact_row;
    ContactGeometryAtState contact_geometry(model, params, state_in);
    for (std::size_t row_contact = 0; row_contact < record.contacts.size(); ++row_contact) {
      const Contact& contact = record.contacts[row_contact];
      const auto a = static_cast<std::size_t>(contact.body_a), b = static_cast<std::size_t>(contact.body_b);
      // The bodies' points as in the forward (rigid::contact_offsets).
      const rigid::ContactOffsets offsets = rigid::contact_offsets(settings, contact, state_in);
      const Vec3& offset_a = offsets.a;
      const Vec3& offset_b = offsets.b;
      const Vec3& n = contact.normal;
      Vec3 position_adjoint, normal_adjoint, offset_a_adjoint, offset_b_adjoint;
      double gap_adjoint = 0.0;
      // Normal row: (n, o_a × n, −n, −(o_b × n)).
      const RowAdjoint& normal_row = vjp.row_adjoints[row];
      const auto reverse_point_row = [&](const Vec3& direction, const RowAdjoint& adjoint) {
        offset_a_adjoint += cross(direction, adjoint.angular_a);
        offset_b_adjoint -= cross(direction, adjoint.angular_b);
        return adjoint.linear_a - adjoint.linear_b + cross(adjoint.angular_a, offset_a) - cross(adjoint.angular_b, offset_b);
      };
      normal_adjoint += reverse_point_row(n, normal_row);
      // Reverse of u = v_a + ω_a × o_a − v_b − ω_b × o_b for the adjoint ū: the velocities'
      // adjoints go to `target` (body k's linear part at stride·k, its angular part 3 after),
      // the offsets' to o_a, o_b. angular_a, angular_b: the ω the forward used.
      const auto reverse_relative_velocity = [&](const Vec3& adjoint, const Vec3& angular_a, const Vec3& angular_b,
                                                 std::span<double> target, int stride) {
        add_vec3(target, stride * contact.body_a, adjoint);
        add_vec3(target, stride * contact.body_a + 3, cross(offset_a, adjoint));
        add_vec3(target, stride * contact.body_b, -adjoint);
        add_vec3(target, stride * contact.body_b + 3, -cross(offset_b, adjoint));
        offset_a_adjoint += cross(adjoint, angular_a);
        offset_b_adjoint -= cross(adjoint, angular_b);
      };
      // Normal rhs (rigid/inequality_rows.cpp): speculative, bounce, or gap correction.
      const ConstraintRow& forward_normal = record.rows[row];
      const double normal_velocity = dot(forward_normal.linear_a, state_in.linear_velocity[a]) +
                                     dot(forward_normal.angular_a, state_in.angular_velocity[a]) +
                                     dot(forward_normal.linear_b, state_in.linear_velocity[b]) +
                                     dot(forward_normal.angular_b, state_in.angular_velocity[b]);
      const double free_normal_velocity = solve::row_times_velocity(forward_normal, record.free_velocity);
      const double restitution_a = params.at(layout.body_restitution[a]), restitution_b = params.at(layout.body_restitution[b]);
      const double restitution = std::max(restitution_a, restitution_b);
      // e = max(e_a, e_b): the adjoint goes to the larger. At a tie the convex formulation gives
      // half to each (the symmetric subgradient, what a central difference in either measures);
      // the complementarity one keeps body a's (the figures of its experiments were made so).
      const auto add_restitution_adjoint = [&](double adjoint) {
        const bool split = convex && restitution_a == restitution_b;
        if (restitution_a >= restitution_b) param(layout.body_restitution[a]) += split ? 0.5 * adjoint : adjoint;
        if (restitution_b > restitution_a || (split && restitution_b == restitution_a))
          param(layout.body_restitution[b]) += split ? 0.5 * adjoint : adjoint;
      };
      const double impact_time = record.impacts.contact_time[row_contact];
      const rigid::GapTarget compliant =
          convex ? rigid::compliant_gap_target(contact.gap, h, rigid::row_compliance(model, params, RowClass::Contact),
                                               settings.penetration_slop)
                 : rigid::GapTarget{};
      const auto add_compliant_target_adjoint = [&] {
        gap_adjoint += normal_row.rhs * compliant.d_gap;
        param(layout.compliance_time_constant[static_cast<int>(RowClass::Contact)]) +=
            normal_row.rhs * compliant.d_time_constant;
        param(layout.compliance_damping_ratio[static_cast<int>(RowClass::Contact)]) +=
            normal_row.rhs * compliant.d_damping_ratio;
      };
      if (contact.gap > 0 && contact.gap + h * free_normal_velocity > 0) {
        if (convex) add_compliant_target_adjoint();
        else gap_adjoint += -normal_row.rhs / h;
      } else if (impact_time >= 0) {
        // A time-of-impact row (rigid/time_of_impact.hpp): its target and its τ depend on g,
        // s = −J v, s_f = −J v_free and e.
        const ImpactTargetAdjoint impact =
            impact_target_vjp(contact.gap, -normal_velocity, -free_normal_velocity, restitution, h, normal_row.rhs,
                              vjp.contact_time_adjoint[row_contact]);
        gap_adjoint += impact.gap;
        add_restitution_adjoint(impact.restitution);
        // v_n = n·(v_a + ω_a × o_a − v_b − ω_b × o_b) with the start and the free velocities.
        const auto reverse_normal_speed = [&](double speed_adjoint, const Vec3& linear_a, const Vec3& angular_a,
                                              const Vec3& linear_b, const Vec3& angular_b, std::span<double> target,
                                              int stride) {
          const double velocity_adjoint = -speed_adjoint;
          reverse_relative_velocity(n * velocity_adjoint, angular_a, angular_b, target, stride);
          normal_adjoint += (linear_a + cross(angular_a, offset_a) - linear_b - cross(angular_b, offset_b)) * velocity_adjoint;
        };
        reverse_normal_speed(impact.start_speed, state_in.linear_velocity[a], state_in.angular_velocity[a],
                             state_in.linear_velocity[b], state_in.angular_velocity[b],
                             state_adjoint.subspan(6), kBodyTangent);
        reverse_normal_speed(impact.free_speed, read_vec3(record.free_velocity, static_cast<int>(6 * a)),
                             read_vec3(record.free_velocity, static_cast<int>(6 * a + 3)),
                             read_vec3(record.free_velocity, static_cast<int>(6 * b)),
                             read_vec3(record.free_velocity, static_cast<int>(6 * b + 3)), vjp.free_velocity_adjoint, 6);
      } else {
        // rhs = max(bounce, correction) (the complementarity formulation always, a bounce of 0
        // when not bouncing; the convex one only when bouncing with e > 0), else the
        // correction: the adjoint goes to the branch taken.
        const bool bouncing = -normal_velocity > settings.restitution_threshold;
        const bool floored = !convex || (bouncing && restitution > 0);
        const double bounce = bouncing ? restitution * -normal_velocity : 0.0;
        const double correction = convex ? compliant.value : rigid::gap_target(contact.gap, h, settings);
        if (floored && bounce >= correction) {
          if (bouncing) {
          add_restitution_adjoint(normal_row.rhs * -normal_velocity);
          // v_n = n·(v_a + ω_a × o_a − v_b − ω_b × o_b) at the start of the step.
          const double velocity_adjoint = -restitution * normal_row.rhs;
          reverse_relative_velocity(n * velocity_adjoint, state_in.angular_velocity[a], state_in.angular_velocity[b],
                                    state_adjoint.subspan(6), kBodyTangent);
          const Vec3 relative_velocity = state_in.linear_velocity[a] + cross(state_in.angular_velocity[a], offset_a) -
                                         state_in.linear_velocity[b] - cross(state_in.angular_velocity[b], offset_b);
          normal_adjoint += relative_velocity * velocity_adjoint;
          }  // else rhs = 0, a constant
        } else if (convex) {
          add_compliant_target_adjoint();
        } else {
          gap_adjoint += normal_row.rhs * (contact.gap >= 0 ? -1.0 / h
                                                            : (-contact.gap - settings.penetration_slop > 0
                                                                   ? -settings.contact_erp / h
                                                                   : 0.0));
        }
      }
      ++row;
      if (row < record.rows.size() && record.rows[row].type == RowType::Direction && row < record.rows.size() &&
          record.rows[row].group == static_cast<int>(row) + directions) {
        const rigid::FrictionTangents axes = rigid::friction_tangents(settings, n, contact.body_a, contact.body_b,
                                                                      offset_a, offset_b, record.free_velocity);
        const Vec3 &tangent1 = axes.tangent1, &tangent2 = axes.tangent2;
        Vec3 tangent1_adjoint, tangent2_adjoint;
        for (int k = 0; k < directions; ++k, ++row) {
          const rigid::DirectionWeights weights = rigid::friction_direction(settings, k);
          const Vec3 direction = tangent1 * weights.tangent1 + tangent2 * weights.tangent2;
          const Vec3 direction_adjoint = reverse_point_row(direction, vjp.row_adjoints[row]);
          tangent1_adjoint += direction_adjoint * weights.tangent1;
          tangent2_adjoint += direction_adjoint * weights.tangent2;
        }
        // The axes turn with the slip s, sliding or sticking. A stick inside the cone reaches
        // the same v⁺ at any heading, but its direction rows are redundant, and the LCP
        // adjoint's share for each row is only right summed over every change of the rows:
        // leaving the turn out where the contact sticks left a 0.11 relative error on
        // chain-mass-scaling's sticking contacts, which the full turn removes.
        if (axes.slip_aligned) {
          // t₂ = n × t₁.
          normal_adjoint += cross(tangent1, tangent2_adjoint);
          tangent1_adjoint += cross(tangent2_adjoint, n);
          // t₁ = s/|s|, s = u − n (n·u), u the relative free velocity at the contact.
          const Vec3 slip_adjoint = (tangent1_adjoint - tangent1 * dot(tangent1, tangent1_adjoint)) / axes.slip_speed;
          const Vec3& relative = axes.relative_free_velocity;
          const Vec3 relative_adjoint = slip_adjoint - n * dot(n, slip_adjoint);
          normal_adjoint -= slip_adjoint * dot(n, relative) + relative * dot(n, slip_adjoint);
          // u under the free motion.
          reverse_relative_velocity(relative_adjoint, read_vec3(record.free_velocity, static_cast<int>(6 * a + 3)),
                                    read_vec3(record.free_velocity, static_cast<int>(6 * b + 3)),
                                    vjp.free_velocity_adjoint, 6);
        } else {
          Mat3 dt1_dn, dt2_dn;
          basis_jacobians(n, dt1_dn, dt2_dn);
          normal_adjoint += dt1_dn.transpose_times(tangent1_adjoint) + dt2_dn.transpose_times(tangent2_adjoint);
        }
        // Bound row: μ = √(μ_a μ_b).
        const double friction_a = params.at(layout.body_friction[a]), friction_b = params.at(layout.body_friction[b]);
        const double friction = std::sqrt(friction_a * friction_b);
        const double friction_adjoint = vjp.row_adjoints[row].coefficient;
        if (friction > 0) {
          param(layout.body_friction[a]) += friction_adjoint * friction_b / (2 * friction);
          param(layout.body_friction[b]) += friction_adjoint * friction_a / (2 * friction);
        }
        ++row;
      }
      // o_a = P + ½ g n − p_a, o_b = P − ½ g n − p_b (P: the midpoint).
      position_adjoint += offset_a_adjoint + offset_b_adjoint;
      if (settings.contact_point == ContactPoint::Surfaces) {
        gap_adjoint += 0.5 * dot(n, offset_a_adjoint - offset_b_adjoint);
        normal_adjoint += (offset_a_adjoint - offset_b_adjoint) * offsets.half_gap;
      }
      out.add_position(contact.body_a, -offset_a_adjoint);
      out.add_position(contact.body_b, -offset_b_adjoint);
      // Contact geometry (narrow phase with this feature) → poses of both bodies and sizes.
      const ContactGeometryJacobian& geometry = contact_geometry.jacobian(contact);
      if (!geometry.found) continue;
      double input_adjoint[18] = {};
      for (int k = 0; k < 18; ++k) {
        double sum_k = geometry.gap[k] * gap_adjoint;
        for (int r = 0; r < 3; ++r) sum_k += geometry.position[r][k] * position_adjoint[r] + geometry.normal[r][k] * normal_adjoint[r];
        input_adjoint[k] = sum_k;
      }
      out.add_position(contact.body_a, {input_adjoint[0], input_adjoint[1], input_adjoint[2]});
      out.add_rotation(contact.body_a, {input_adjoint[3], input_adjoint[4], input_adjoint[5]});
      out.add_position(contact.body_b, {input_adjoint[6], input_adjoint[7], input_adjoint[8]});
      out.add_rotation(contact.body_b, {input_adjoint[9], input_adjoint[10], input_adjoint[11]});
      for (const auto& [shape, first] : {std::pair{contact.shape_a, 12}, std::pair{contact.shape_b, 15}}) {
        const int offset = layout.shape_size[static_cast<std::size_t>(shape)];
        const int sizes = shape_size_count(model.shapes[static_cast<std::size_t>(shape)].type);
        for (int k = 0; k < sizes; ++k) param(offset + k) += input_adjoint[first + k];
      }
    }
  }

  check_stage(state_adjoint, "constraint rows and contact geometry");

  // --- Free velocity (rigid/forces.cpp), reversed. -------------------------------------
  // v_free = (v + h F/m)/(1 + h c_l), ω_free = (ω + h I⁻¹ τ)/(1 + h c_a), with F = m g + F_ext
  // + Σ J_dofᵀ τ_j (linear parts) and τ = τ_ext − ω × Iω + Σ J_dofᵀ τ_j (angular parts).
  const Vec3 gravity = params.vec3_at(layout.gravity);
  std::vector<double>& generalised_adjoint = vjp.scratch;  // F̄, τ̄ per body (6)
  generalised_adjoint.assign(dof, 0.0);
  for (std::size_t b = 0; b < body_count; ++b) {
    if (model.bodies[b].type == BodyType::Kinematic) {
      // v_free = v: its state velocity, nothing else.
      out.add_linear(static_cast<int>(b), read_vec3(vjp.free_velocity_adjoint, static_cast<int>(6 * b)));
      out.add_angular(static_cast<int>(b), read_vec3(vjp.free_velocity_adjoint, static_cast<int>(6 * b + 3)));
      continue;
    }
    if (model.bodies[b].type != BodyType::Dynamic) continue;
    const int o = static_cast<int>(6 * b);
    const double linear_divisor = 1.0 + h * params.at(layout.body_linear_damping[b]);
    const double angular_divisor = 1.0 + h * params.at(layout.body_angular_damping[b]);
    const Vec3 free_linear = read_vec3(record.free_velocity, o), free_angular = read_vec3(record.free_velocity, o + 3);
    const Vec3 linear_adjoint = read_vec3(vjp.free_velocity_adjoint, o) / linear_divisor;
    const Vec3 angular_adjoint = read_vec3(vjp.free_velocity_adjoint, o + 3) / angular_divisor;
    param(layout.body_linear_damping[b]) += -h * dot(free_linear, read_vec3(vjp.free_velocity_adjoint, o)) / linear_divisor;
    param(layout.body_angular_damping[b]) += -h * dot(free_angular, read_vec3(vjp.free_velocity_adjoint, o + 3)) / angular_divisor;
    out.add_linear(static_cast<int>(b), linear_adjoint);
    // Linear: h g + h m⁻¹ (F_ext + generalised).
    for (int k = 0; k < 3; ++k) param(layout.gravity + k) += h * linear_adjoint[k];
    const Vec3 force_adjoint = linear_adjoint * (h * mass.inverse_mass[b]);
    for (int k = 0; k < 3; ++k) param(layout.body_force[b] + k) += force_adjoint[k];
    add_vec3(generalised_adjoint, o, force_adjoint);
    // Angular: a = I⁻¹ ȳ; τ̄ = h a; ω̄ += ȳ + h (I(ω × a) − (Iω) × a); Ī += −(τ̄ × ω) ωᵀ; (I⁻¹)‾ += h ȳ τᵀ.
    const Mat3& inertia = record.bodies.inertia_world[b];
    const Mat3& inverse_inertia = record.bodies.inverse_inertia_world[b];
    const Vec3 omega = state_in.angular_velocity[b];
    const Vec3 scaled_adjoint = inverse_inertia * angular_adjoint;
    const Vec3 torque_adjoint = scaled_adjoint * h;
    out.add_angular(static_cast<int>(b),
                    angular_adjoint + (inertia * cross(omega, scaled_adjoint) - cross(inertia * omega, scaled_adjoint)) * h);
    for (int k = 0; k < 3; ++k) param(layout.body_torque[b] + k) += torque_adjoint[k];
    add_vec3(generalised_adjoint, o + 3, torque_adjoint);
    add_outer(vjp.inertia_adjoint[b], cross(torque_adjoint, omega), omega, -1.0);
    // The forces themselves (for the M⁻¹ adjoints): F without m g, and the full torque.
    const double free_mass = 1.0 / mass.inverse_mass[b];
    const Vec3 total_force = (free_linear * linear_divisor - state_in.linear_velocity[b]) * (free_mass / h) - gravity * free_mass;
    const Vec3 total_torque = inertia * (free_angular * angular_divisor - omega) * (1.0 / h);
    vjp.mass_adjoint.inverse_mass[b] += h * dot(total_force, linear_adjoint);
    add_outer(vjp.mass_adjoint.inverse_inertia[b], angular_adjoint, total_torque, h);
  }
  // Generalised forces J_dofᵀ τ of motors and joint damping.
  rigid::BodyDynamics& start_rotations = vjp.start_rotations;
  start_rotations.rotation = record.bodies.rotation;  // copies into the kept capacity
  for (int a = 0; a < model.actuator_count(); ++a) {
    const Actuator& actuator = model.actuators[static_cast<std::size_t>(a)];
    if (actuator.type != ActuatorType::Motor) continue;
    const auto i = static_cast<std::size_t>(a);
    const ConstraintRow row = rigid::coordinate_row(model, state_in, start_rotations, actuator.joint, actuator.dof);
    const double bound = params.at(layout.actuator_max_torque[i]);
    const int clip = rigid::motor_clip_side(controls[i], bound);
    const double torque = rigid::clipped_motor_torque(controls[i], bound);
    const double torque_adjoint = row_dot(row, generalised_adjoint);
    if (clip != 0) param(layout.actuator_max_torque[i]) += torque_adjoint * clip;
    else control_adjoint[i] += torque_adjoint;
    RowAdjoint row_adjoint;
    add_row_adjoint_from_vector(row, generalised_adjoint, torque, row_adjoint);
    PoseAdjoint parent, child;
    coordinate_row_vjp(model, state_in, actuator.joint, actuator.dof, row_adjoint, parent, child);
    add_pose_adjoints(model.joints[static_cast<std::size_t>(actuator.joint)], parent, child);
  }
  for (int j = 0; j < model.joint_count(); ++j) {
    const double damping = params.at(layout.joint_damping[static_cast<std::size_t>(j)]);
    const Joint& joint = model.joints[static_cast<std::size_t>(j)];
    for (int d = 0; d < joint_dof_count(joint.type); ++d) {
      const ConstraintRow row = rigid::coordinate_row(model, state_in, start_rotations, j, d);
      const double rate = rigid::coordinate_rate(row, state_in);
      const double torque_adjoint = row_dot(row, generalised_adjoint);  // adjoint of τ = −c·rate
      param(layout.joint_damping[static_cast<std::size_t>(j)]) += -rate * torque_adjoint;
      if (damping == 0.0) continue;
      const double rate_adjoint = -damping * torque_adjoint;
      RowAdjoint row_adjoint;
      add_row_adjoint_from_vector(row, generalised_adjoint, -damping * rate, row_adjoint);
      // rate = J_dof v_t: both J and v_t.
      row_adjoint.linear_a += state_in.linear_velocity[static_cast<std::size_t>(row.body_a)] * rate_adjoint;
      row_adjoint.angular_a += state_in.angular_velocity[static_cast<std::size_t>(row.body_a)] * rate_adjoint;
      row_adjoint.linear_b += state_in.linear_velocity[static_cast<std::size_t>(row.body_b)] * rate_adjoint;
      row_adjoint.angular_b += state_in.angular_velocity[static_cast<std::size_t>(row.body_b)] * rate_adjoint;
      out.add_linear(row.body_a, row.linear_a * rate_adjoint);
      out.add_angular(row.body_a, row.angular_a * rate_adjoint);
      out.add_linear(row.body_b, row.linear_b * rate_adjoint);
      out.add_angular(row.body_b, row.angular_b * rate_adjoint);
      PoseAdjoint parent, child;
      coordinate_row_vjp(model, state_in, j, d, row_adjoint, parent, child);
      add_pose_adjoints(joint, parent, child);
    }
  }
  // Generalised forces enter the M⁻¹ adjoint above through total_force/total_torque.

  check_stage(state_adjoint, "forces");

  // --- Mass quantities (rigid/body_dynamics.cpp), reversed. ---------------------------
  // m⁻¹ = 1/m; I = R P diag(I_k) Pᵀ Rᵀ and I⁻¹ likewise with 1/I_k; u_k = R P e_k.
  for (std::size_t b = 0; b < body_count; ++b) {
    if (model.bodies[b].type != BodyType::Dynamic) continue;
    const double body_mass = params.at(layout.body_mass[b]);
    param(layout.body_mass[b]) += -vjp.mass_adjoint.inverse_mass[b] / (body_mass * body_mass);
    const Mat3 axes = record.bodies.rotation[b] * model.bodies[b].principal_frame.to_matrix();
    const Vec3 moments = params.vec3_at(layout.body_inertia[b]);
    for (int k = 0; k < 3; ++k) {
      const Vec3 axis = axes.col(k);
      param(layout.body_inertia[b] + k) += dot(axis, vjp.inertia_adjoint[b] * axis) -
                                           dot(axis, vjp.mass_adjoint.inverse_inertia[b] * axis) / (moments[k] * moments[k]);
    }
    out.add_rotation(static_cast<int>(b),
                     rotation_adjoint_of_world_matrix(record.bodies.inertia_world[b], vjp.inertia_adjoint[b]) +
                         rotation_adjoint_of_world_matrix(record.bodies.inverse_inertia_world[b],
                                                          vjp.mass_adjoint.inverse_inertia[b]));
  }
  check_stage(state_adjoint, "mass and inertia");
}

}  // namespace diffphys::adjoint
