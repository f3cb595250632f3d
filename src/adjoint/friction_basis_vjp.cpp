// adjoint/friction_basis_vjp.cpp — see friction_basis_vjp.hpp.
#include "adjoint/friction_basis_vjp.hpp"

#include "math/dual.hpp"
#include "rigid/friction_basis.hpp"

namespace diffphys::adjoint {

FrictionBasisAdjoint friction_basis_vjp(const Vec3& normal, const Vec3& relative_velocity, const Vec3& tangent1_adjoint,
                                        const Vec3& tangent2_adjoint, bool sliding) {
  // The forward's own branch, then the same expressions on dual numbers: inputs 0–2 the
  // normal, 3–5 the relative velocity (a constant ŝ when the slip's turn is held).
  Vec3 tangent1, tangent2;
  const bool aligned = rigid::friction_basis(normal, relative_velocity, tangent1, tangent2);
  using D = Dual<6>;
  const Vec3T<D> n{D::variable(normal.x, 0), D::variable(normal.y, 1), D::variable(normal.z, 2)};
  Vec3T<D> velocity;
  if (sliding || !aligned) {
    velocity = {D::variable(relative_velocity.x, 3), D::variable(relative_velocity.y, 4),
                D::variable(relative_velocity.z, 5)};
  } else {
    velocity = Vec3T<D>(tangent1);  // ŝ held: the pyramid only tilts with n
  }
  Vec3T<D> t1, t2;
  rigid::friction_basis(n, velocity, t1, t2);
  FrictionBasisAdjoint adjoint;
  for (int c = 0; c < 3; ++c) {
    const auto input = static_cast<std::size_t>(c);
    for (int r = 0; r < 3; ++r) {
      adjoint.normal[c] += t1[r].derivative[input] * tangent1_adjoint[r] + t2[r].derivative[input] * tangent2_adjoint[r];
      adjoint.relative_velocity[c] +=
          t1[r].derivative[input + 3] * tangent1_adjoint[r] + t2[r].derivative[input + 3] * tangent2_adjoint[r];
    }
  }
  return adjoint;
}

}  // namespace diffphys::adjoint
