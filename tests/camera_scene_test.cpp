// tests/camera_scene_test.cpp — a scene file's "cameras" list (camera/camera_json.cpp, read by
// load_world / parse_world into World::cameras) and `diffphys render SCENE --camera NAME
// --steps N --out DIR` (tools/render_command.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numbers>
#include <string>

#include "camera_texture.hpp"
#include "cli_test_helpers.hpp"
#include "diffphys/camera.hpp"
#include "diffphys/error.hpp"
#include "diffphys/world.hpp"
#include "diffphys/world_camera.hpp"
#include "png_file.hpp"
#include "test_paths.hpp"

namespace {

using namespace diffphys;
using nlohmann::json;

// A cart and a ball above the ground, seen by a fixed camera and by one riding the cart.
json cart_scene() {
  return json::parse(R"({
    "name": "cart_camera",
    "dt": 0.01,
    "ground": true,
    "bodies": [
      {"name": "cart", "position": [0, 0, 0.3], "shapes": [{"type": "box", "half_extents": [0.25, 0.15, 0.08]}]},
      {"name": "ball", "position": [0.1, 0, 1.2], "shapes": [{"type": "sphere", "radius": 0.15}]}
    ],
    "cameras": [
      {"name": "side", "position": [-1.5, -3.2, 0.6], "look_at": [0, 0, 0.5], "fov_deg": 40, "width": 96, "height": 32},
      {"name": "rider", "body": "cart", "position": [0, -0.6, 0.3], "orientation": [1, 0, 0, 0], "fov_deg": 60,
       "width": 24, "height": 16, "far_depth": 30}
    ]
  })");
}

std::string refusal(const json& scene) {
  try {
    parse_world(scene.dump(), "cart.json");
  } catch (const Error& error) {
    return error.what();
  }
  return "(accepted)";
}

TEST(CameraScene, CamerasOfRigidAndSectionedScenesAreRead) {
  const World flat = parse_world(cart_scene().dump(), "cart.json");
  json sectioned;
  json rigid = cart_scene();
  sectioned["cameras"] = rigid["cameras"];
  rigid.erase("cameras");
  sectioned["rigid"] = rigid;
  const World sections = parse_world(sectioned.dump(), "sections.json");
  for (const World* world : {&flat, &sections}) {
    ASSERT_EQ(world->cameras.size(), 2u);
    const Camera& side = world->cameras[0];
    EXPECT_EQ(side.name, "side");
    EXPECT_EQ(side.body, -1);
    EXPECT_EQ(side.position, (Vec3{-1.5, -3.2, 0.6}));
    EXPECT_EQ(side.orientation, camera_look_at({-1.5, -3.2, 0.6}, {0, 0, 0.5}));
    EXPECT_DOUBLE_EQ(side.vertical_fov, 40 * std::numbers::pi / 180);
    EXPECT_EQ(side.width, 96);
    EXPECT_EQ(side.height, 32);
    EXPECT_EQ(side.far_depth, Camera{}.far_depth);
    const Camera& rider = world->cameras[1];
    EXPECT_EQ(rider.body, world->rigid->model.body_index("cart"));
    EXPECT_EQ(rider.orientation, Quat{});
    EXPECT_EQ(rider.far_depth, 30.0);
  }
  // A scene without a rigid part has nothing a camera draws (soft bodies are not drawn yet):
  // its cameras are refused at load time rather than rendering the background.
  std::ifstream file(std::string(test_paths::source_dir()) + "/examples/soft/mass_spring.json");
  json soft = json::parse(file);
  soft["cameras"] = json::parse(R"([{"name": "top", "position": [0, 0, 3], "look_at": [0, 0, 0], "up": [0, 1, 0],
                                     "fov_deg": 50, "width": 8, "height": 8}])");
  try {
    parse_world(soft.dump(), "soft.json", std::string(test_paths::source_dir()) + "/examples/soft");
    ADD_FAILURE() << "a soft scene's camera was accepted";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "soft.json: cameras: the scene has no rigid part, and cameras draw rigid shapes only "
                               "(soft bodies and fluids are not drawn yet)");
  }
  soft["cameras"] = json::array();  // an empty list says nothing to draw
  EXPECT_TRUE(parse_world(soft.dump(), "soft.json", std::string(test_paths::source_dir()) + "/examples/soft").cameras.empty());
}

