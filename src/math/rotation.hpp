// math/rotation.hpp — conversions and decompositions of rotations and symmetric 3x3 matrices
// that the model builder needs (principal axes of inertia) and joints use (relative angles).
#pragma once

#include "diffphys/math.hpp"

namespace diffphys {

// Unit quaternion of a proper rotation matrix (Shepperd's method: pick the largest of
// w, x, y, z to divide by, for accuracy).
Quat quat_from_matrix(const Mat3& rotation);

// q itself when it is unit up to rounding (|q|² within 1e-12 of 1: a normalised quaternion is
// within 3ε, a product of a few unit ones or an eigen-solver's axes within tens of ε), else
// q / |q|. Normalising a unit quaternion again changes its last bits in about a third of
// cases; keeping it is what lets a written scene reload bit for bit.
Quat unit_or_normalized(const Quat& q);

// Eigen-decomposition of a symmetric matrix by cyclic Jacobi rotations:
// symmetric = eigenvectors · diag(eigenvalues) · eigenvectorsᵀ, eigenvalues ascending,
// eigenvectors a proper rotation (determinant +1).
void symmetric_eigen(const Mat3& symmetric, Vec3& eigenvalues, Mat3& eigenvectors);

// Signed angle (rad) that rotates `from` onto `to` about `axis`, all three vectors
// expressed in the same frame; from and to are projected onto the plane normal to axis.
double signed_angle(const Vec3& from, const Vec3& to, const Vec3& axis);

}  // namespace diffphys
