// tests/render_test.cpp — pictures without a browser: the software rasteriser
// (viewer/raster.cpp) against closed forms (a sphere's projected disc, the depth test, Lambert
// shading), PNG files through libpng (viewer/png_file.cpp), the trajectory renderer
// (viewer/render_trajectory.cpp) and `diffphys render` (tools/render_command.cpp) on shipped
// examples, including the inputs it must refuse without writing anything.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numbers>
#include <set>
#include <string>

#include "cli_test_helpers.hpp"
#include "diffphys/error.hpp"
#include "png_file.hpp"
#include "raster.hpp"
#include "render_trajectory.hpp"
#include "shape_meshes.hpp"

namespace diffphys {
// A named namespace: in a unity build, an anonymous one is shared with the other test files
// of the batch, and these using-declarations would reach them.
namespace render_test {

using viewer::Camera;
using viewer::Image;
using viewer::Paint;
using viewer::Pose;
using viewer::Rasteriser;
using viewer::Rgb;
using viewer::Vec3;

constexpr Rgb kBackground{255, 255, 255};

void draw(Rasteriser& rasteriser, const viewer::TriangleMesh& mesh, const Pose& pose, Rgb colour) {
  for (const auto& t : mesh.triangles) {
    const auto i = static_cast<std::size_t>(t[0]), j = static_cast<std::size_t>(t[1]),
               k = static_cast<std::size_t>(t[2]);
    rasteriser.draw_triangle(
        {pose.apply(mesh.positions[i]), pose.apply(mesh.positions[j]), pose.apply(mesh.positions[k])},
        {pose.rotate(mesh.normals[i]), pose.rotate(mesh.normals[j]), pose.rotate(mesh.normals[k])},
        Paint::solid(colour));
  }
}

// A sphere of radius r whose centre is at distance d on the camera's axis is seen as a disc of
// angular radius asin(r/d), i.e. of radius R = focal · tan(asin(r/d)) = focal · r / √(d² − r²)
// pixels on the image. The drawn pixels must be πR² within 1 % (the tessellation's inscribed
// polygons lose about 0.1 %, the pixel grid along the rim adds up to ±0.5 % on a small disc;
// measured: −0.11 %, −0.10 % and +0.5 % for R = 69, 194 and 22 px). A wrong focal length
// (a field of view off by 10 %) is off by 20 %.
TEST(RenderRaster, SphereCoversItsProjectedDiscsArea) {
  for (const auto& [radius, distance] : {std::pair{0.5, 4.0}, std::pair{1.0, 3.0}, std::pair{0.2, 5.0}}) {
    Camera camera;
    camera.eye = {0, -distance, 0};
    camera.target = {0, 0, 0};
    Rasteriser rasteriser(400, 400, camera, kBackground);
    draw(rasteriser, viewer::sphere_mesh(radius, 96, 48), Pose{}, Rgb{200, 50, 50});
    const double focal = 200.0 / std::tan(20.0 * std::numbers::pi / 180.0);  // (H/2) / tan(fov/2), fov 40°
    const double disc_radius = focal * radius / std::sqrt(distance * distance - radius * radius);
    const double expected = std::numbers::pi * disc_radius * disc_radius;
    EXPECT_NEAR(static_cast<double>(rasteriser.covered_pixels()), expected, 0.01 * expected)
        << "r = " << radius << ", d = " << distance << ", disc radius " << disc_radius << " px";
  }
}

// Two boxes on the line of sight: the nearer one is seen in front, whichever is drawn last.
TEST(RenderRaster, NearBoxOccludesFarBoxInEitherDrawingOrder) {
  const Rgb near_colour{200, 0, 0}, far_colour{0, 0, 200};
  const auto box = viewer::box_mesh({0.5, 0.5, 0.5});
  const Pose near_pose{{0, 0, 0}, {1, 0, 0, 0}}, far_pose{{0.3, 3, 0.2}, {1, 0, 0, 0}};
  Camera camera;
  camera.eye = {0, -4, 0};
  camera.target = {0, 0, 0};
  for (const bool near_first : {true, false}) {
    Rasteriser rasteriser(200, 200, camera, kBackground, {{0, -1, 0}, 0.5, 0.5});
    if (near_first) {
      draw(rasteriser, box, near_pose, near_colour);
      draw(rasteriser, box, far_pose, far_colour);
    } else {
      draw(rasteriser, box, far_pose, far_colour);
      draw(rasteriser, box, near_pose, near_colour);
    }
    const Image& image = rasteriser.image();
    const Rgb centre = image.at(100, 100);
    EXPECT_GT(centre.red, 150) << "near box drawn " << (near_first ? "first" : "last");
    EXPECT_EQ(centre.blue, 0) << "near box drawn " << (near_first ? "first" : "last");
    // The far box shows beside the near one (up and to the right of it, as placed).
    long long far_pixels = 0;
    for (int row = 0; row < image.height; ++row)
      for (int column = 0; column < image.width; ++column) far_pixels += image.at(column, row).blue > 150;
    EXPECT_GT(far_pixels, 50);
  }
}

// Lambert: a face whose normal points at the light has colour · (ambient + diffuse), one at
// right angles to it colour · ambient (both faces turned towards the camera).
TEST(RenderRaster, FaceTowardsTheLightIsBrighterByLambertsLaw) {
  Camera camera;
  camera.eye = {0, -5, 0};
  camera.target = {0, 0, 0};
  const viewer::Lighting lighting{{1, -1, 0}, 0.4, 0.5};
  Rasteriser rasteriser(200, 100, camera, kBackground, lighting);
  const Rgb grey{100, 100, 100};
  // Left quad: normal (−1, −1, 0)/√2 (perpendicular to the light); right: (1, −1, 0)/√2 (at it).
  const auto quad = [&](double x, double sign) {
    const Vec3 a{x - 0.4, sign * 0.4, -0.5}, b{x + 0.4, -sign * 0.4, -0.5}, c{x + 0.4, -sign * 0.4, 0.5},
        d{x - 0.4, sign * 0.4, 0.5};
    rasteriser.draw_triangle({a, b, c}, Paint::solid(grey));
    rasteriser.draw_triangle({a, c, d}, Paint::solid(grey));
  };
  quad(-1.0, 1.0);
  quad(1.0, -1.0);
  // The quads' centres, (±1, 0, 0), seen 5 m away: columns 100 ± focal / 5.
  const int offset = static_cast<int>(std::lround(rasteriser.focal_pixels() / 5.0));
  const Rgb away = rasteriser.image().at(100 - offset, 50), towards = rasteriser.image().at(100 + offset, 50);
  EXPECT_EQ(towards.red, 90);  // 100 · (0.4 + 0.5 · 1)
  EXPECT_EQ(away.red, 40);     // 100 · 0.4
  EXPECT_GT(towards.red, away.red);
}

// A triangle crossing the camera's plane is clipped at the near plane, not drawn wrapped
// around: a ground patch under the camera fills the lower half of the picture only.
TEST(RenderRaster, GroundThroughTheCameraPlaneIsClippedNotWrapped) {
  Camera camera;
  camera.eye = {0, 0, 1};
  camera.target = {0, 10, 1};
  Rasteriser rasteriser(100, 100, camera, kBackground);
  const Paint paint = Paint::solid(Rgb{0, 150, 0});
  rasteriser.draw_triangle({Vec3{-50, -50, 0}, Vec3{50, -50, 0}, Vec3{50, 50, 0}}, paint);
  rasteriser.draw_triangle({Vec3{-50, -50, 0}, Vec3{50, 50, 0}, Vec3{-50, 50, 0}}, paint);
  const Image& image = rasteriser.image();
  EXPECT_EQ(image.at(50, 5), kBackground);   // sky
  EXPECT_NE(image.at(50, 95), kBackground);  // ground
  EXPECT_NE(image.at(2, 98), kBackground);   // ground to the edges
}

TEST(RenderPng, RoundTripKeepsSizeAndPixels) {
  Image image(37, 23, Rgb{});
  for (int row = 0; row < image.height; ++row)
    for (int column = 0; column < image.width; ++column)
      image.set(column, row,
                {static_cast<std::uint8_t>(7 * column), static_cast<std::uint8_t>(11 * row),
                 static_cast<std::uint8_t>((column * row) % 256)});
  const std::filesystem::path folder = testing::fresh_test_folder("render_png");
  viewer::write_png(folder / "picture.png", image);
  const Image back = viewer::read_png(folder / "picture.png");
  EXPECT_EQ(back.width, 37);
  EXPECT_EQ(back.height, 23);
  EXPECT_EQ(back.pixels, image.pixels);
  try {
    viewer::write_png(folder / "no such folder" / "picture.png", image);
    ADD_FAILURE() << "wrote into a missing folder";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("no such folder/picture.png"), std::string::npos) << error.what();
  }
  std::ofstream(folder / "not.png") << "not a PNG";
  EXPECT_THROW(viewer::read_png(folder / "not.png"), Error);
}

// The model block's sizes are checked: the message names the file, the item and the value.
TEST(RenderTrajectory, RefusesAShapeItCannotDrawNamingTheItem) {
  nlohmann::json trajectory = {
      {"format", "diffphys-trajectory"},
      {"version", 1},
      {"dt", 0.01},
      {"bodies", {"ball"}},
      {"model",
       {{"bodies",
         {{{"name", "world"}, {"type", "static"}, {"shapes", nlohmann::json::array()}},
          {{"name", "ball"},
           {"type", "dynamic"},
           {"shapes", {{{"name", "ball/0"}, {"type", "sphere"}, {"radius", -0.5}}}}}}}}},
      {"frames", {{{"time", 0.0}, {"bodies", {{{"position", {0, 0, 1}}, {"orientation", {1, 0, 0, 0}}}}}}}}};
  try {
    viewer::TrajectoryScene scene(trajectory.dump(), "traj.json");
    ADD_FAILURE() << "accepted a sphere of radius -0.5";
  } catch (const Error& error) {
    const std::string what = error.what();
    EXPECT_EQ(what.rfind("traj.json: model.bodies[1].shapes[0].radius is -0.5", 0), 0u) << what;
  }
  trajectory["model"]["bodies"][1]["shapes"][0]["radius"] = 0.5;
  const viewer::TrajectoryScene scene(trajectory.dump(), "traj.json");
  EXPECT_EQ(scene.frame_count(), 1);
  // The ball (palette blue, 0x3f7fbf) is in the middle of the default view.
  const Image image = scene.render(0, scene.default_camera(4.0 / 3.0), 80, 60);
  const Rgb centre = image.at(40, 30);
  EXPECT_GT(centre.blue, centre.red + 40) << int(centre.red) << " " << int(centre.green) << " " << int(centre.blue);
}

// Finite positions too far apart for any camera (found by mutating trajectories under UBSan,
// which then caught an overflowing cast in the ground's checker): refused by name, not drawn.
TEST(RenderTrajectory, RefusesPositionsTooFarApartToFrame) {
  const nlohmann::json trajectory = {{"format", "diffphys-trajectory"},
                                     {"version", 1},
                                     {"bodies", {"a", "b"}},
                                     {"frames",
                                      {{{"time", 0.0},
                                        {"bodies",
                                         {{{"position", {1e308, 0, 0}}, {"orientation", {1, 0, 0, 0}}},
                                          {{"position", {-1e308, 0, 0}}, {"orientation", {1, 0, 0, 0}}}}}}}}};
  try {
    viewer::TrajectoryScene scene(trajectory.dump(), "far.json");
    ADD_FAILURE() << "accepted bodies 2e308 m apart";
  } catch (const Error& error) {
    const std::string what = error.what();
    EXPECT_EQ(what.rfind("far.json: the bodies and nodes span from [", 0), 0u) << what;
    EXPECT_NE(what.find("too far apart to frame"), std::string::npos) << what;
  }
}

// `diffphys render` on shipped examples' trajectories, written by `diffphys simulate` here.
class RenderCommand : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    folder_ = testing::fresh_test_folder("render_cli");
    const std::string source = test_paths::source_dir();
    const auto [ball_code, ball_output] = testing::run_cli(
        "simulate " + source + "/examples/scenes/bouncing_ball.json --steps 300 --every 10 --quiet --out " +
            (folder_ / "ball.json").string(),
        "render_simulate_ball", 300);
    ASSERT_EQ(ball_code, 0) << ball_output;
    const auto [world_code, world_output] =
        testing::run_cli("simulate " + source + "/examples/soft/cloth_on_pendulum.json -n 4 --quiet --out " +
                             (folder_ / "coupled.json").string(),
                         "render_simulate_coupled", 300);
    ASSERT_EQ(world_code, 0) << world_output;
  }
  static std::filesystem::path folder_;

  static std::vector<std::filesystem::path> pictures(const std::filesystem::path& folder) {
    std::vector<std::filesystem::path> found;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) found.push_back(entry.path());
    std::sort(found.begin(), found.end());
    return found;
  }
};
std::filesystem::path RenderCommand::folder_;

