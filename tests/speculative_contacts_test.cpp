// tests/speculative_contacts_test.cpp — speculative contacts (collision/detect_contacts.hpp,
// SolverSettings::speculative_factor): a fast point is found while its row cannot yet act,
// such a row changes nothing, slow scenes keep exactly the fixed margin's contacts, and the
// gradients through a speculative contact match central differences.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collision/detect_contacts.hpp"
#include "diffphys/error.hpp"
#include "diffphys/model_builder.hpp"
#include "diffphys/scene.hpp"
#include "diffphys/simulator.hpp"
#include "gradcheck_test_helpers.hpp"
#include "test_paths.hpp"

namespace diffphys {
namespace {

constexpr double kStep = 1.0 / 30.0;  // s
constexpr double kBallSpeed = 3.0;    // m/s: 10 cm per step, ten times the contact margin

// A box hanging from a hinge on the world and a ball flying at it along x, no gravity: the
// ball's first contact is with a body that has a joint (no time of impact), as in chain-mass.
std::string hinged_box_and_ball(const char* formulation, double speculative_factor, double ball_rise = 0.0) {
  nlohmann::json scene = {{"dt", kStep},
                          {"gravity", {0.0, 0.0, 0.0}},
                          {"solver", {{"formulation", formulation}, {"speculative_factor", speculative_factor}}},
                          {"bodies",
                           {{{"name", "bar"},
                             {"position", {0.0, 0.0, 0.7}},
                             {"mass", 0.5},
                             {"friction", 0.5},
                             {"shapes", {{{"type", "box"}, {"half_extents", {0.1, 0.1, 0.3}}}}}},
                            {{"name", "ball"},
                             {"position", {-0.83, 0.0, 0.55}},
                             {"linear_velocity", {kBallSpeed, 0.0, ball_rise}},
                             {"mass", 1.0},
                             {"friction", 0.5},
                             {"shapes", {{{"type", "sphere"}, {"radius", 0.1}}}}}}},
                          {"joints",
                           {{{"name", "hinge"},
                             {"type", "revolute"},
                             {"parent", "world"},
                             {"child", "bar"},
                             {"anchor", {0.0, 0.0, 1.0}},
                             {"axis", {0.0, 1.0, 0.0}}}}}};
  return scene.dump();
}

// Steps until the collision stage first reports a contact; returns that step (−1: none
// within `steps`) and leaves the state it was found in and its contacts.
int first_contact_step(const Scene& scene, int steps, State& state, std::vector<Contact>& contacts) {
  collision::CollisionWorkspace collision_workspace;
  Workspace workspace;
  state = scene.state;
  State next;
  for (int t = 0; t < steps; ++t) {
    collision::detect_contacts(scene.model, scene.params, state, collision_workspace, contacts);
    if (!contacts.empty()) return t;
    step(scene.model, scene.params, state, {}, next, workspace);
    std::swap(state, next);
  }
  return -1;
}

TEST(SpeculativeContacts, AFastPointIsFoundBeforeItCanClose) {
  for (const char* formulation : {"complementarity", "convex"}) {
    SCOPED_TRACE(formulation);
    const Scene speculative = parse_scene(hinged_box_and_ball(formulation, 2.0));
    const Scene fixed = parse_scene(hinged_box_and_ball(formulation, 0.0));
    State state;
    std::vector<Contact> contacts;
    const int found = first_contact_step(speculative, 20, state, contacts);
    ASSERT_GE(found, 0);
    ASSERT_EQ(contacts.size(), 1u);
    // Found when the gap is below 2 h s (s = 3 m/s, no sliding): more than the step's travel
    // h s away, so its row cannot act yet, and beyond the 1 cm margin.
    EXPECT_GT(contacts[0].gap, kStep * kBallSpeed);
    EXPECT_LT(contacts[0].gap, 2.0 * kStep * kBallSpeed);
    EXPECT_GE(contacts[0].margin, contacts[0].gap);
    // With the fixed margin alone the ball is found only after it has crossed the margin
    // within one step, already overlapping the bar.
    const int late = first_contact_step(fixed, 20, state, contacts);
    ASSERT_EQ(late, found + 2);
    ASSERT_FALSE(contacts.empty());
    EXPECT_LT(contacts[0].gap, 0.0);
    EXPECT_EQ(contacts[0].margin, fixed.model.solver.contact_margin);
  }
}

TEST(SpeculativeContacts, ARowThatCannotCloseChangesNothing) {
  for (const char* formulation : {"complementarity", "convex"}) {
    SCOPED_TRACE(formulation);
    const Scene speculative = parse_scene(hinged_box_and_ball(formulation, 2.0));
    const Scene fixed = parse_scene(hinged_box_and_ball(formulation, 0.0));
    State state;
    std::vector<Contact> contacts;
    const int found = first_contact_step(speculative, 20, state, contacts);
    ASSERT_GE(found, 0);
    // The step from the state where only the speculative contact exists.
    Workspace workspace;
    State with_row, without_row;
    const StepStatus status = step(speculative.model, speculative.params, state, {}, with_row, workspace);
    EXPECT_EQ(status.contact_count, 1);
    const StepStatus fixed_status = step(fixed.model, fixed.params, state, {}, without_row, workspace);
    EXPECT_EQ(fixed_status.contact_count, 0);
    for (int b = 0; b < state.body_count(); ++b) {
      const auto i = static_cast<std::size_t>(b);
      for (int k = 0; k < 3; ++k) {
        EXPECT_NEAR(with_row.position[i][k], without_row.position[i][k], 1e-12) << "body " << b;
        EXPECT_NEAR(with_row.linear_velocity[i][k], without_row.linear_velocity[i][k], 1e-10) << "body " << b;
        EXPECT_NEAR(with_row.angular_velocity[i][k], without_row.angular_velocity[i][k], 1e-10) << "body " << b;
      }
    }
  }
}

// The shipped scenes move slowly for their time steps: 500 steps are bit-identical with
// speculative contacts on or off wherever no point came within its speculative reach beyond
// the margin, and differ by the solver's round-off at most where one did (a tumbling hull of
// mesh_shapes.json, at steps 169–170: 1.4e-11 m in the complementarity formulation, none in
// the convex one).
TEST(SpeculativeContacts, LeaveSlowScenesBitIdentical) {
  int speculative_runs = 0;
  const std::filesystem::path folder = std::filesystem::path(test_paths::source_dir()) / "examples" / "scenes";
  for (const char* name : {"bouncing_ball.json", "box_stack.json", "incline.json", "newtons_cradle.json",
                           "mesh_shapes.json", "joints_tour.json", "chain10.json"}) {
    for (const Formulation formulation : {Formulation::Complementarity, Formulation::Convex}) {
      SCOPED_TRACE(std::string(name) + (formulation == Formulation::Convex ? ", convex" : ", complementarity"));
      Scene on = load_scene(folder / name);
      ASSERT_EQ(on.model.solver.speculative_factor, 2.0);
      set_formulation(on, formulation);
      Scene off = load_scene(folder / name);
      set_formulation(off, formulation);
      off.model.solver.speculative_factor = 0.0;
      State state_on = on.state, state_off = off.state, next;
      Workspace workspace_on, workspace_off;
      collision::CollisionWorkspace collision_workspace;
      std::vector<Contact> contacts;
      bool speculative = false;
      for (int t = 0; t < 500; ++t) {
        collision::detect_contacts(on.model, on.params, state_on, collision_workspace, contacts);
        for (const Contact& contact : contacts)
          speculative = speculative || contact.margin > on.model.solver.contact_margin;
        step(on.model, on.params, state_on, on.controls, next, workspace_on);
        std::swap(state_on, next);
        step(off.model, off.params, state_off, off.controls, next, workspace_off);
        std::swap(state_off, next);
      }
      speculative_runs += speculative;
      for (std::size_t b = 0; b < state_on.position.size(); ++b) {
        if (!speculative) {
          EXPECT_EQ(state_on.position[b], state_off.position[b]) << "body " << b;
          EXPECT_EQ(state_on.linear_velocity[b], state_off.linear_velocity[b]) << "body " << b;
          EXPECT_EQ(state_on.angular_velocity[b], state_off.angular_velocity[b]) << "body " << b;
        } else {
          EXPECT_LT(norm(state_on.position[b] - state_off.position[b]), 1e-9) << "body " << b;
        }
      }
    }
  }
  EXPECT_EQ(speculative_runs, 2);  // mesh_shapes.json in both formulations (convex: bit-identical still)
}

// 20 steps across the ball's arrival: the contact is speculative at step 5, closes at step 6
// and pushes the bar; every derivative of the rollout matches central differences. The ball
// rises at 0.3 m/s, so it slides on the bar's face: hitting it head-on, the complementarity
// formulation's friction rows stick with zero slip and zero impulse (both sides of their
// complementarity at 0), a point where the LCP's solution has one-sided derivatives only,
// and 17 of 59 derivatives disagree (with speculative contacts off the head-on hit happens
// a step later, overlapping, and agrees); the convex formulation agrees either way.
TEST(SpeculativeContacts, GradientsThroughASpeculativeContactMatchCentralDifferences) {
  for (const double rise : {0.3, 0.0}) {
    for (const char* formulation : {"complementarity", "convex"}) {
      if (rise == 0.0 && std::string(formulation) == "complementarity") continue;
      SCOPED_TRACE(std::string(formulation) + ", ball rising at " + std::to_string(rise) + " m/s");
      const Scene scene = parse_scene(hinged_box_and_ball(formulation, 2.0, rise));
      State state;
      std::vector<Contact> contacts;
      ASSERT_EQ(first_contact_step(scene, 20, state, contacts), 5);
      GradientCheckOptions options;
      options.steps = 20;
      testing::expect_gradients_match_central_differences(scene, options);
    }
  }
}

TEST(SpeculativeContacts, ABadFactorIsRefusedByName) {
  for (const double factor : {0.5, -1.0}) {
    try {
      parse_scene(hinged_box_and_ball("convex", factor));
      ADD_FAILURE() << "factor " << factor << " accepted";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("speculative_factor"), std::string::npos) << error.what();
    }
  }
}

}  // namespace
}  // namespace diffphys
