// model/joint_frames.cpp — see joint_frames.hpp.
#include "model/joint_frames.hpp"

#include <cmath>
#include <utility>

#include "diffphys/error.hpp"
#include "model/builder_checks.hpp"

namespace diffphys {

using builder::require_direction;
using builder::require_finite;
using builder::require_unit;
using builder::require_unit_rotation;

// A joint's frames from its world-frame anchor and axes at the build-time pose.
void set_joint_frames_at_build_pose(const JointSpec& spec, const State& state, const std::string& item, Joint& joint) {
  require_finite(spec.anchor, item, "anchor");
  const Vec3 axis = require_direction(spec.axis, item, "axis");
  const auto p = static_cast<std::size_t>(joint.parent), c = static_cast<std::size_t>(joint.child);
  const Quat q_parent = state.orientation[p], q_child = state.orientation[c];
  joint.anchor_parent = q_parent.inverse_rotate(spec.anchor - state.position[p]);
  joint.anchor_child = q_child.inverse_rotate(spec.anchor - state.position[c]);
  joint.axis_parent = q_parent.inverse_rotate(axis);
  joint.axis_child = q_child.inverse_rotate(axis);
  if (spec.type == JointType::Universal) {
    const Vec3 axis2 = require_direction(spec.axis2, item, "axis2");
    if (std::abs(dot(axis, axis2)) > 1e-6)
      throw Error(message(item, ": axis and axis2 of a universal joint must be perpendicular, their dot product is ",
                          dot(axis, axis2)));
    joint.axis2_child = q_child.inverse_rotate(axis2);
    joint.axis2_parent = q_parent.inverse_rotate(axis2);
  } else if (spec.type == JointType::Planar) {
    // The in-plane directions measure the translations; fixed in the parent like the normal.
    const Vec3 axis2 = require_direction(spec.axis2, item, "axis2");
    if (std::abs(dot(axis, axis2)) > 1e-6)
      throw Error(message(
          item, ": axis2 of a planar joint must lie in its plane (perpendicular to axis), their dot product is ",
          dot(axis, axis2)));
    const Vec3 axis3 = spec.axis3 ? require_direction(*spec.axis3, item, "axis3") : normalized(cross(axis, axis2));
    if (std::abs(dot(axis, axis3)) > 1e-6 || std::abs(dot(axis2, axis3)) > 1e-6)
      throw Error(message(item,
                          ": axis3 of a planar joint must be perpendicular to axis and axis2, their dot products are ",
                          dot(axis, axis3), " and ", dot(axis2, axis3)));
    joint.axis2_parent = q_parent.inverse_rotate(axis2);
    joint.axis3_parent = q_parent.inverse_rotate(axis3);
  } else if (spec.axis3) {
    throw Error(message(item, ": axis3 applies to planar joints only"));
  }
  joint.rest_relative = q_parent.conjugate() * q_child;
}

// A joint's frames as given in its bodies' frames (JointFrames): checked, anchors shifted to
// the centres of mass, nothing re-derived.
void set_joint_frames(const JointFrames& frames, const Vec3& parent_center, const Vec3& child_center,
                      const std::string& item, Joint& joint) {
  require_finite(frames.anchor_parent, item, "anchor_parent");
  require_finite(frames.anchor_child, item, "anchor_child");
  for (const auto& [vector, field] :
       {std::pair{&frames.axis_parent, "axis_parent"}, std::pair{&frames.axis_child, "axis_child"},
        std::pair{&frames.axis2_parent, "axis2_parent"}, std::pair{&frames.axis2_child, "axis2_child"},
        std::pair{&frames.axis3_parent, "axis3_parent"}})
    require_finite(*vector, item, field);
  const bool has_axis = joint.type == JointType::Revolute || joint.type == JointType::Prismatic ||
                        joint.type == JointType::Universal || joint.type == JointType::Planar;
  if (has_axis) {
    require_unit(frames.axis_parent, item, "axis_parent");
    require_unit(frames.axis_child, item, "axis_child");
  }
  const auto perpendicular = [&](const Vec3& a, const Vec3& b, const char* what) {
    if (std::abs(dot(a, b)) > 1e-6)
      throw Error(message(item, ": ", what, " must be perpendicular, their dot product is ", dot(a, b)));
  };
  if (joint.type == JointType::Universal) {
    require_unit(frames.axis2_parent, item, "axis2_parent");
    require_unit(frames.axis2_child, item, "axis2_child");
    perpendicular(frames.axis_parent, frames.axis2_parent, "axis_parent and axis2_parent");
  } else if (joint.type == JointType::Planar) {
    require_unit(frames.axis2_parent, item, "axis2_parent");
    require_unit(frames.axis3_parent, item, "axis3_parent");
    perpendicular(frames.axis_parent, frames.axis2_parent, "axis_parent and axis2_parent");
    perpendicular(frames.axis_parent, frames.axis3_parent, "axis_parent and axis3_parent");
    perpendicular(frames.axis2_parent, frames.axis3_parent, "axis2_parent and axis3_parent");
  }
  joint.anchor_parent = frames.anchor_parent - parent_center;
  joint.anchor_child = frames.anchor_child - child_center;
  joint.axis_parent = frames.axis_parent;
  joint.axis_child = frames.axis_child;
  joint.axis2_parent = frames.axis2_parent;
  joint.axis2_child = frames.axis2_child;
  joint.axis3_parent = frames.axis3_parent;
  joint.rest_relative = require_unit_rotation(frames.rest_relative, item, "rest_relative");
}

}  // namespace diffphys
