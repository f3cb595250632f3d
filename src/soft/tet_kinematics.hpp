// soft/tet_kinematics.hpp — scalar-generic 3×3 algebra and the deformation gradient of a
// linear tetrahedron, shared by the tet elasticity terms.
//
// F = D_s D_m⁻¹ with D_s = [x1−x0, x2−x0, x3−x0] and D_m the same at rest (Sifakis &
// Barbič 2012, "FEM simulation of 3D deformable solids", §4). Matrices are row-major.
#pragma once

#include <array>

#include "diffphys/soft.hpp"
#include "soft/energy_term.hpp"
#include "soft/hyper_dual.hpp"

namespace diffphys::soft {

template <class T>
using M3 = std::array<T, 9>;

template <class T>
M3<T> deformation_gradient(const T* x, const std::array<double, 9>& rest_inverse) {
  M3<T> ds;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) ds[3 * r + c] = x[3 * (c + 1) + r] - x[r];
  M3<T> f;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      f[3 * r + c] = ds[3 * r] * rest_inverse[c] + ds[3 * r + 1] * rest_inverse[3 + c] +
                     ds[3 * r + 2] * rest_inverse[6 + c];
  return f;
}

template <class T>
T determinant(const M3<T>& m) {
  return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
         m[2] * (m[3] * m[7] - m[4] * m[6]);
}

// (m⁻¹)ᵀ = cofactor(m) / det(m).
template <class T>
M3<T> inverse_transpose(const M3<T>& m) {
  const T inverse_det = 1.0 / determinant(m);
  M3<T> c;
  c[0] = (m[4] * m[8] - m[5] * m[7]) * inverse_det;
  c[1] = (m[5] * m[6] - m[3] * m[8]) * inverse_det;
  c[2] = (m[3] * m[7] - m[4] * m[6]) * inverse_det;
  c[3] = (m[2] * m[7] - m[1] * m[8]) * inverse_det;
  c[4] = (m[0] * m[8] - m[2] * m[6]) * inverse_det;
  c[5] = (m[1] * m[6] - m[0] * m[7]) * inverse_det;
  c[6] = (m[1] * m[5] - m[2] * m[4]) * inverse_det;
  c[7] = (m[2] * m[3] - m[0] * m[5]) * inverse_det;
  c[8] = (m[0] * m[4] - m[1] * m[3]) * inverse_det;
  return c;
}

// Lamé parameters from Young's modulus and Poisson's ratio.
template <class T>
void lame_parameters(const T& youngs, const T& poisson, T& mu, T& lambda) {
  mu = youngs / (2.0 * (1.0 + poisson));
  lambda = youngs * poisson / ((1.0 + poisson) * (1.0 - 2.0 * poisson));
}

// The tets of one elastic model, with their Young's modulus and Poisson ratio as extras.
struct TetLocalBase {
  static constexpr int kNodes = 4;
  static constexpr int kExtra = 2;
  std::vector<int> elements;  // indices into SoftModel::tets

  TetLocalBase(const SoftModel& model, ElasticModel kind) {
    for (std::size_t t = 0; t < model.tets.size(); ++t)
      if (model.tet_materials[static_cast<std::size_t>(model.tets[t].material)].model == kind)
        elements.push_back(static_cast<int>(t));
  }
  int count(const SoftModel&) const { return static_cast<int>(elements.size()); }
  const TetElement& tet(const SoftModel& model, int e) const {
    return model.tets[static_cast<std::size_t>(elements[static_cast<std::size_t>(e)])];
  }
  std::array<int, 4> nodes(const SoftModel& model, int e) const { return tet(model, e).nodes; }
  void extra(const TermInputs& in, int e, double* values, ExtraSource* sources) const {
    const auto material = static_cast<std::size_t>(tet(in.model, e).material);
    const int indices[2] = {in.model.layout.tet_youngs_modulus[material],
                            in.model.layout.tet_poisson_ratio[material]};
    for (int j = 0; j < 2; ++j) {
      values[j] = in.params[static_cast<std::size_t>(indices[j])];
      sources[j] = {ExtraSource::Param, indices[j]};
    }
  }
};

// ∇ₓE and ∇²ₓE of a tet whose energy depends on x only through F (`energy_of_f`): HyperDual
// over the 9 entries of F (45 second derivatives instead of the 78 of the 12 DOFs, and F
// itself computed in doubles), chained through the linear map x ↦ F. With
// G[a][c] = ∂F_rc/∂x_{a,r} (node a's shape-function gradient: row a−1 of D_m⁻¹, node 0
// minus their sum), ∂E/∂x_{a,r} = Σ_c P_rc G[a][c] and
// ∂²E/∂x_{a,r}∂x_{b,s} = Σ_c Σ_d G[a][c] G[b][d] ∂²E/∂F_rc∂F_sd.
template <class Local>
void tet_derivatives_through_f(const Local& local, const TermInputs& in, int e, const double* x, const double* extra,
                               std::array<double, 12>& gradient, std::array<double, 144>& hessian) {
  using Scalar = HyperDual<9>;
  const std::array<double, 9>& rest_inverse = local.tet(in.model, e).rest_inverse;
  const M3<double> f = deformation_gradient(x, rest_inverse);
  M3<Scalar> fs;
  for (int i = 0; i < 9; ++i) fs[static_cast<std::size_t>(i)] = Scalar::variable(f[static_cast<std::size_t>(i)], i);
  const Scalar parameters[2] = {Scalar(extra[0]), Scalar(extra[1])};
  const Scalar energy = local.energy_of_f(in, e, fs, parameters);
  double g[4][3];
  for (int c = 0; c < 3; ++c) {
    g[0][c] = 0.0;
    for (int a = 1; a < 4; ++a) {
      g[a][c] = rest_inverse[static_cast<std::size_t>(3 * (a - 1) + c)];
      g[0][c] -= g[a][c];
    }
  }
  for (int a = 0; a < 4; ++a)
    for (int r = 0; r < 3; ++r) {
      double sum = 0.0;
      for (int c = 0; c < 3; ++c) sum += energy.gradient[static_cast<std::size_t>(3 * r + c)] * g[a][c];
      gradient[static_cast<std::size_t>(3 * a + r)] = sum;
    }
  // partial[(a, r)][(s, d)] = Σ_c G[a][c] ∂²E/∂F_rc∂F_sd, then contract d with G[b].
  double partial[12][9];
  for (int a = 0; a < 4; ++a)
    for (int r = 0; r < 3; ++r)
      for (int sd = 0; sd < 9; ++sd) {
        double sum = 0.0;
        for (int c = 0; c < 3; ++c) sum += g[a][c] * energy.second(3 * r + c, sd);
        partial[3 * a + r][sd] = sum;
      }
  for (int i = 0; i < 12; ++i)
    for (int b = 0; b < 4; ++b)
      for (int s = 0; s < 3; ++s) {
        double sum = 0.0;
        for (int d = 0; d < 3; ++d) sum += partial[i][3 * s + d] * g[b][d];
        hessian[static_cast<std::size_t>(12 * i + 3 * b + s)] = sum;
      }
}

}  // namespace diffphys::soft
