// io/mjcf_actuators.cpp — MJCF <actuator> children: <motor> → Motor, <position> → Servo,
// everything else reported and skipped with its line (io/mjcf_reader.hpp).
#include <tinyxml2.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "io/mjcf_reader.hpp"

namespace diffphys::io::mjcf {

void MjcfReader::read_actuators(const std::vector<const XMLElement*>& sections, ModelBuilder& builder) {
  // Every <actuator> section in file order: MuJoCo appends them, and an unnamed actuator's
  // name is its MuJoCo id across all of them.
  std::vector<const XMLElement*> all;
  for (const XMLElement* section : sections)
    for (const XMLElement* actuator = section->FirstChildElement(); actuator; actuator = actuator->NextSiblingElement())
      all.push_back(actuator);
  for (std::size_t index = 0; index < all.size(); ++index) {
    const XMLElement* actuator = all[index];
    const std::string tag = actuator->Name();
    if (tag != "motor" && tag != "position") {
      warnings_.add(source_, actuator,
                    "actuator type <" + tag + "> is not supported (only motor and position): skipped");
      continue;
    }
    check_attributes(actuator, tag);
    const std::string class_name = class_of(actuator, "main");
    const std::string name = source_.text(actuator, "name").value_or("actuator" + std::to_string(index));
    const auto joint_name = source_.text(actuator, "joint");
    if (!joint_name) {
      warnings_.add(source_, actuator, "only joint transmissions are supported (no tendon, site or body): skipped");
      continue;
    }
    const auto target = joint_targets_.find(*joint_name);
    if (target == joint_targets_.end()) {
      // A joint of a static body, or a name that does not exist.
      bool exists = false;
      for (const MjcfBody& body : bodies_)
        for (const MjcfJoint& joint : body.joints) exists = exists || joint.name == *joint_name;
      if (!exists) source_.fail(actuator, "unknown joint '" + *joint_name + "'");
      warnings_.add(source_, actuator, "its joint '" + *joint_name + "' is not simulated: skipped");
      continue;
    }
    if (!target->second.actuable) {
      warnings_.add(source_, actuator, "skipped: " + target->second.why_not);
      continue;
    }
    const auto gear = numbers(actuator, tag, "gear", class_name, {1, 2, 3, 4, 5, 6}).value_or(std::vector<double>{1.0});
    for (std::size_t k = 1; k < gear.size(); ++k)
      if (gear[k] != 0) source_.fail(actuator, "gear beyond the first component applies to site transmissions only");
    const auto control_range = limited_range(actuator, tag, "ctrllimited", "ctrlrange", class_name);
    const auto force_range = limited_range(actuator, tag, "forcelimited", "forcerange", class_name);
    const auto largest = [](const std::pair<double, double>& range) {
      return std::max(std::abs(range.first), std::abs(range.second));
    };
    const auto warn_asymmetric = [&](const std::pair<double, double>& range, const char* what) {
      if (range.first != -range.second)
        warnings_.add(source_, actuator,
                      message(what, " [", range.first, ", ", range.second,
                              "] is not symmetric; diffphys bounds symmetrically by ", largest(range)));
    };
    ActuatorSpec spec;
    spec.name = name;
    spec.joint = target->second.joint;
    spec.dof = target->second.dof;
    const double g = gear[0];
    if (tag == "motor") {
      // diffphys's motor control is the joint torque itself: τ = gear · ctrl.
      spec.type = ActuatorType::Motor;
      double bound = 0.0;
      if (control_range) {
        warn_asymmetric(*control_range, "ctrlrange");
        bound = std::abs(g) * largest(*control_range);
      }
      if (force_range) {
        warn_asymmetric(*force_range, "forcerange");
        bound = bound > 0 ? std::min(bound, largest(*force_range)) : largest(*force_range);
      }
      spec.max_torque = bound;
    } else {
      // Position servo. MuJoCo: τ = kp (ctrl − q); diffphys: q̇ → gain (target − q), a
      // velocity-level servo. With joint damping d the two agree once inertia has settled
      // (d q̇ = kp (ctrl − q)), so gain = kp / d; without damping, gain = √(kp / I), the
      // natural frequency of the joint with the inertia I of the child body about the axis.
      spec.type = ActuatorType::Servo;
      const double kp = number(actuator, tag, "kp", class_name).value_or(1.0) * g;
      if (!(kp > 0)) source_.fail(actuator, message("kp must be positive, got ", kp));
      const MjcfJoint& joint = *target->second.source;
      const MjcfBody& body = bodies_[static_cast<std::size_t>(target->second.body)];
      if (joint.damping > 0) {
        spec.gain = kp / joint.damping;
      } else {
        double inertia = body.mass;
        if (joint.type == "hinge") {
          const Mat3 rotation = body.principal.orientation.to_matrix();
          const Vec3 axis_local = rotation.transpose_times(joint.axis);
          const Vec3 arm = cross(body.principal.position - joint.anchor, joint.axis);
          inertia = body.principal.moments.x * axis_local.x * axis_local.x +
                    body.principal.moments.y * axis_local.y * axis_local.y +
                    body.principal.moments.z * axis_local.z * axis_local.z + body.mass * dot(arm, arm);
        }
        spec.gain = std::sqrt(kp / inertia);
      }
      // The largest error the servo must correct: the control range, else the joint range.
      double span = 0.0;
      if (control_range)
        span = control_range->second - control_range->first;
      else if (joint.range)
        span = joint.range->second - joint.range->first;
      if (!(span > 0)) {
        span = joint.type == "hinge" ? kPi : 1.0;
        warnings_.add(source_, actuator,
                      message("no ctrlrange or joint range: the servo's bounds assume errors up to ", span,
                              joint.type == "hinge" ? " rad" : " m"));
      }
      spec.max_torque = force_range ? largest(*force_range) : kp * span;
      spec.max_velocity = spec.gain * span;
      if (control_range) warn_asymmetric(*control_range, "ctrlrange");
    }
    item_lines_.note("actuator '" + name + "'", actuator);
    builder.add_actuator(spec);
  }
}

}  // namespace diffphys::io::mjcf
