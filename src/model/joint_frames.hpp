// model/joint_frames.hpp — a joint's anchors, axes and zero in its two bodies' frames, as
// ModelBuilder::build() sets them (model.hpp, Joint): from the world-frame anchor and axes of a
// JointSpec at the build-time pose, or as given in its JointFrames (what a written scene holds,
// so that it reloads bit for bit). Internal to src/model.
#pragma once

#include <string>

#include "diffphys/model.hpp"
#include "diffphys/model_builder.hpp"
#include "diffphys/state.hpp"

namespace diffphys {

// From spec.anchor, axis, axis2 and axis3 (world frame) and the bodies' poses in `state`;
// joint.type, parent and child are set. Throws Error naming `item` for a bad axis.
void set_joint_frames_at_build_pose(const JointSpec& spec, const State& state, const std::string& item, Joint& joint);

// From `frames` (body frames as given, origin at each body's position): checked (finite,
// unit and perpendicular axes, unit rest_relative), anchors shifted by the bodies' centres
// of mass in those frames, nothing re-derived.
void set_joint_frames(const JointFrames& frames, const Vec3& parent_center, const Vec3& child_center,
                      const std::string& item, Joint& joint);

}  // namespace diffphys
