// soft/tet_kinematics.hpp — scalar-generic 3×3 algebra and the deformation gradient of a
// linear tetrahedron, shared by the tet elasticity terms.
//
// F = D_s D_m⁻¹ with D_s = [x1−x0, x2−x0, x3−x0] and D_m the same at rest (Sifakis &
// Barbič 2012, "FEM simulation of 3D deformable solids", §4). Matrices are row-major.
#pragma once

#include <array>

#include "diffphys/soft.hpp"
#include "soft/energy_term.hpp"

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

}  // namespace diffphys::soft