TEST_F(RenderCommand, WritesOnePictureOfTheGivenSizePerFrame) {
  const std::filesystem::path out = folder_ / "ball_frames";
  const auto [code, output] = testing::run_cli(
      "render " + (folder_ / "ball.json").string() + " --out " + out.string() + " --width 64 --height 48",
      "render_ball", 300);
  ASSERT_EQ(code, 0) << output;
  const auto files = pictures(out);
  ASSERT_EQ(files.size(), 31u);  // frame 0, then every 10th of 300 steps
  EXPECT_EQ(files.front().filename(), "frame_00000.png");
  EXPECT_EQ(files.back().filename(), "frame_00030.png");
  for (const auto& file : files) {
    const Image image = viewer::read_png(file);
    EXPECT_EQ(image.width, 64);
    EXPECT_EQ(image.height, 48);
  }
  EXPECT_NE(output.find("rendered    31 frames"), std::string::npos) << output;
  EXPECT_NE(output.find("ffmpeg -framerate 100 -i " + (out / "frame_%05d.png").string()), std::string::npos) << output;
  // Something is drawn: the ball, the checkered ground and the sky give many colours.
  const Image first = viewer::read_png(files.front());
  std::set<std::array<int, 3>> colours;
  for (int row = 0; row < first.height; ++row)
    for (int column = 0; column < first.width; ++column) {
      const Rgb pixel = first.at(column, row);
      colours.insert({pixel.red, pixel.green, pixel.blue});
    }
  EXPECT_GT(colours.size(), 20u);
}

