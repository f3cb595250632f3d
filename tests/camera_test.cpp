// tests/camera_test.cpp — the camera's backward pass (camera/camera_render.cpp,
// camera/shape_rays.cpp) against central differences of its forward pass: every gradient
// class (body poses in the tangent layout, shape sizes, camera pose and field of view,
// colours, texels), for a scalar loss over the whole image and per pixel, silhouette pixels
// included, on random poses of six overlapping shapes.
#include <gtest/gtest.h>

#include <algorithm>

#include "camera_test_scenes.hpp"
#include "diffphys/params.hpp"

namespace {

using namespace camera_test;

// |analytic − central difference| allowed, relative to the derivative and to the largest one of
// the same loss or row (scale): 1e-7, about three times the central difference's own rounding
// (ε Σ|w_i image_i| / 2h ≈ 2.2e-16 · 3000 / 2e-8 ≈ 3e-5 on a scale of ~10³: 3e-8). Measured:
// 1.3e-8 at worst. The steps (1e-8 m or rad) keep every sample's move far below a texel, so that
// no sample crosses the image's kinks (texel centres, the coverage ramp's joints; docs/camera.md).
double allowed(double fd, double scale) {
  return 1e-7 * (std::abs(fd) + scale);
}

CameraGradients backward(const CameraSetup& setup, const CameraImage& cotangent, int threads = 1) {
  CameraRenderer renderer(setup.scene.model, setup.camera, setup.appearance, threads);
  CameraGradients gradients;
  renderer.backward(setup.scene.params, setup.scene.state, cotangent, gradients);
  return gradients;
}

void expect_scalar_loss_gradients(const CameraSetup& setup, unsigned seed) {
  const CameraImage image = render(setup);
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> weight(-1.0, 1.0);
  CameraImage cotangent = image;
  for (double& w : cotangent.colour) w = weight(random);
  for (double& w : cotangent.depth) w = 0.1 * weight(random);
  const CameraGradients gradients = backward(setup, cotangent);
  const std::vector<Direction> directions = all_directions(setup);
  std::vector<double> analytic, numeric;
  for (const Direction& direction : directions) {
    const std::vector<double> column = image_difference(setup, direction);
    double fd = 0.0;
    for (std::size_t i = 0; i < cotangent.colour.size(); ++i) fd += cotangent.colour[i] * column[i];
    for (std::size_t i = 0; i < cotangent.depth.size(); ++i)
      fd += cotangent.depth[i] * column[cotangent.colour.size() + i];
    analytic.push_back(direction.analytic(gradients));
    numeric.push_back(fd);
  }
  double scale = 0.0;
  for (double value : numeric) scale = std::max(scale, std::abs(value));
  for (std::size_t d = 0; d < directions.size(); ++d)
    EXPECT_NEAR(analytic[d], numeric[d], allowed(numeric[d], scale))
        << directions[d].name << " (seed " << seed << ", largest |dL/dx| " << scale << ")";
  // Every shape is seen (its colour moves the loss), so that none passes by being absent.
  for (std::size_t d = 0; d < directions.size(); ++d)
    if (directions[d].name.find(" colour ") != std::string::npos) {
      EXPECT_GT(std::abs(numeric[d]), 1e-3) << directions[d].name << " (seed " << seed << "): the shape is not in view";
    }
}

TEST(Camera, ScalarLossGradientsMatchCentralDifferences) {
  for (unsigned seed : {1u, 2u, 3u}) expect_scalar_loss_gradients(mixed_scene(seed), seed + 100);
}

// The image entries (colour values, then depth values) and the geometric inputs whose
// Jacobian block is compared: row by row, each row one backward pass with a one-hot cotangent.
void expect_jacobian_rows(const CameraSetup& setup, const std::vector<std::size_t>& entries, const std::string& what) {
  std::vector<Direction> directions;
  for (Direction& direction : all_directions(setup, 0))
    if (direction.name.find("colour") == std::string::npos) directions.push_back(direction);
  std::vector<std::vector<double>> columns;
  for (const Direction& direction : directions) columns.push_back(image_difference(setup, direction));
  const CameraImage image = render(setup);
  const std::size_t colour_count = image.colour.size();
  CameraRenderer renderer(setup.scene.model, setup.camera, setup.appearance, 1);
  CameraImage cotangent = image;
  for (std::size_t entry : entries) {
    std::fill(cotangent.colour.begin(), cotangent.colour.end(), 0.0);
    std::fill(cotangent.depth.begin(), cotangent.depth.end(), 0.0);
    if (entry < colour_count)
      cotangent.colour[entry] = 1.0;
    else
      cotangent.depth[entry - colour_count] = 1.0;
    CameraGradients gradients;
    renderer.backward(setup.scene.params, setup.scene.state, cotangent, gradients);
    double scale = 0.0;
    for (const std::vector<double>& column : columns) scale = std::max(scale, std::abs(column[entry]));
    for (std::size_t d = 0; d < directions.size(); ++d)
      EXPECT_NEAR(directions[d].analytic(gradients), columns[d][entry], allowed(columns[d][entry], scale))
          << what << ": " << directions[d].name << ", image entry " << entry
          << (entry < colour_count ? " (colour)" : " (depth)");
  }
}

// Per pixel on the mixed scene: the entries each input moves most (silhouettes, where
// coverage is fractional) and a spread of others.
TEST(Camera, PerPixelJacobianRowsMatchCentralDifferences) {
  const CameraSetup setup = mixed_scene(4);
  std::vector<std::size_t> entries;
  for (const Direction& direction : all_directions(setup, 0)) {
    if (direction.name.find("colour") != std::string::npos) continue;
    const std::vector<double> column = image_difference(setup, direction);
    const auto largest =
        std::max_element(column.begin(), column.end(), [](double a, double b) { return std::abs(a) < std::abs(b); });
    entries.push_back(static_cast<std::size_t>(largest - column.begin()));
  }
  const CameraImage image = render(setup);
  const std::size_t total = image.colour.size() + image.depth.size();
  for (std::size_t k = 0; k < 24; ++k) entries.push_back((total * (2 * k + 1)) / 48);
  expect_jacobian_rows(setup, entries, "mixed scene");
}

// Each shape alone, white and unshaded on black: the colour of a pixel is its coverage α, so
// the pixels with 0 < α < 1 are exactly the soft edge. Every such pixel's row is checked.
TEST(Camera, SilhouettePixelsOfEachShapeMatchCentralDifferences) {
  for (int keep = 1; keep <= 5; ++keep) {
    CameraSetup setup = mixed_scene(5, 40, 30);
    // Move the other bodies far behind the camera, out of view.
    for (int b = 1; b < setup.scene.model.body_count(); ++b)
      if (b != keep) setup.scene.state.position[static_cast<std::size_t>(b)] = {40.0 + b, -30.0, 0.5};
    setup.scene.state.position[0] = {0.0, 0.0, -50.0};  // the ground far below, beyond far_depth
    setup.camera.far_depth = 8.0;
    setup.appearance.textures.clear();
    for (ShapeLook& look : setup.appearance.shapes) look = ShapeLook{{1.0, 1.0, 1.0}, -1, 1.0};
    setup.appearance.ambient = 1.0;
    setup.appearance.diffuse = 0.0;
    setup.appearance.background = {0.0, 0.0, 0.0};
    const CameraImage image = render(setup);
    std::vector<std::size_t> entries;
    for (std::size_t p = 0; p < image.depth.size(); ++p)
      if (image.colour[p * 3] > 0.0 && image.colour[p * 3] < 1.0) {
        entries.push_back(p * 3);
        entries.push_back(image.colour.size() + p);
      }
    const std::string name = setup.scene.model.shapes[static_cast<std::size_t>(keep)].name;
    ASSERT_GE(entries.size(), 20u) << name << ": too few edge pixels to test";
    expect_jacobian_rows(setup, entries, name + " alone");
  }
}

}  // namespace
