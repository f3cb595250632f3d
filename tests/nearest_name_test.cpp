// tests/nearest_name_test.cpp — "did you mean" (model/nearest_name.hpp): the edit distance,
// the nearest known name within the typo budget, and the messages of the lookups by name
// (parameters, bodies, a rollout's parameter gradients) that use it.
#include "model/nearest_name.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "diffphys/error.hpp"
#include "diffphys/model_builder.hpp"
#include "diffphys/rollout.hpp"

namespace diffphys {
namespace {

TEST(NearestName, EditDistanceCountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("mass", "mass"), 0u);
  EXPECT_EQ(edit_distance("mas", "mass"), 1u);
  EXPECT_EQ(edit_distance("masss", "mass"), 1u);
  EXPECT_EQ(edit_distance("nass", "mass"), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(NearestName, SuggestsOnlyWithinTheTypoBudgetOrForAPrefix) {
  const std::vector<std::string_view> known{"body/ball/mass", "body/ball/inertia", "gravity"};
  EXPECT_EQ(nearest_name("body/bal/mass", known), "body/ball/mass");
  EXPECT_EQ(nearest_name("body/ball/inertai", known), "body/ball/inertia");  // a swap: 2 edits of 17
  EXPECT_EQ(nearest_name("grav", known), "gravity");                         // a prefix
  EXPECT_EQ(nearest_name("nope", known), "");
  EXPECT_EQ(nearest_name("body/cart/speed", known), "");  // 7 edits of 15: beyond |word| / 4
  EXPECT_EQ(did_you_mean("gravitz", known), " (did you mean 'gravity'?)");
  EXPECT_EQ(did_you_mean("nope", known), "");
  EXPECT_EQ(nearest_name("x", std::vector<std::string_view>{}), "");
}

Scene falling_ball() {
  ModelBuilder builder;
  BodySpec ball;
  ball.name = "ball";
  ShapeSpec sphere;
  sphere.type = ShapeType::Sphere;
  sphere.radius = 0.1;
  ball.shapes.push_back(sphere);
  builder.add_body(ball);
  return builder.build();
}

std::string error_of(const auto& call) {
  try {
    call();
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

TEST(NearestName, LookupsByNameSuggestTheNearest) {
  Scene scene = falling_ball();
  EXPECT_EQ(error_of([&] { scene.params.slice(scene.model, "body/ball/mas"); }),
            "unknown parameter 'body/ball/mas' (did you mean 'body/ball/mass'?)");
  EXPECT_EQ(error_of([&] { scene.params.slice(scene.model, "nothing/like/it"); }), "unknown parameter 'nothing/like/it'");
  EXPECT_EQ(error_of([&] { scene.model.body_index("bal"); }), "unknown body 'bal' (did you mean 'ball'?)");
  Rollout rollout(scene.model, scene.params);
  rollout.run(scene.state, {}, 2);
  const Gradients gradients = rollout.backward([](int, const State&, std::span<double>) {});
  EXPECT_EQ(error_of([&] { gradients.param(scene.model, "gravty"); }),
            "unknown parameter 'gravty' (did you mean 'gravity'?)");
}

// A parameter vector of another model's length has no slice of this model: refused, not a
// view past its end.
TEST(NearestName, ASliceOfAVectorOfTheWrongLengthIsRefused) {
  const Scene scene = falling_ball();
  Params empty;
  EXPECT_EQ(error_of([&] { empty.slice(scene.model, "gravity"); }),
            message("parameter 'gravity': the parameter vector has 0 values, the model '", scene.model.name, "' expects ",
                    scene.model.param_count()));
  const Params& read_only = empty;
  EXPECT_THROW(read_only.slice(scene.model, "gravity"), Error);
}

}  // namespace
}  // namespace diffphys
