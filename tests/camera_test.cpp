// tests/camera_test.cpp — the camera's backward pass (camera/camera_render.cpp,
// camera/shape_rays.cpp) against central differences of its forward pass: every gradient
// class (body poses in the tangent layout, shape sizes, camera pose and field of view,
// colours, texels), for a scalar loss over the whole image and per pixel, silhouette pixels
// included, on random poses of five overlapping shapes.
#include <gtest/gtest.h>

#include <algorithm>

#include "camera_test_scenes.hpp"
#include "diffphys/params.hpp"

namespace {

using namespace camera_test;

// |analytic − central difference| allowed, relative to the derivative and to the largest one of
// the same loss (scale): 1e-7. Measured: within 1.3e-9 on the three seeds. The steps (1e-8 m or
// rad) keep every sample's move far below a texel, so that few samples cross the image's kinks
// (bilinear texels, the coverage ramp's joints; docs/camera.md, "Tests").
double allowed(double fd, double scale) { return 1e-7 * (std::abs(fd) + scale); }

CameraGradients backward(const Setup& setup, const CameraImage& cotangent, int threads = 1) {
  CameraRenderer renderer(setup.scene.model, setup.camera, setup.appearance, threads);
  CameraGradients gradients;
  renderer.backward(setup.scene.params, setup.scene.state, cotangent, gradients);
  return gradients;
}

void expect_scalar_loss_gradients(const Setup& setup, unsigned seed) {
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
}

TEST(Camera, ScalarLossGradientsMatchCentralDifferences) {
  for (unsigned seed : {1u, 2u, 3u}) expect_scalar_loss_gradients(mixed_scene(seed), seed + 100);
}

}  // namespace
