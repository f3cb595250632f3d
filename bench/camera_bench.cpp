// bench/camera_bench.cpp — owns the camera benchmarks (`diffphys_camera_bench`): frames per
// second of CameraRenderer::render and ::backward at 288 × 96 (Degrave et al. 2019 §3.4's
// pendulum-cart frames) on a pendulum-on-cart scene — a box cart, a capsule pole leaning
// 0.3 rad, a checkered ground plane — seen from the side, on 1 and 2 threads.
//
//   BM_CameraRender/<threads>     one frame, colour and depth
//   BM_CameraBackward/<threads>   one backward pass (dL/d image of every pixel nonzero), which
//                                 recomputes the frame's hits: backward/forward = its time
//                                 over BM_CameraRender's
// Wall-clock times (UseRealTime: the pool's worker thread does half of the work); the "fps"
// counter is frames per second. docs/camera.md ("Speed") records a run.
#include <benchmark/benchmark.h>

#include <cmath>

#include "diffphys/camera.hpp"
#include "diffphys/model_builder.hpp"

namespace {

using namespace diffphys;

struct CartScene {
  Scene scene;
  Camera camera;
  Appearance appearance;
};

CartScene pendulum_cart() {
  ModelBuilder builder;
  builder.add_ground_plane();
  BodySpec cart;
  cart.name = "cart";
  cart.position = {0.1, 0.0, 0.1};
  ShapeSpec box;
  box.name = "cart";
  box.type = ShapeType::Box;
  box.half_extents = {0.25, 0.15, 0.08};
  cart.shapes.push_back(box);
  builder.add_body(cart);
  BodySpec pole;
  pole.name = "pole";
  const double lean = 0.3, half_length = 0.4;
  pole.position = {0.1 + half_length * std::sin(lean), 0.0, 0.18 + half_length * std::cos(lean)};
  pole.orientation = Quat::from_axis_angle({0, 1, 0}, lean);
  ShapeSpec capsule;
  capsule.name = "pole";
  capsule.type = ShapeType::Capsule;
  capsule.radius = 0.03;
  capsule.half_length = half_length;
  pole.shapes.push_back(capsule);
  builder.add_body(pole);
  CartScene result{builder.build(), Camera{}, Appearance{}};
  result.camera.name = "side";
  result.camera.width = 288;
  result.camera.height = 96;
  result.camera.vertical_fov = 30.0 * 3.14159265358979323846 / 180.0;
  result.camera.position = {0.0, -3.2, 0.45};
  result.camera.orientation = camera_look_at(result.camera.position, {0.0, 0.0, 0.35});
  result.camera.far_depth = 30.0;
  result.appearance = default_appearance(result.scene.model);
  result.appearance.textures.push_back(checker_texture(2, 8, {0.8, 0.8, 0.8}, {0.4, 0.4, 0.4}));
  result.appearance.shapes[0].texture = 0;
  result.appearance.shapes[0].texture_size = 0.5;
  result.appearance.shapes[1].colour = {0.8, 0.3, 0.2};
  result.appearance.shapes[2].colour = {0.2, 0.4, 0.9};
  result.appearance.background = {0.6, 0.75, 0.95};
  return result;
}

void BM_CameraRender(benchmark::State& state) {
  const CartScene cart = pendulum_cart();
  CameraRenderer renderer(cart.scene.model, cart.camera, cart.appearance, static_cast<int>(state.range(0)));
  CameraImage image;
  renderer.render(cart.scene.params, cart.scene.state, image);
  for (auto _ : state) {
    renderer.render(cart.scene.params, cart.scene.state, image);
    benchmark::DoNotOptimize(image.colour.data());
  }
  state.counters["fps"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_CameraBackward(benchmark::State& state) {
  const CartScene cart = pendulum_cart();
  CameraRenderer renderer(cart.scene.model, cart.camera, cart.appearance, static_cast<int>(state.range(0)));
  CameraImage image;
  renderer.render(cart.scene.params, cart.scene.state, image);
  CameraImage cotangent = image;  // a loss touching every pixel: L = Σ ½ image²
  CameraGradients gradients;
  renderer.backward(cart.scene.params, cart.scene.state, cotangent, gradients);
  for (auto _ : state) {
    renderer.backward(cart.scene.params, cart.scene.state, cotangent, gradients);
    benchmark::DoNotOptimize(gradients.state.data());
  }
  state.counters["fps"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_CameraRender)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CameraBackward)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
