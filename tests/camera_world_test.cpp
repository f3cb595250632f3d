// tests/camera_world_test.cpp — the camera as a sensor of the world (camera/world_camera.cpp,
// diffphys/world_camera.hpp): a scene file's look for a camera ("colours", "background";
// camera/camera_json.cpp), the image's gradients in the world's tangent and θ layouts against
// central differences, and a loss on the rendered frames of a WorldRollout differentiated end
// to end into x_0 and θ against central differences of the whole rollout's loss.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "diffphys/error.hpp"
#include "diffphys/world.hpp"
#include "diffphys/world_camera.hpp"

namespace {

using namespace diffphys;

// The look of the scene's camera: its background and colours by body name.
const std::string kLook =
    R"("background": [0.4, 0.6, 0.9], "colours": {"crate": [0.9, 0.2, 0.2], "ball": [0.2, 0.3, 0.9], "ground": [0.7, 0.8, 0.6]})";

// A crate and a ball above the ground, seen by a side camera with the look `look`.
std::string crate_scene(const std::string& look = kLook) {
  return R"({
    "name": "crate_camera",
    "dt": 0.01,
    "ground": true,
    "bodies": [
      {"name": "crate", "position": [-0.2, 0.1, 0.9], "euler": [20, 30, 10],
       "shapes": [{"name": "crate_box", "type": "box", "half_extents": [0.25, 0.18, 0.12]}]},
      {"name": "ball", "position": [0.35, -0.1, 0.6], "shapes": [{"type": "sphere", "radius": 0.17}]}
    ],
    "cameras": [
      {"name": "side", "position": [0.6, -3.0, 1.0], "look_at": [0, 0, 0.6], "fov_deg": 45, "width": 40,
       "height": 30, "far_depth": 15, )" +
         look + R"(}
    ]
  })";
}

std::string refusal(const std::string& text) {
  try {
    parse_world(text, "crate.json");
  } catch (const Error& error) {
    return error.what();
  }
  return "(accepted)";
}

TEST(WorldCamera, SceneLookIsReadPerCameraAndBadColoursAreRefused) {
  // A shape's own name wins over its body's.
  const World world =
      parse_world(crate_scene(kLook.substr(0, kLook.size() - 1) + R"(, "crate_box": [0.1, 0.9, 0.1]})"), "crate.json");
  ASSERT_EQ(world.camera_appearances.size(), 1u);
  const Model& model = world.rigid->model;
  const Appearance& look = world.camera_appearances[0];
  EXPECT_EQ(look.background, (Vec3{0.4, 0.6, 0.9}));
  for (int s = 0; s < model.shape_count(); ++s) {
    const Shape& shape = model.shapes[static_cast<std::size_t>(s)];
    const Vec3 expected = shape.name == "ground"   ? Vec3{0.7, 0.8, 0.6}
                          : shape.name == "ball/0" ? Vec3{0.2, 0.3, 0.9}
                                                   : Vec3{0.1, 0.9, 0.1};
    EXPECT_EQ(look.shapes[static_cast<std::size_t>(s)].colour, expected) << shape.name;
  }
  EXPECT_EQ(world_camera_appearance(world, 0).background, look.background);
  WorldCamera camera(world, "side");
  EXPECT_EQ(camera.appearance().shapes[1].colour, look.shapes[1].colour);
  // Without a look, the default one.
  const World plain = parse_world(crate_scene(R"("up": [0, 0, 1])"), "crate.json");
  EXPECT_EQ(plain.camera_appearances[0].background, Appearance{}.background);
  EXPECT_EQ(plain.camera_appearances[0].shapes[1].colour, default_appearance(plain.rigid->model).shapes[1].colour);

  const std::string base = crate_scene();
  auto replaced = [&base](const std::string& from, const std::string& to) {
    std::string text = base;
    text.replace(text.find(from), from.size(), to);
    return refusal(text);
  };
  EXPECT_EQ(replaced(R"("ball": [0.2, 0.3, 0.9])", R"("ball": [0.2, 1.3, 0.9])"),
            "crate.json: cameras[0].colours.ball: colour components must be in [0, 1], got [0.2,1.3,0.9]");
  EXPECT_EQ(replaced(R"("background": [0.4, 0.6, 0.9])", R"("background": [-0.1, 0.6, 0.9])"),
            "crate.json: cameras[0].background: colour components must be in [0, 1], got [-0.1,0.6,0.9]");
  EXPECT_EQ(replaced(R"("ball": [0.2, 0.3, 0.9])", R"("bal": [0.2, 0.3, 0.9])"),
            "crate.json: cameras[0].colours.bal: no shape or body 'bal' (did you mean 'ball'?)");
  EXPECT_EQ(
      replaced(R"("ball": [0.2, 0.3, 0.9])", R"("ball": "blue")").rfind("crate.json: cameras[0].colours.ball: ", 0),
      0u);
  EXPECT_EQ(refusal(crate_scene(R"("colours": 3)")),
            "crate.json: cameras[0].colours: expected an object {shape or body name: [r, g, b]}, got 3");
}

