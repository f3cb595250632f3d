// tests/scene_writer_test_support.hpp — comparing two Scenes field by field with ==, for the
// scene writer's round trip (tests/scene_writer_test.cpp): every Model field the reader and the
// builder set, θ, the state and the controls. A difference is reported with the item's name
// and the field, so a failing round trip says what the file lost.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "diffphys/model_builder.hpp"

namespace diffphys::testing {

inline bool same_matrix(const Mat3& a, const Mat3& b) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      if (!(a(i, j) == b(i, j))) return false;
  return true;
}

inline void expect_same_solver(const SolverSettings& a, const SolverSettings& b) {
  EXPECT_EQ(a.coordinates, b.coordinates);
  EXPECT_EQ(a.formulation, b.formulation);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.max_iterations, b.max_iterations);
  EXPECT_EQ(a.tolerance, b.tolerance);
  EXPECT_EQ(a.friction_directions, b.friction_directions);
  EXPECT_EQ(a.slip_aligned_friction, b.slip_aligned_friction);
  EXPECT_EQ(a.contact_margin, b.contact_margin);
  EXPECT_EQ(a.speculative_factor, b.speculative_factor);
  EXPECT_EQ(a.contact_point, b.contact_point);
  EXPECT_EQ(a.contact_erp, b.contact_erp);
  EXPECT_EQ(a.penetration_slop, b.penetration_slop);
  EXPECT_EQ(a.restitution_threshold, b.restitution_threshold);
  EXPECT_EQ(a.time_of_impact, b.time_of_impact);
  EXPECT_EQ(a.warm_start, b.warm_start);
  EXPECT_EQ(a.stabilization_iterations, b.stabilization_iterations);
  EXPECT_EQ(a.stabilization_tolerance, b.stabilization_tolerance);
  EXPECT_EQ(a.max_speed, b.max_speed);
  EXPECT_EQ(a.max_angular_speed, b.max_angular_speed);
}

// The hull's geometry and topology; not `source`, which only names it in messages.
inline void expect_same_mesh(const ConvexMesh& a, const ConvexMesh& b, const std::string& item) {
  SCOPED_TRACE(item);
  EXPECT_EQ(a.vertices, b.vertices);
  ASSERT_EQ(a.faces.size(), b.faces.size());
  for (std::size_t f = 0; f < a.faces.size(); ++f) {
    const ConvexMesh::Face &x = a.faces[f], &y = b.faces[f];
    EXPECT_TRUE(x.normal == y.normal && x.offset == y.offset && x.first == y.first && x.count == y.count &&
                x.clip_first == y.clip_first && x.clip_count == y.clip_count)
        << "face " << f;
  }
  EXPECT_EQ(a.face_vertices, b.face_vertices);
  EXPECT_EQ(a.face_edges, b.face_edges);
  ASSERT_EQ(a.edges.size(), b.edges.size());
  for (std::size_t e = 0; e < a.edges.size(); ++e)
    EXPECT_TRUE(a.edges[e].vertex[0] == b.edges[e].vertex[0] && a.edges[e].vertex[1] == b.edges[e].vertex[1] &&
                a.edges[e].face[0] == b.edges[e].face[0] && a.edges[e].face[1] == b.edges[e].face[1])
        << "edge " << e;
  EXPECT_EQ(a.clip_vertices, b.clip_vertices);
  EXPECT_EQ(a.clip_deviation, b.clip_deviation);
  EXPECT_EQ(a.volume, b.volume);
  EXPECT_TRUE(a.centroid == b.centroid);
  EXPECT_TRUE(same_matrix(a.inertia, b.inertia));
}

inline void expect_same_layout(const ParamLayout& a, const ParamLayout& b) {
  EXPECT_EQ(a.size, b.size);
  ASSERT_EQ(a.slices.size(), b.slices.size());
  for (std::size_t s = 0; s < a.slices.size(); ++s)
    EXPECT_TRUE(a.slices[s].name == b.slices[s].name && a.slices[s].offset == b.slices[s].offset &&
                a.slices[s].size == b.slices[s].size)
        << "slice " << s << ": " << a.slices[s].name << " vs " << b.slices[s].name;
  EXPECT_EQ(a.gravity, b.gravity);
  EXPECT_EQ(a.body_mass, b.body_mass);
  EXPECT_EQ(a.body_inertia, b.body_inertia);
  EXPECT_EQ(a.body_friction, b.body_friction);
  EXPECT_EQ(a.body_restitution, b.body_restitution);
  EXPECT_EQ(a.body_linear_damping, b.body_linear_damping);
  EXPECT_EQ(a.body_angular_damping, b.body_angular_damping);
  EXPECT_EQ(a.body_force, b.body_force);
  EXPECT_EQ(a.body_torque, b.body_torque);
  EXPECT_EQ(a.shape_size, b.shape_size);
  EXPECT_EQ(a.joint_damping, b.joint_damping);
  EXPECT_EQ(a.actuator_gain, b.actuator_gain);
  EXPECT_EQ(a.actuator_max_torque, b.actuator_max_torque);
  EXPECT_EQ(a.actuator_max_velocity, b.actuator_max_velocity);
  EXPECT_EQ(a.equality_time_constant, b.equality_time_constant);
  EXPECT_EQ(a.equality_damping_ratio, b.equality_damping_ratio);
  for (int c = 0; c < kRowClassCount; ++c) {
    EXPECT_EQ(a.compliance_time_constant[c], b.compliance_time_constant[c]);
    EXPECT_EQ(a.compliance_damping_ratio[c], b.compliance_damping_ratio[c]);
  }
}