TEST(CameraScene, BadCameraEntriesAreRefusedWithTheirPath) {
  auto with = [](auto change) {
    json scene = cart_scene();
    change(scene["cameras"]);
    return refusal(scene);
  };
  EXPECT_EQ(with([](json& c) { c[0]["fov_deg"] = 180; }),
            "cart.json: cameras[0]: camera 'side': vertical field of view must be in (0, 180) degrees, got 180 "
            "degrees (3.141592653589793 rad)");
  EXPECT_EQ(with([](json& c) { c[0]["width"] = 0; }).rfind("cart.json: cameras[0].width: ", 0), 0u);
  EXPECT_EQ(with([](json& c) { c[1]["body"] = "kart"; }),
            "cart.json: cameras[1].body: unknown body 'kart' (did you mean 'cart'?)");
  EXPECT_EQ(with([](json& c) {
              c[0]["orientation"] = {1, 0, 0, 0};
            }),
            "cart.json: cameras[0]: give the view as \"orientation\"/\"euler\" or as \"look_at\", not both");
  EXPECT_EQ(with([](json& c) { c[1].erase("orientation"); }),
            "cart.json: cameras[1]: give the view as \"look_at\" [x, y, z] or as \"orientation\"/\"euler\"");
  EXPECT_EQ(with([](json& c) { c[1]["up"] = {0, 0, 1}; }).rfind("cart.json: cameras[1].up: not used without", 0), 0u);
  EXPECT_EQ(with([](json& c) {
              c[0]["look_at"] = {-1.5, -3.2, 0.6};
            }),
            "cart.json: cameras[0].look_at: camera_look_at: eye and target are the same point");
  EXPECT_EQ(with([](json& c) { c[1]["name"] = "side"; }), "cart.json: cameras[1].name: duplicate camera name 'side'");
  EXPECT_EQ(with([](json& c) { c[0].erase("height"); }).rfind("cart.json: cameras[0]", 0), 0u);
  EXPECT_EQ(with([](json& c) { c[0]["zoom"] = 2; }).rfind("cart.json: cameras[0]: unknown key \"zoom\"", 0), 0u);
  EXPECT_EQ(with([](json& c) { c = 3; }).rfind("cart.json: cameras: expected an array", 0), 0u);
}

TEST(CameraScene, RenderCommandDrawsTheSimulatedSceneThroughItsCamera) {
  const std::filesystem::path folder = diffphys::testing::fresh_test_folder("camera_render");
  const std::filesystem::path scene = folder / "cart.json";
  json text = cart_scene();  // the camera's look ("colours", "background") is drawn
  text["cameras"][0]["colours"] = {{"cart", {0.9, 0.2, 0.1}}};
  text["cameras"][0]["background"] = {0.3, 0.5, 0.8};
  std::ofstream(scene) << text.dump(2);
  const auto [code, output] = diffphys::testing::run_cli(
      "render " + scene.string() + " --camera side --steps 40 --every 20 --out " + (folder / "frames").string(),
      "camera_render");
  ASSERT_EQ(code, 0) << output;
  EXPECT_NE(output.find("rendered    3 frames of 96 × 32 pixels through camera 'side'"), std::string::npos) << output;
  // Frame 0 is the library's rendering of the initial state, pixel for pixel; the ball has fallen by frame 2.
  const World world = load_world(scene);
  CameraRenderer renderer(world.rigid->model, world.cameras[0], world_camera_appearance(world, 0));
  EXPECT_EQ(world_camera_appearance(world, 0).background, (Vec3{0.3, 0.5, 0.8}));
  CameraImage image;
  renderer.render(world.rigid->params, world.rigid->state, image);
  viewer::write_camera_png(folder / "expected.png", image);
  const viewer::Image expected = viewer::read_png(folder / "expected.png");
  const viewer::Image first = viewer::read_png(folder / "frames" / "frame_00000.png");
  const viewer::Image last = viewer::read_png(folder / "frames" / "frame_00002.png");
  EXPECT_EQ(first.width, 96);
  EXPECT_EQ(first.height, 32);
  EXPECT_EQ(first.pixels, expected.pixels);
  EXPECT_NE(last.pixels, first.pixels);
  EXPECT_FALSE(std::filesystem::exists(folder / "frames" / "frame_00003.png"));

  const auto [unknown_code, unknown] = diffphys::testing::run_cli(
      "render " + scene.string() + " --camera top --out " + (folder / "none").string(), "camera_none");
  EXPECT_NE(unknown_code, 0);
  EXPECT_NE(unknown.find("no camera 'top' (its cameras: 'side', 'rider')"), std::string::npos) << unknown;
  const auto [size_code, size] = diffphys::testing::run_cli(
      "render " + scene.string() + " --camera side --width 50 --out " + (folder / "none").string(), "camera_size");
  EXPECT_NE(size_code, 0);
  EXPECT_NE(size.find("the camera has its own size"), std::string::npos) << size;
  const auto [steps_code, steps] = diffphys::testing::run_cli(
      "render " + scene.string() + " --steps 5 --out " + (folder / "none").string(), "camera_steps");
  EXPECT_NE(steps_code, 0);
  EXPECT_NE(steps.find("--steps 5: goes with --camera NAME"), std::string::npos) << steps;
  EXPECT_FALSE(std::filesystem::exists(folder / "none"));
}