TEST(WorldCamera, UnknownCamerasAndWorldsWithoutRigidBodiesAreRefused) {
  const World world = parse_world(crate_scene(), "crate.json");
  try {
    WorldCamera camera(world, "top");
    ADD_FAILURE() << "an unknown camera was accepted";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "world 'crate_camera': no camera 'top' (its cameras: 'side')");
  }
  WorldCamera camera(world, "side");
  CameraImage image;
  WorldParams params = world.default_params();
  params.values.pop_back();
  try {
    camera.render(params, world.initial_state(), image);
    ADD_FAILURE() << "a θ of the wrong size was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()).rfind("camera 'side': θ has ", 0), 0u) << error.what();
  }
}

// L(image) = Σ w · colour + Σ v · depth with fixed random weights (v smaller: depths are metres).
struct LinearLoss {
  CameraImage weights;

  LinearLoss(int width, int height, unsigned seed) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<double> weight(-1.0, 1.0);
    weights.width = width;
    weights.height = height;
    const auto pixels = static_cast<std::size_t>(width * height);
    for (std::size_t i = 0; i < 3 * pixels; ++i) weights.colour.push_back(weight(random));
    for (std::size_t i = 0; i < pixels; ++i) weights.depth.push_back(0.1 * weight(random));
  }
  double operator()(const CameraImage& image) const {
    double sum = 0.0;
    for (std::size_t i = 0; i < image.colour.size(); ++i) sum += weights.colour[i] * image.colour[i];
    for (std::size_t i = 0; i < image.depth.size(); ++i) sum += weights.depth[i] * image.depth[i];
    return sum;
  }
};

// One input of the image or rollout: how to move it by h (state, θ or camera) and its analytic
// derivative.
struct Input {
  std::string name;
  std::function<void(WorldState&, WorldParams&, Camera&, double)> move;
  double analytic = 0.0;
};

// A body's position or rotation (world-frame increment exp(δθ) ⊗ q) in the state.
void move_pose(WorldState& state, int body, int row, double h) {
  const auto b = static_cast<std::size_t>(body);
  if (row < 3) {
    state.rigid.position[b][row] += h;
    return;
  }
  Vec3 increment;
  increment[row - 3] = h;
  state.rigid.orientation[b] = Quat::from_rotation_vector(increment) * state.rigid.orientation[b];
}