inline void expect_same_state(const State& a, const State& b, const std::string& when) {
  EXPECT_EQ(a.time, b.time) << when;
  ASSERT_EQ(a.body_count(), b.body_count()) << when;
  for (std::size_t i = 0; i < a.position.size(); ++i)
    EXPECT_TRUE(a.position[i] == b.position[i] && a.orientation[i] == b.orientation[i] &&
                a.linear_velocity[i] == b.linear_velocity[i] && a.angular_velocity[i] == b.angular_velocity[i])
        << when << ": body #" << i << " differs";
}

inline void expect_same_scene(const Scene& a, const Scene& b) {
  const Model &x = a.model, &y = b.model;
  EXPECT_EQ(x.name, y.name);
  EXPECT_EQ(x.dt, y.dt);
  expect_same_solver(x.solver, y.solver);
  ASSERT_EQ(x.body_count(), y.body_count());
  for (std::size_t i = 0; i < x.bodies.size(); ++i) {
    const Body &p = x.bodies[i], &q = y.bodies[i];
    EXPECT_TRUE(p.name == q.name && p.type == q.type && p.principal_frame == q.principal_frame &&
                p.first_shape == q.first_shape && p.shape_count == q.shape_count)
        << "body '" << p.name << "' vs '" << q.name << "'";
  }
  ASSERT_EQ(x.shape_count(), y.shape_count());
  for (std::size_t i = 0; i < x.shapes.size(); ++i) {
    const Shape &p = x.shapes[i], &q = y.shapes[i];
    EXPECT_TRUE(p.name == q.name && p.type == q.type && p.body == q.body && p.local_position == q.local_position &&
                p.local_orientation == q.local_orientation && p.collision_group == q.collision_group &&
                p.collision_mask == q.collision_mask && p.mesh == q.mesh)
        << "shape '" << p.name << "' vs '" << q.name << "'";
  }
  ASSERT_EQ(x.joint_count(), y.joint_count());
  for (std::size_t i = 0; i < x.joints.size(); ++i) {
    const Joint &p = x.joints[i], &q = y.joints[i];
    EXPECT_TRUE(p.name == q.name && p.type == q.type && p.parent == q.parent && p.child == q.child &&
                p.anchor_parent == q.anchor_parent && p.anchor_child == q.anchor_child &&
                p.axis_parent == q.axis_parent && p.axis_child == q.axis_child && p.axis2_child == q.axis2_child &&
                p.axis2_parent == q.axis2_parent && p.axis3_parent == q.axis3_parent &&
                p.rest_relative == q.rest_relative && p.has_limits == q.has_limits && p.lower_limit == q.lower_limit &&
                p.upper_limit == q.upper_limit && p.collide_connected == q.collide_connected)
        << "joint '" << p.name << "' vs '" << q.name << "'";
  }
  ASSERT_EQ(x.actuator_count(), y.actuator_count());
  for (std::size_t i = 0; i < x.actuators.size(); ++i) {
    const Actuator &p = x.actuators[i], &q = y.actuators[i];
    EXPECT_TRUE(p.name == q.name && p.type == q.type && p.joint == q.joint && p.dof == q.dof)
        << "actuator '" << p.name << "' vs '" << q.name << "'";
  }
  ASSERT_EQ(x.equality_count(), y.equality_count());
  for (std::size_t i = 0; i < x.equalities.size(); ++i) {
    const Equality &p = x.equalities[i], &q = y.equalities[i];
    EXPECT_TRUE(p.name == q.name && p.type == q.type && p.body_a == q.body_a && p.body_b == q.body_b &&
                p.anchor_a == q.anchor_a && p.anchor_b == q.anchor_b && p.length == q.length &&
                p.relative == q.relative)
        << "equality '" << p.name << "' vs '" << q.name << "'";
  }
  EXPECT_EQ(x.collision_exclusions, y.collision_exclusions);
  ASSERT_EQ(x.meshes.size(), y.meshes.size());
  for (std::size_t i = 0; i < x.meshes.size(); ++i)
    expect_same_mesh(x.meshes[i], y.meshes[i], "mesh #" + std::to_string(i));
  expect_same_layout(x.layout, y.layout);
  EXPECT_EQ(a.params.values, b.params.values);  // θ, bit for bit (== on doubles)
  expect_same_state(a.state, b.state, "initial state");
  EXPECT_EQ(a.controls, b.controls);
}

}  // namespace diffphys::testing
