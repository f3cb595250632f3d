// tests/camera_closed_form_test.cpp — the camera's forward pass against closed forms (a
// sphere's image area and centroid, a textured plane's bilinear sample, depths and shading
// worked by hand), the same bits on 1 and 2 threads, a camera carried by a body, and the
// refusals of bad input (camera/camera_setup.cpp, viewer/camera_texture.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "camera_test_scenes.hpp"
#include "camera_texture.hpp"
#include "diffphys/error.hpp"
#include "diffphys/params.hpp"

namespace {

using namespace camera_test;
constexpr double kPi = 3.14159265358979323846;

// One sphere of radius r at `centre`, seen from the origin looking along +x (z up), white and
// unshaded on black: a pixel's colour is the sphere's coverage α.
CameraSetup lone_sphere(double radius, const Vec3& centre, int width, int height, double fov_degrees) {
  ModelBuilder builder;
  BodySpec body;
  body.name = "ball";
  body.position = centre;
  ShapeSpec shape = shape_spec(ShapeType::Sphere, radius, {}, 0.0);
  shape.name = "ball";
  body.shapes.push_back(shape);
  builder.add_body(body);
  CameraSetup setup{builder.build(), Camera{}, Appearance{}};
  setup.camera.width = width;
  setup.camera.height = height;
  setup.camera.vertical_fov = fov_degrees * kPi / 180.0;
  setup.camera.orientation = camera_look_at({0, 0, 0}, {1, 0, 0});
  setup.appearance = default_appearance(setup.scene.model);
  setup.appearance.shapes[1 - 1].colour = {1.0, 1.0, 1.0};
  setup.appearance.ambient = 1.0;
  setup.appearance.diffuse = 0.0;
  return setup;
}

// Sum of the coverage A(s) over the pixel lattice of a sphere on the optical axis (distance z,
// radius r, focal f px) against its closed form (docs/camera.md, "Image area"):
//   s(ρ) = (f r/z) √(1 + ρ²/f²) − ρ at image radius ρ, zero at R = f r/√(z² − r²) (the exact
//   outline; π r² f²/z² is its small-angle form R² cos²β, sin β = r/z), slope −k, k = cos²β;
//   A's derivative is a tent of half-width 1/k centred at R − 1/k, so
//   ∫ A dA = π (R − 1/k)² + π/(6k²) up to the curvature of s (≤ 0.05 px² here).
// The lattice sum differs from the integral by aliasing, bounded by Poisson summation:
//   Σ_{m ∈ Z² \ 0} |D̂(2π|m|)| · T(2π|m|), D̂(ω) = 2π R_m J₁(R_m ω)/ω ≤ (2π R_m/ω) √(2/(π R_m ω)),
//   T(ω) = sinc²(ω/(2k)) the tent's transform (R_m = R − 1/k).
TEST(Camera, SphereImageAreaMatchesClosedForm) {
  for (const double distance : {3.0, 4.0, 6.0}) {
    const double radius = 0.5;
    const CameraSetup setup = lone_sphere(radius, {distance, 0.0, 0.0}, 96, 96, 40.0);
    const CameraImage image = render(setup);
    double area = 0.0;
    for (std::size_t p = 0; p < image.depth.size(); ++p) area += image.colour[p * 3];
    const double focal = 48.0 / std::tan(20.0 * kPi / 180.0);
    const double outline = focal * radius / std::sqrt(distance * distance - radius * radius);
    const double cos_beta_squared = 1.0 - radius * radius / (distance * distance);
    const double k = cos_beta_squared, middle = outline - 1.0 / k;
    const double closed_form = kPi * middle * middle + kPi / (6.0 * k * k);
    double aliasing = 0.0;
    for (int mx = -40; mx <= 40; ++mx)
      for (int my = -40; my <= 40; ++my) {
        if (mx == 0 && my == 0) continue;
        const double omega = 2.0 * kPi * std::hypot(mx, my);
        const double half = omega / (2.0 * k);
        const double tent = std::pow(std::sin(half) / half, 2);
        aliasing += 2.0 * kPi * middle / omega * std::sqrt(2.0 / (kPi * middle * omega)) * tent;
      }
    EXPECT_NEAR(area, closed_form, aliasing + 0.05)
        << "sphere at " << distance << " m, outline radius " << outline << " px";
    // The brief's small-angle form, for the record: π r² f²/z² = π R² cos²β.
    EXPECT_NEAR(kPi * radius * radius * focal * focal / (distance * distance),
                kPi * outline * outline * cos_beta_squared, 1e-9);
  }
}

// The coverage-weighted centroid of an off-axis sphere against the pinhole projection of its
// centre. The outline is an ellipse whose centre lies outward of the projection, along the
// radial line, by δ = f (tan(γ+β) + tan(γ−β))/2 − f tan γ (γ the centre's angle off the axis,
// sin β = r/|c|). The soft band (about 1/k px inside the outline, k its slope) is not quite
// uniform: k varies with the pixel's angle off the axis, by a relative tan γ · β between the
// outline's near and far sides; an erosion e(φ) = e₀ + e₁ cos φ moves a disc's centroid by e₁,
// so the centroid sits within 2 tan γ · β of the ellipse's centre (and the lattice adds ~1e-3 px).
TEST(Camera, SphereCentroidIsThePinholeProjection) {
  const double radius = 0.4;
  for (const Vec3 centre : {Vec3{5.0, 0.6, -0.3}, Vec3{5.0, -0.2, 0.5}, Vec3{4.0, 0.31, 0.12}}) {
    const CameraSetup setup = lone_sphere(radius, centre, 120, 90, 45.0);
    const CameraImage image = render(setup);
    double sum = 0.0, u_sum = 0.0, v_sum = 0.0;
    for (int row = 0; row < image.height; ++row)
      for (int column = 0; column < image.width; ++column) {
        const double alpha = image.colour[static_cast<std::size_t>((row * image.width + column) * 3)];
        sum += alpha;
        u_sum += alpha * (column + 0.5);
        v_sum += alpha * (row + 0.5);
      }
    const double focal = 45.0 / std::tan(22.5 * kPi / 180.0);
    // Camera axes: x_C = −y_W, y_C = −z_W, z_C = +x_W; the principal point is the image centre.
    const double u = 60.0 + focal * (-centre.y) / centre.x, v = 45.0 + focal * (-centre.z) / centre.x;
    const double off_axis = std::hypot(u - 60.0, v - 45.0);  // f tan γ, px
    const double gamma = std::atan(off_axis / focal), beta = std::asin(radius / norm(centre));
    const double shift = focal * (std::tan(gamma + beta) + std::tan(gamma - beta)) / 2.0 - off_axis;
    const double expected_u = u + shift * (u - 60.0) / off_axis, expected_v = v + shift * (v - 45.0) / off_axis;
    EXPECT_NEAR(u_sum / sum, expected_u, 2.0 * std::tan(gamma) * beta + 2e-3)
        << "centre " << centre.y << ", " << centre.z;
    EXPECT_NEAR(v_sum / sum, expected_v, 2.0 * std::tan(gamma) * beta + 2e-3)
        << "centre " << centre.y << ", " << centre.z;
    EXPECT_GT(shift, 0.05);  // the perspective shift is resolved: the projection alone would be off by it
  }
}

// A textured ground seen straight down: a pixel's colour is the tint times the bilinear sample
// worked out by hand from the texels, its depth the distance along the ray to z = 0.
TEST(Camera, TexturedPlaneColourIsTheBilinearSampleWorkedByHand) {
  ModelBuilder builder;
  builder.add_ground_plane();
  CameraSetup setup{builder.build(), Camera{}, Appearance{}};
  setup.camera.width = 16;
  setup.camera.height = 12;
  setup.camera.vertical_fov = 60.0 * kPi / 180.0;
  const Vec3 eye{0.3, 0.2, 2.0};
  setup.camera.position = eye;
  setup.camera.orientation = camera_look_at(eye, eye - Vec3{0, 0, 1}, {0, 1, 0});  // x_C = x_W, y_C = −y_W
  setup.appearance = default_appearance(setup.scene.model);
  Texture texture;
  texture.width = 4;
  texture.height = 3;
  for (int i = 0; i < 36; ++i) texture.texels.push_back(std::fmod(0.37 * i * i + 0.11 * i, 1.0));
  setup.appearance.textures.push_back(texture);
  setup.appearance.shapes[0] = ShapeLook{{0.9, 0.8, 0.7}, 0, 1.3};
  setup.appearance.ambient = 1.0;
  setup.appearance.diffuse = 0.0;
  const CameraImage image = render(setup);
  const double focal = 6.0 / std::tan(30.0 * kPi / 180.0);
  for (const auto& [column, row] : {std::pair{5, 7}, std::pair{12, 2}, std::pair{0, 11}}) {
    const double x_c = (column + 0.5 - 8.0) / focal, y_c = (row + 0.5 - 6.0) / focal;
    const double px = eye.x + 2.0 * x_c, py = eye.y - 2.0 * y_c;  // the ray (x_c, −y_c, −1) meets z = 0
    // Texel (i, j) sits at ((i + ½) W⁻¹, (j + ½) H⁻¹) of a repeat 1.3 m wide; wrap around.
    const double x = px / 1.3 * 4 - 0.5, y = py / 1.3 * 3 - 0.5;
    const int i0 = static_cast<int>(std::floor(x)), j0 = static_cast<int>(std::floor(y));
    const double fx = x - i0, fy = y - j0;
    auto at = [&](int i, int j, int c) {
      i = ((i % 4) + 4) % 4;
      j = ((j % 3) + 3) % 3;
      return texture.texels[static_cast<std::size_t>((j * 4 + i) * 3 + c)];
    };
    const std::size_t pixel = static_cast<std::size_t>(row * 16 + column);
    for (int c = 0; c < 3; ++c) {
      const double sample = (1 - fx) * (1 - fy) * at(i0, j0, c) + fx * (1 - fy) * at(i0 + 1, j0, c) +
                            (1 - fx) * fy * at(i0, j0 + 1, c) + fx * fy * at(i0 + 1, j0 + 1, c);
      EXPECT_NEAR(image.colour[pixel * 3 + static_cast<std::size_t>(c)], setup.appearance.shapes[0].colour[c] * sample,
                  1e-12)
          << "pixel (" << column << ", " << row << ") channel " << c;
    }
    EXPECT_NEAR(image.depth[pixel], 2.0 * std::sqrt(1.0 + x_c * x_c + y_c * y_c), 1e-12);
  }
}

// A pixel well inside a sphere: depth is the ray–sphere distance, colour the Lambert shade of
// the normal there, both by hand.
TEST(Camera, SphereDepthAndShadeAreTheRayHitWorkedByHand) {
  const Vec3 centre{4.0, 0.3, -0.2};
  const double radius = 0.5;
  CameraSetup setup = lone_sphere(radius, centre, 64, 48, 50.0);
  setup.appearance.shapes[0].colour = {0.6, 0.5, 0.4};
  setup.appearance.ambient = 0.25;
  setup.appearance.diffuse = 0.75;
  setup.appearance.light_direction = {1.0, 0.5, -0.3};
  const CameraImage image = render(setup);
  const double focal = 24.0 / std::tan(25.0 * kPi / 180.0);
  const Vec3 light = normalized(setup.appearance.light_direction);
  int checked = 0;
  for (const auto& [column, row] : {std::pair{28, 27}, std::pair{26, 29}, std::pair{24, 26}}) {
    const double x_c = (column + 0.5 - 32.0) / focal, y_c = (row + 0.5 - 24.0) / focal;
    const Vec3 d = normalized(Vec3{1.0, -x_c, -y_c});  // x_C = −y_W, y_C = −z_W, z_C = x_W
    const double b = dot(centre, d), c = dot(centre, centre) - radius * radius;
    ASSERT_GT(b * b - c, 0.0);
    const double t = b - std::sqrt(b * b - c);
    const std::size_t pixel = static_cast<std::size_t>(row * 64 + column);
    // Only where the coverage is whole (s ≥ 2 px): the pixel's ray passes ≥ 2 px inside the outline.
    const double miss = norm(d * b - centre);
    if (focal * std::sqrt(1 + x_c * x_c + y_c * y_c) * (radius - miss) / norm(centre) < 2.0) continue;
    EXPECT_NEAR(image.depth[pixel], t, 1e-12);
    const Vec3 normal = (d * t - centre) / radius;
    const double shade = 0.25 + 0.75 * std::max(0.0, -dot(normal, light));
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(image.colour[pixel * 3 + static_cast<std::size_t>(k)], setup.appearance.shapes[0].colour[k] * shade,
                  1e-12);
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

// Render and backward on 1 and 2 threads: the same bits.
TEST(Camera, OneAndTwoThreadsGiveTheSameBits) {
  const CameraSetup setup = mixed_scene(7, 96, 64);
  const CameraImage one = render(setup, 1), two = render(setup, 2);
  ASSERT_EQ(one.colour.size(), two.colour.size());
  EXPECT_EQ(std::memcmp(one.colour.data(), two.colour.data(), one.colour.size() * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(one.depth.data(), two.depth.data(), one.depth.size() * sizeof(double)), 0);
  CameraImage cotangent = one;
  for (std::size_t i = 0; i < cotangent.colour.size(); ++i) cotangent.colour[i] = std::sin(0.37 * i);
  for (std::size_t i = 0; i < cotangent.depth.size(); ++i) cotangent.depth[i] = std::cos(0.11 * i);
  CameraGradients gradients[2];
  for (int threads = 1; threads <= 2; ++threads) {
    CameraRenderer renderer(setup.scene.model, setup.camera, setup.appearance, threads);
    renderer.backward(setup.scene.params, setup.scene.state, cotangent, gradients[threads - 1]);
  }
  const CameraGradients &a = gradients[0], &b = gradients[1];
  EXPECT_EQ(std::memcmp(a.state.data(), b.state.data(), a.state.size() * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(a.params.data(), b.params.data(), a.params.size() * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(a.colours.data(), b.colours.data(), a.colours.size() * sizeof(Vec3)), 0);
  EXPECT_EQ(std::memcmp(a.textures[0].data(), b.textures[0].data(), a.textures[0].size() * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(&a.camera_position, &b.camera_position, sizeof(Vec3)), 0);
  EXPECT_EQ(std::memcmp(&a.camera_rotation, &b.camera_rotation, sizeof(Vec3)), 0);
  EXPECT_EQ(std::memcmp(&a.vertical_fov, &b.vertical_fov, sizeof(double)), 0);
  double total = 0.0;
  for (double value : a.state) total += std::abs(value);
  EXPECT_GT(total, 0.0);  // a gradient that is there to compare
}

// A camera carried by a body at a fixed offset sees the same image as the same pose in the
// world, and the body's pose gradient carries the camera's (plus its own shapes').
TEST(Camera, CameraOnABodyMovesWithItsPoseGradient) {
  CameraSetup world_camera = mixed_scene(8);
  CameraSetup carried = world_camera;
  const int body = 2;  // the crate
  const Vec3 p_b = carried.scene.state.position[body];
  const Quat q_b = carried.scene.state.orientation[body];
  carried.camera.body = body;
  carried.camera.position = q_b.inverse_rotate(world_camera.camera.position - p_b);
  carried.camera.orientation = (q_b.conjugate() * world_camera.camera.orientation).normalized();
  const CameraImage a = render(world_camera), b = render(carried);
  for (std::size_t i = 0; i < a.colour.size(); ++i) ASSERT_NEAR(a.colour[i], b.colour[i], 1e-9);
  CameraImage cotangent = a;
  for (std::size_t i = 0; i < cotangent.colour.size(); ++i) cotangent.colour[i] = std::sin(0.7 * i);
  for (std::size_t i = 0; i < cotangent.depth.size(); ++i) cotangent.depth[i] = 0.1 * std::cos(0.3 * i);
  CameraRenderer renderer(carried.scene.model, carried.camera, carried.appearance, 1);
  CameraGradients gradients;
  renderer.backward(carried.scene.params, carried.scene.state, cotangent, gradients);
  for (const Direction& direction : all_directions(carried, 0)) {
    if (direction.name.rfind("body crate", 0) != 0) continue;
    const std::vector<double> column = image_difference(carried, direction);
    double fd = 0.0;
    for (std::size_t i = 0; i < cotangent.colour.size(); ++i) fd += cotangent.colour[i] * column[i];
    for (std::size_t i = 0; i < cotangent.depth.size(); ++i)
      fd += cotangent.depth[i] * column[cotangent.colour.size() + i];
    EXPECT_NEAR(direction.analytic(gradients), fd, 1e-7 * (std::abs(fd) + 100.0)) << direction.name;
    EXPECT_GT(std::abs(fd), 1.0) << direction.name << ": the carried camera should move the whole image";
  }
}

std::string refusal(const CameraSetup& setup) {
  try {
    render(setup);
  } catch (const Error& error) {
    return error.what();
  }
  return "(accepted)";
}

TEST(Camera, RefusesBadInputNamingTheItemAndValue) {
  const CameraSetup good = mixed_scene(9);
  auto with = [&](auto change) {
    CameraSetup setup = good;
    change(setup);
    return refusal(setup);
  };
  EXPECT_EQ(with([](CameraSetup& s) { s.camera.width = 0; }), "camera 'test': width must be ≥ 1 pixel, got 0");
  EXPECT_EQ(with([](CameraSetup& s) { s.camera.height = -3; }), "camera 'test': height must be ≥ 1 pixel, got -3");
  EXPECT_EQ(with([](CameraSetup& s) { s.camera.vertical_fov = 0.0; }),
            "camera 'test': vertical field of view must be in (0, 180) degrees, got 0 degrees (0 rad)");
  EXPECT_EQ(
      with([](CameraSetup& s) { s.camera.vertical_fov = kPi; }),
      "camera 'test': vertical field of view must be in (0, 180) degrees, got 180 degrees (3.141592653589793 rad)");
  EXPECT_EQ(with([](CameraSetup& s) { s.camera.vertical_fov = -0.5; }).rfind("camera 'test': vertical field", 0), 0u);
  EXPECT_EQ(with([](CameraSetup& s) { s.camera.position.y = std::nan(""); }), "camera 'test': position is not finite");
  EXPECT_EQ(with([](CameraSetup& s) {
              s.camera.orientation = Quat{1, 1, 0, 0};
            }),
            "camera 'test': orientation is not a unit quaternion (norm² 2)");
  EXPECT_EQ(with([](CameraSetup& s) { s.camera.body = 9; }),
            "camera 'test': body index 9 is not a body of model 'scene' (6 bodies; -1 for the world)");
  // Inside a shape: which one, and how deep.
  EXPECT_EQ(with([](CameraSetup& s) {
              s.camera.position = s.scene.state.position[1] + Vec3{0.1, 0, 0};
            }).rfind("camera 'test' is inside sphere 'ball' (depth 0.", 0),
            0u);
  EXPECT_EQ(with([](CameraSetup& s) {
              s.camera.position = s.scene.state.position[2];
            }).rfind("camera 'test' is inside box 'crate'", 0),
            0u);
  EXPECT_EQ(with([](CameraSetup& s) {
              s.camera.position = {2.6, -1.7, -0.25};
            }),
            "camera 'test' is inside plane 'ground' (below it by 0.25 m)");
  EXPECT_EQ(with([](CameraSetup& s) { s.scene.state.position[3].z = INFINITY; }),
            "body 'pole': position is not finite");
  EXPECT_EQ(with([](CameraSetup& s) { s.appearance.shapes[1].texture = 0; }),
            "shape 'ball': textures are mapped on planes only, this is a sphere");
  EXPECT_EQ(with([](CameraSetup& s) { s.appearance.shapes[0].texture = 3; }),
            "shape 'ground': texture index 3 is not one of the 1 textures (-1 for none)");
  EXPECT_EQ(with([](CameraSetup& s) { s.appearance.textures[0].texels.pop_back(); }),
            "texture 0: has 59 values, 5 × 4 × 3 expected");
  EXPECT_EQ(with([](CameraSetup& s) { s.appearance.shapes.pop_back(); }),
            "appearance has 5 shape looks, the model 'scene' has 6 shapes");
  EXPECT_EQ(with([](CameraSetup& s) {
              s.scene.params.values[static_cast<std::size_t>(s.scene.model.layout.shape_size[1])] = -0.3;
            }),
            "shape 'ball': size 0 must be positive for the camera, got -0.3");
  // A gradient image of the wrong size.
  CameraRenderer renderer(good.scene.model, good.camera, good.appearance);
  CameraImage wrong;
  wrong.depth.assign(7, 0.0);
  CameraGradients gradients;
  try {
    renderer.backward(good.scene.params, good.scene.state, wrong, gradients);
    ADD_FAILURE() << "accepted a depth gradient of 7 values";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "camera 'test': the depth gradient has 7 values, 1728 expected (height × width)");
  }
}

// The checker's cells, texel by texel, and the look-at frame's axes.
TEST(Camera, CheckerTextureAndLookAtAreWhatTheySay) {
  const Texture checker = checker_texture(2, 3, {1, 0, 0}, {0, 0, 1});
  ASSERT_EQ(checker.width, 6);
  ASSERT_EQ(checker.height, 6);
  for (int row = 0; row < 6; ++row)
    for (int column = 0; column < 6; ++column) {
      const bool odd = (row / 3 + column / 3) % 2 == 1;
      const std::size_t at = static_cast<std::size_t>((row * 6 + column) * 3);
      EXPECT_EQ(checker.texels[at], odd ? 0.0 : 1.0) << row << ", " << column;
      EXPECT_EQ(checker.texels[at + 2], odd ? 1.0 : 0.0) << row << ", " << column;
    }
  const Quat q = camera_look_at({1, 2, 3}, {1, 5, 3}, {0, 0, 1});  // along +y, z up
  const Vec3 forward = q.rotate({0, 0, 1}), right = q.rotate({1, 0, 0}), down = q.rotate({0, 1, 0});
  EXPECT_NEAR(norm(forward - Vec3{0, 1, 0}), 0.0, 1e-15);
  EXPECT_NEAR(norm(right - Vec3{1, 0, 0}), 0.0, 1e-15);
  EXPECT_NEAR(norm(down - Vec3{0, 0, -1}), 0.0, 1e-15);
  auto refusal_of = [](auto call) {
    try {
      call();
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(refusal_of([] {
              camera_look_at({1, 1, 1}, {1, 1, 1});
            }),
            "camera_look_at: eye and target are the same point");
  EXPECT_EQ(refusal_of([] {
              camera_look_at({0, 0, 0}, {0, 0, 2}, {0, 0, 1});
            }),
            "camera_look_at: up is parallel to the viewing direction (or zero)");
  EXPECT_EQ(refusal_of([] { checker_texture(0, 4, {}, {}); }),
            "checker_texture: cells and texels_per_cell must be ≥ 1, got 0 and 4");
}

// set_camera and set_appearance between frames give what a new renderer gives.
TEST(Camera, ChangingCameraAndLookBetweenFramesMatchesANewRenderer) {
  CameraSetup setup = mixed_scene(10);
  CameraRenderer renderer(setup.scene.model, setup.camera, setup.appearance, 2);
  CameraImage first, second;
  renderer.render(setup.scene.params, setup.scene.state, first);
  setup.camera.position.z += 0.2;
  setup.camera.height = 30;
  setup.appearance.shapes[1].colour = {0.1, 0.9, 0.9};
  renderer.set_camera(setup.camera);
  renderer.set_appearance(setup.appearance);
  renderer.render(setup.scene.params, setup.scene.state, second);
  const CameraImage fresh = render(setup);
  ASSERT_EQ(second.colour.size(), fresh.colour.size());
  EXPECT_EQ(std::memcmp(second.colour.data(), fresh.colour.data(), fresh.colour.size() * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(second.depth.data(), fresh.depth.data(), fresh.depth.size() * sizeof(double)), 0);
  setup.camera.width = 0;
  EXPECT_THROW(renderer.set_camera(setup.camera), Error);
}

TEST(Camera, RefusesTexturesThatDoNotLoad) {
  const std::filesystem::path missing = std::filesystem::temp_directory_path() / "diffphys_camera_no_such.png";
  std::filesystem::remove(missing);
  try {
    viewer::load_texture(missing);
    ADD_FAILURE() << "a missing texture loaded";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()).rfind(missing.string() + ": cannot read the PNG file", 0), 0u) << error.what();
  }
  const std::filesystem::path not_png = std::filesystem::temp_directory_path() / "diffphys_camera_not_a.png";
  std::ofstream(not_png) << "not a PNG";
  try {
    viewer::load_texture(not_png);
    ADD_FAILURE() << "a text file loaded as a texture";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()).rfind(not_png.string() + ": cannot read the PNG file", 0), 0u) << error.what();
  }
  std::filesystem::remove(not_png);
  // And one that does load comes back texel for texel (through write_camera_png).
  CameraImage image;
  image.width = 3;
  image.height = 2;
  for (int i = 0; i < 18; ++i) image.colour.push_back(i / 17.0);
  const std::filesystem::path written = std::filesystem::temp_directory_path() / "diffphys_camera_texture.png";
  viewer::write_camera_png(written, image);
  const Texture texture = viewer::load_texture(written);
  std::filesystem::remove(written);
  ASSERT_EQ(texture.width, 3);
  ASSERT_EQ(texture.height, 2);
  for (int i = 0; i < 18; ++i) EXPECT_NEAR(texture.texels[static_cast<std::size_t>(i)], i / 17.0, 0.5 / 255.0);
}

}  // namespace