// |analytic − central difference| allowed, relative to the derivative and to the largest one
// of the same loss (scale, ~10² here): 1e-7, the central difference's own rounding
// (ε Σ|w_i image_i| / 2h ≈ 2.2e-16 · 10³ / 2e-8 ≈ 1e-5 ≈ 1e-7 · scale), as in camera_test.cpp;
// measured: 6e-6 at worst. The 1e-8 steps move every sample far less than a texel or the
// coverage ramp's joints apart (docs/camera.md).
TEST(WorldCamera, WorldLayoutGradientsMatchCentralDifferences) {
  const World world = parse_world(crate_scene(), "crate.json");
  const WorldLayout& layout = world.layout();
  const WorldState state = world.initial_state();
  const WorldParams params = world.default_params();
  WorldCamera camera(world, "side", 2);
  const LinearLoss loss(camera.camera().width, camera.camera().height, 7);
  WorldCameraGradients gradients;
  camera.backward(params, state, loss.weights, gradients);
  ASSERT_EQ(gradients.state.size(), static_cast<std::size_t>(layout.tangent_size));
  ASSERT_EQ(gradients.params.size(), static_cast<std::size_t>(layout.param_count));

  std::vector<Input> inputs;
  for (const char* body : {"crate", "ball"}) {
    const NamedSlice& rows = WorldLayout::find(layout.tangent, std::string("body/") + body, "tangent");
    const int index = world.rigid->model.body_index(body);
    for (int row = 0; row < 6; ++row)
      inputs.push_back({std::string(body) + (row < 3 ? " position " : " rotation ") + std::to_string(row % 3),
                        [index, row](WorldState& x, WorldParams&, Camera&, double h) { move_pose(x, index, row, h); },
                        gradients.state[static_cast<std::size_t>(rows.offset + row)]});
  }
  for (const char* slice : {"shape/ball/0/radius", "shape/crate_box/half_extents"}) {
    const NamedSlice& found = WorldLayout::find(layout.params, slice, "parameter");
    for (int i = 0; i < found.size; ++i) {
      const auto offset = static_cast<std::size_t>(found.offset + i);
      inputs.push_back({std::string(slice) + " " + std::to_string(i),
                        [offset](WorldState&, WorldParams& p, Camera&, double h) { p.values[offset] += h; },
                        gradients.params[offset]});
    }
  }
  for (int i = 0; i < 3; ++i) {
    inputs.push_back({"camera position " + std::to_string(i),
                      [i](WorldState&, WorldParams&, Camera& c, double h) { c.position[i] += h; },
                      gradients.camera_position[i]});
    inputs.push_back({"camera rotation " + std::to_string(i),
                      [i](WorldState&, WorldParams&, Camera& c, double h) {
                        Vec3 increment;
                        increment[i] = h;
                        c.orientation = Quat::from_rotation_vector(increment) * c.orientation;
                      },
                      gradients.camera_rotation[i]});
  }
  inputs.push_back({"camera vertical_fov", [](WorldState&, WorldParams&, Camera& c, double h) { c.vertical_fov += h; },
                    gradients.vertical_fov});

  const double h = 1e-8;
  std::vector<double> numeric;
  CameraImage image;
  for (const Input& input : inputs) {
    double values[2];
    for (int side = 0; side < 2; ++side) {
      WorldState x = state;
      WorldParams p = params;
      Camera c = camera.camera();
      input.move(x, p, c, side == 0 ? h : -h);
      WorldCamera moved(world, "side");
      moved.set_camera(c);
      moved.render(p, x, image);
      values[side] = loss(image);
    }
    numeric.push_back((values[0] - values[1]) / (2 * h));
  }
  double scale = 0.0;
  for (double value : numeric) scale = std::max(scale, std::abs(value));
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    EXPECT_NEAR(inputs[k].analytic, numeric[k], 1e-7 * (std::abs(numeric[k]) + scale)) << inputs[k].name;
    // A plain sphere looks the same however it turns (its rotation's derivative is checked to be 0).
    if (!inputs[k].name.starts_with("ball rotation")) {
      EXPECT_GT(std::abs(numeric[k]), 1e-4 * scale) << inputs[k].name << " does not move the image";
    }
  }
  // Nothing else of the state or θ is seen: the velocity rows, the world body's rows and every
  // θ slice but the shape sizes are zero.
  for (const NamedSlice& slice : layout.params) {
    if (slice.name.starts_with("shape/")) continue;
    for (int i = 0; i < slice.size; ++i)
      EXPECT_EQ(gradients.params[static_cast<std::size_t>(slice.offset + i)], 0.0) << slice.name;
  }
  for (std::size_t b = 0; b < world.rigid->model.bodies.size(); ++b)
    for (std::size_t row = 6; row < 12; ++row) EXPECT_EQ(gradients.state[12 * b + row], 0.0);
}