// `simulate SCENE --cameras --out TRAJ` films every scene camera at each recorded frame into the
// trajectory's "cameras" (viewer/camera_film.cpp), which the replay page shows (its browser test
// checks the panel): frame 0 is the library's rendering of the initial state, as a PNG data URI.
TEST(CameraScene, SimulateFilmsTheScenesCamerasIntoTheTrajectory) {
  const std::filesystem::path folder = diffphys::testing::fresh_test_folder("camera_film");
  const std::filesystem::path scene = folder / "cart.json";
  std::ofstream(scene) << cart_scene().dump(2);
  const std::filesystem::path trajectory = folder / "traj.json";
  const auto [code, output] = diffphys::testing::run_cli(
      "simulate " + scene.string() + " --steps 10 --every 5 --cameras --quiet --out " + trajectory.string(),
      "camera_film");
  ASSERT_EQ(code, 0) << output;
  std::ifstream file(trajectory);
  const json document = json::parse(file);
  ASSERT_TRUE(document.contains("cameras"));
  ASSERT_EQ(document["cameras"].size(), 2u);
  const World world = load_world(scene);
  for (std::size_t c = 0; c < 2; ++c) {
    const json& film = document["cameras"][c];
    const Camera& camera = world.cameras[c];
    EXPECT_EQ(film["name"], camera.name);
    EXPECT_EQ(film["width"], camera.width);
    EXPECT_EQ(film["height"], camera.height);
    ASSERT_EQ(film["frames"].size(), document["frames"].size());  // 0, 5, 10
    WorldCamera eye(world, camera.name);
    CameraImage image;
    eye.render(world.default_params(), world.initial_state(), image);
    EXPECT_EQ(film["frames"][0].get<std::string>(), viewer::camera_png_data_uri(image)) << camera.name;
  }
  EXPECT_NE(document["cameras"][0]["frames"][2], document["cameras"][0]["frames"][0]) << "side: the ball falls";
  // Without a recording to film into, or without cameras, --cameras is refused.
  const auto [alone_code, alone] =
      diffphys::testing::run_cli("simulate " + scene.string() + " --steps 2 --cameras", "camera_film_alone");
  EXPECT_NE(alone_code, 0);
  EXPECT_NE(alone.find("--cameras: films the scene's cameras into the recording; give --out or --view as well"),
            std::string::npos)
      << alone;
  const std::string plain = std::string(test_paths::source_dir()) + "/examples/scenes/bouncing_ball.json";
  const auto [none_code, none] = diffphys::testing::run_cli(
      "simulate " + plain + " --steps 2 --cameras --out " + (folder / "none.json").string(), "camera_film_none");
  EXPECT_NE(none_code, 0);
  EXPECT_NE(none.find("--cameras films the scene's cameras, and it has none"), std::string::npos) << none;
  EXPECT_FALSE(std::filesystem::exists(folder / "none.json"));
  // --formulation rebuilds the world (its parameter layout changes): the cameras come along.
  const std::filesystem::path convex = folder / "convex.json";
  const auto [convex_code, convex_output] = diffphys::testing::run_cli(
      "simulate " + scene.string() + " --steps 2 --formulation convex --cameras --quiet --out " + convex.string(),
      "camera_film_convex");
  ASSERT_EQ(convex_code, 0) << convex_output;
  std::ifstream convex_file(convex);
  EXPECT_EQ(json::parse(convex_file)["cameras"].size(), 2u);
}

}  // namespace