TEST_F(RenderCommand, EveryAndFramesPickTheRecordedFrames) {
  const std::string ball = (folder_ / "ball.json").string();
  const auto [code, output] = testing::run_cli(
      "render " + ball + " --out " + (folder_ / "every").string() + " --width 32 --height 24 --every 5", "render_every",
      300);
  ASSERT_EQ(code, 0) << output;
  EXPECT_EQ(pictures(folder_ / "every").size(), 7u);  // frames 0, 5, …, 30
  const auto [range_code, range_output] = testing::run_cli("render " + ball + " --out " + (folder_ / "range").string() +
                                                               " --width 32 --height 24 --frames 3:9 --every 2 "
                                                               "--camera-from 2,-3,1 --camera-at 0,0,0.5",
                                                           "render_range", 300);
  ASSERT_EQ(range_code, 0) << range_output;
  EXPECT_EQ(pictures(folder_ / "range").size(), 3u);  // frames 3, 5, 7
}

TEST_F(RenderCommand, DrawsAWorldOfRigidAndSoftParts) {
  const std::filesystem::path out = folder_ / "coupled_frames";
  const auto [code, output] = testing::run_cli(
      "render " + (folder_ / "coupled.json").string() + " --out " + out.string() + " --width 80 --height 60",
      "render_coupled", 300);
  ASSERT_EQ(code, 0) << output;
  const auto files = pictures(out);
  ASSERT_EQ(files.size(), 5u);  // the initial state and 4 steps
  // The cloth's colour (0xe0a030, shaded) is in the picture.
  const Image image = viewer::read_png(files.back());
  long long cloth = 0;
  for (int row = 0; row < image.height; ++row)
    for (int column = 0; column < image.width; ++column) {
      const Rgb pixel = image.at(column, row);
      cloth += pixel.red > pixel.blue + 80 && pixel.green > pixel.blue + 30;
    }
  EXPECT_GT(cloth, 50);
}