// A crate thrown with spin (no contact), filmed at steps 0, 5, 10 and 15 of 15:
// L = Σ_frames L_t(image_t). Its gradient with respect to x_0 and θ runs the rollout's
// backward pass with the camera's state gradient added in the loss callback and the camera's
// θ gradient summed beside it (world_camera.hpp), against central differences of the whole
// loss: simulate, render, sum.
TEST(WorldCamera, RolloutLossOnRenderedFramesDifferentiatesIntoInitialStateAndTheta) {
  std::string text = crate_scene();
  text.replace(text.find(R"("euler": [20, 30, 10],)"), 22,
               R"("euler": [20, 30, 10], "linear_velocity": [0.8, 0.3, 1.5], "angular_velocity": [2, -3, 4],)");
  text.replace(text.find(R"("position": [0.35, -0.1, 0.6])"), 29, R"("position": [0.35, -0.1, 0.6], "type": "static")");
  const World world = parse_world(text, "throw.json");
  const WorldLayout& layout = world.layout();
  const int steps = 15;
  const std::vector<int> frames = {0, 5, 10, 15};
  WorldParams params = world.default_params();
  WorldCamera camera(world, "side");
  std::vector<LinearLoss> losses;
  for (std::size_t f = 0; f < frames.size(); ++f)
    losses.emplace_back(camera.camera().width, camera.camera().height, 20 + static_cast<unsigned>(f));

  const auto frame_of = [&frames](int t) {
    return static_cast<int>(std::find(frames.begin(), frames.end(), t) - frames.begin());
  };
  const auto total_loss = [&](const WorldState& x0, const WorldParams& theta) {
    WorldRollout rollout(world, theta);
    rollout.run(x0, {}, steps);
    WorldCamera eye(world, "side");
    CameraImage image;
    double sum = 0.0;
    for (std::size_t f = 0; f < frames.size(); ++f) {
      eye.render(theta, rollout.state(frames[f]), image);
      sum += losses[f](image);
    }
    return sum;
  };

  const WorldState x0 = world.initial_state();
  WorldRollout rollout(world, params);
  rollout.run(x0, {}, steps);
  std::vector<double> image_params(static_cast<std::size_t>(layout.param_count), 0.0);
  WorldCameraGradients frame;
  WorldGradients gradients = rollout.backward([&](int t, const WorldState& x, WorldStateGradient& dx) {
    const int f = frame_of(t);
    if (f == static_cast<int>(frames.size())) return;
    camera.backward(params, x, losses[static_cast<std::size_t>(f)].weights, frame);
    for (std::size_t i = 0; i < dx.all.size(); ++i) dx.all[i] += frame.state[i];
    for (std::size_t i = 0; i < image_params.size(); ++i) image_params[i] += frame.params[i];
  });
  for (std::size_t i = 0; i < image_params.size(); ++i) gradients.params[i] += image_params[i];

  // x_0 in the tangent layout (positions, rotation increments, velocities) and θ: a size (seen
  // by the camera and by the rollout's inertia, if the scene derives it from the size) and
  // gravity (seen only through the motion).
  struct Probe {
    std::string name;
    std::function<void(WorldState&, WorldParams&, double)> move;
    double analytic;
  };
  std::vector<Probe> probes;
  const NamedSlice& crate = WorldLayout::find(layout.tangent, "body/crate", "tangent");
  const int body = world.rigid->model.body_index("crate");
  for (int row = 0; row < 12; ++row)
    probes.push_back({"x0 crate row " + std::to_string(row),
                      [body, row](WorldState& x, WorldParams&, double h) {
                        const auto b = static_cast<std::size_t>(body);
                        if (row < 6)
                          move_pose(x, body, row, h);
                        else if (row < 9)
                          x.rigid.linear_velocity[b][row - 6] += h;
                        else
                          x.rigid.angular_velocity[b][row - 9] += h;
                      },
                      gradients.initial_state[static_cast<std::size_t>(crate.offset + row)]});
  for (const char* slice : {"shape/crate_box/half_extents", "gravity"}) {
    const NamedSlice& found = WorldLayout::find(layout.params, slice, "parameter");
    for (int i = 0; i < found.size; ++i) {
      const auto offset = static_cast<std::size_t>(found.offset + i);
      probes.push_back({std::string(slice) + " " + std::to_string(i),
                        [offset](WorldState&, WorldParams& p, double h) { p.values[offset] += h; },
                        gradients.params[offset]});
    }
  }
  // Steps: 1e-7 (m, rad, m/s, rad/s, m/s²): the rollout is smooth here (free flight), and a
  // sample moves ~1e-7 × 15 px/m ≈ 1.5e-6 px, which keeps the coverage ramp's joints out of the
  // differences but for a chance crossing (a kink of A″ there: a C¹ image, error O(h)).
  // Allowed: 1e-6 × (|fd| + scale), scale ≈ 26 here: above the worst-case rounding
  // ε Σ|w·image| (≈ 4·10³ over four frames) / 2h ≈ 4e-6; measured 2.3e-7 at worst.
  const double h = 1e-7;
  std::vector<double> numeric;
  for (const Probe& probe : probes) {
    double values[2];
    for (int side = 0; side < 2; ++side) {
      WorldState x = x0;
      WorldParams p = params;
      probe.move(x, p, side == 0 ? h : -h);
      values[side] = total_loss(x, p);
    }
    numeric.push_back((values[0] - values[1]) / (2 * h));
  }
  double scale = 0.0;
  for (double value : numeric) scale = std::max(scale, std::abs(value));
  for (std::size_t k = 0; k < probes.size(); ++k) {
    EXPECT_NEAR(probes[k].analytic, numeric[k], 1e-6 * (std::abs(numeric[k]) + scale)) << probes[k].name;
    EXPECT_GT(std::abs(numeric[k]), 1e-4 * scale) << probes[k].name << " does not move the loss";
  }
}

}  // namespace

namespace diffphys::camera::testing {
// For tests/allocation_test.cpp, which owns the counting operator new: a WorldCamera on 2
// threads renders and differentiates one warm-up frame of the crate scene, then three frames of
// a moving state between start() and stop(); returns the frames drawn.
int run_world_camera_frames_for_allocation_count(void (*start)(), void (*stop)()) {
  const World world = parse_world(crate_scene(), "crate.json");
  WorldState state = world.initial_state();
  const WorldParams params = world.default_params();
  WorldCamera camera(world, "side", 2);
  CameraImage image;
  WorldCameraGradients gradients;
  camera.render(params, state, image);
  const CameraImage cotangent = image;
  camera.backward(params, state, cotangent, gradients);
  const int crate = world.rigid->model.body_index("crate");
  start();
  for (int frame = 0; frame < 3; ++frame) {
    state.rigid.position[static_cast<std::size_t>(crate)].x += 0.01;
    camera.render(params, state, image);
    camera.backward(params, state, cotangent, gradients);
  }
  stop();
  return 3;
}
}  // namespace diffphys::camera::testing
