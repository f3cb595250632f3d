// model/builder_checks.hpp — the checks ModelBuilder applies to the vectors and rotations of
// its specs (model_builder.cpp, joint_frames.cpp): finite, non-zero, unit; each failure an
// Error naming the item, the field and the value. Internal to src/model.
#pragma once

#include <cmath>
#include <string>

#include "diffphys/error.hpp"
#include "diffphys/math.hpp"
#include "math/rotation.hpp"

namespace diffphys::builder {

inline void require_finite(const Vec3& v, const std::string& item, const char* field) {
  if (!is_finite(v)) throw Error(message(item, ": ", field, " must be finite, got (", v.x, ", ", v.y, ", ", v.z, ")"));
}

inline Quat require_rotation(const Quat& q, const std::string& item, const char* field) {
  if (!is_finite(q)) throw Error(message(item, ": ", field, " must be finite"));
  const double n2 = q.squared_norm();
  if (!(n2 > 1e-12))
    throw Error(
        message(item, ": ", field, " must be a non-zero quaternion, got (", q.w, ", ", q.x, ", ", q.y, ", ", q.z, ")"));
  return unit_or_normalized(q);  // a unit quaternion kept bit for bit (math/rotation.hpp)
}

// A direction given in a body frame (JointFrames): finite and unit to 1e-9, kept as given.
inline void require_unit(const Vec3& v, const std::string& item, const char* field) {
  require_finite(v, item, field);
  if (!(std::abs(dot(v, v) - 1.0) <= 1e-9))
    throw Error(message(item, ": ", field, " must be a unit vector, got (", v.x, ", ", v.y, ", ", v.z, ")"));
}

// A rotation given exactly (JointFrames, weld's relative, inertia_frame): unit to 1e-9.
inline Quat require_unit_rotation(const Quat& q, const std::string& item, const char* field) {
  const double length = std::sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
  if (!(std::isfinite(length) && std::abs(length - 1.0) < 1e-9))
    throw Error(
        message(item, ": ", field, " must be a unit quaternion, got (", q.w, ", ", q.x, ", ", q.y, ", ", q.z, ")"));
  return unit_or_normalized(q);
}

inline Vec3 require_direction(const Vec3& v, const std::string& item, const char* field) {
  require_finite(v, item, field);
  const double n = norm(v);
  if (!(n > 1e-12))
    throw Error(message(item, ": ", field, " must be a non-zero vector, got (", v.x, ", ", v.y, ", ", v.z, ")"));
  return v / n;
}

}  // namespace diffphys::builder