// Each refusal: exit code 1, a message naming the file or option and the value, and nothing
// written (the --out folder is not even created).
TEST_F(RenderCommand, RefusesBadInputWithoutWritingAnything) {
  const std::string ball = (folder_ / "ball.json").string();
  std::ofstream(folder_ / "broken.json") << R"({"format": "diffphys-trajectory", "bodies": ["ball"], "frames": []})";
  std::ofstream(folder_ / "a_file") << "not a folder";
  const std::string out = (folder_ / "refused").string();
  const struct {
    std::string arguments;
    std::vector<std::string> pieces;
  } cases[] = {
      {(folder_ / "broken.json").string() + " --out " + out, {"broken.json", "\"frames\" must be a non-empty array"}},
      {(folder_ / "missing.json").string() + " --out " + out, {"missing.json", "cannot open"}},
      {ball + " --out " + out + " --width 0", {"--width", "0"}},
      {ball + " --out " + out + " --height 100000", {"--height", "100000"}},
      {ball + " --out " + out + " --every 0", {"--every", "0"}},
      {ball + " --out " + (folder_ / "a_file").string(), {"a_file", "is a file"}},
      {ball + " --out " + out + " --frames 9:3", {"--frames 9:3", "selects no frame"}},
      {ball + " --out " + out + " --frames 0:99", {"--frames 0:99", "31 frames"}},
      {ball + " --out " + out + " --frames x", {"--frames x", "A:B"}},
      {ball + " --out " + out + " --camera-from 1,2", {"--camera-from 1,2", "X,Y,Z"}},
      {ball + " --out " + out + " --camera-from 0,0,1 --camera-at 0,0,1", {"--camera-from", "two different points"}},
  };
  for (const auto& bad : cases) {
    const auto [code, output] = testing::run_cli("render " + bad.arguments, "render_refused", 60);
    EXPECT_EQ(code, 1) << bad.arguments << "\n" << output;
    EXPECT_NE(output.find("diffphys: error: "), std::string::npos) << output;
    for (const std::string& piece : bad.pieces)
      EXPECT_NE(output.find(piece), std::string::npos) << "missing '" << piece << "' in: " << output;
    EXPECT_FALSE(std::filesystem::exists(out)) << bad.arguments;
  }
}

}  // namespace render_test
}  // namespace diffphys
