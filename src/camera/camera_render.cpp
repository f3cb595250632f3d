// camera/camera_render.cpp — CameraRenderer (camera.hpp): the per-pixel forward pass (rays,
// soft coverage, shading, texture, front-to-back compositing) and its exact reverse-mode
// twin, run over fixed bands of rows on a thread pool.
//
// One pixel, forward (docs/camera.md gives the same as equations):
//   d = R_WC d_C/|d_C|, d_C = ((i + ½ − W/2)/f, (j + ½ − H/2)/f, 1)
//   per shape k hit by the ray: s_k = f|d_C| g_k/|o − c_k| (plane: (far − t_k)/(0.05 far)), α_k = A(s_k),
//   colour c_k = albedo_k ⊙ (ambient + diffuse·max(0, −n_k·l)), depth t_k;
//   sorted by t_k: C = Σ_k T_k α_k c_k + T_n background, D = Σ_k T_k α_k t_k + T_n far,
//   T_k = Π_{j<k} (1 − α_j).
// A(s) = ∫ tent: 0 (s ≤ 0), s²/2 (s ≤ 1), 1 − (2 − s)²/2 (s ≤ 2), 1 — C¹, and its integer
// shifts sum to the identity's increments (the tent is a partition of unity), so a straight
// edge's coverage sums to its area exactly.
//
// Backward recomputes each pixel's hits rather than storing them (a pixel's state is a few
// hundred bytes per shape) and accumulates per band; bands are summed in band order, so the
// result does not depend on how many threads ran them.
#include <algorithm>
#include <cmath>
#include <functional>

#include "batch/thread_pool.hpp"
#include "camera/camera_setup.hpp"
#include "camera/shape_rays.hpp"
#include "diffphys/camera.hpp"
#include "diffphys/error.hpp"
#include "diffphys/params.hpp"
#include "diffphys/state.hpp"

namespace diffphys {
namespace camera {
namespace {

constexpr int kMaxBands = 32;
// A plane's coverage falls from 1 to 0 over this fraction of far_depth before it.
constexpr double kPlaneFade = 0.05;

double coverage(double s) {
  if (s <= 0.0) return 0.0;
  if (s <= 1.0) return 0.5 * s * s;
  if (s < 2.0) return 1.0 - 0.5 * (2.0 - s) * (2.0 - s);
  return 1.0;
}
double coverage_slope(double s) {
  if (s <= 0.0 || s >= 2.0) return 0.0;
  return s <= 1.0 ? s : 2.0 - s;
}

Vec3 hadamard(const Vec3& a, const Vec3& b) {
  return {a.x * b.x, a.y * b.y, a.z * b.z};
}

// Where one pixel's bilinear sample reads a texture: four texel offsets and the fractions.
struct TexelSample {
  std::size_t index[4];  // (j0,i0), (j0,i1), (j1,i0), (j1,i1), each × 3
  double fx, fy;
};

TexelSample locate(const Texture& texture, double u, double v) {
  // Texel (i, j) is centred at ((i + ½)/W, (j + ½)/H) of a repeat; coordinates wrap.
  const double x = u * texture.width - 0.5, y = v * texture.height - 0.5;
  const double x0 = std::floor(x), y0 = std::floor(y);
  auto wrap = [](double value, int size) {  // value is an integer; its remainder in [0, size)
    const double remainder = value - size * std::floor(value / size);
    return std::clamp(static_cast<long>(remainder), 0L, static_cast<long>(size) - 1);
  };
  const long i0 = wrap(x0, texture.width), i1 = (i0 + 1) % texture.width;
  const long j0 = wrap(y0, texture.height), j1 = (j0 + 1) % texture.height;
  const long w = texture.width;
  TexelSample sample;
  sample.index[0] = static_cast<std::size_t>((j0 * w + i0) * 3);
  sample.index[1] = static_cast<std::size_t>((j0 * w + i1) * 3);
  sample.index[2] = static_cast<std::size_t>((j1 * w + i0) * 3);
  sample.index[3] = static_cast<std::size_t>((j1 * w + i1) * 3);
  sample.fx = x - x0;
  sample.fy = y - y0;
  return sample;
}

Vec3 texel(const Texture& texture, std::size_t index) {
  return {texture.texels[index], texture.texels[index + 1], texture.texels[index + 2]};
}

// One shape seen by one pixel.
struct Candidate {
  int shape = 0;
  ShapeRayHit hit;
  Vec3 origin, direction;  // the ray in the shape frame
  double s = 0.0, alpha = 0.0, scale_distance = 0.0;
  Vec3 normal;  // world
  Vec3 texture_value{1.0, 1.0, 1.0};
  TexelSample sample{};
  double shade = 0.0;
  Vec3 colour;  // shaded
};

// Gradients accumulated by one band of rows.
struct BandGradient {
  std::vector<Vec3> shape_position, shape_rotation;  // (nshape) dL/dc_k, dL/dδθ_k (world)
  std::vector<double> sizes;                         // (nshape × 3)
  std::vector<Vec3> colours;                         // (nshape)
  std::vector<std::vector<double>> textures;         // (ntexture)
  Vec3 camera_position, camera_rotation;
  double focal = 0.0;  // dL/df, per pixel of focal length
};

struct Band {
  std::vector<Candidate> candidates;  // (nshape) scratch
  BandGradient gradient;
};

}  // namespace
}  // namespace camera

using camera::Band;
using camera::BandGradient;
using camera::Candidate;
using camera::coverage;
using camera::coverage_slope;
using camera::hadamard;
using camera::kMaxBands;
using camera::kPlaneFade;
using camera::locate;
using camera::ShapeRayCotangent;
using camera::ShapeRayGradient;
using camera::texel;
using camera::TexelSample;

struct CameraRenderer::Impl {
  const Model* model = nullptr;
  Camera camera;
  Appearance appearance;
  Vec3 light;  // unit, direction the light travels
  batch::ThreadPool pool;
  std::vector<Band> bands;
  std::function<void(int)> render_band_body, backward_band_body;

  // The frame being rendered (set by prepare()).
  std::vector<Vec3> shape_position;  // (nshape) c_k, world
  std::vector<Mat3> shape_rotation;
  std::vector<double> shape_size;   // (nshape × 3)
  std::vector<double> shape_bound;  // (nshape)
  Vec3 eye;                         // camera centre o, world
  Mat3 camera_rotation;             // R_WC
  double focal = 1.0;
  CameraImage* image = nullptr;
  const CameraImage* image_gradient = nullptr;

  Impl(const Model& model_, const Camera& camera_, const Appearance& appearance_, int threads)
      : model(&model_), pool(threads) {
    set_camera(camera_);
    set_appearance(appearance_);
    const auto shapes = static_cast<std::size_t>(model_.shape_count());
    shape_position.resize(shapes);
    shape_rotation.resize(shapes);
    shape_size.assign(shapes * 3, 0.0);
    shape_bound.resize(shapes);
    render_band_body = [this](int band) { render_band(band); };
    backward_band_body = [this](int band) { backward_band(band); };
  }

  void set_camera(const Camera& camera_) {
    camera::check_camera(*model, camera_);
    camera = camera_;
    const int count = std::min(camera.height, kMaxBands);
    bands.resize(static_cast<std::size_t>(count));
    for (Band& band : bands) band.candidates.resize(static_cast<std::size_t>(model->shape_count()));
  }

  void set_appearance(const Appearance& appearance_) {
    camera::check_appearance(*model, appearance_);
    appearance = appearance_;
    light = normalized(appearance.light_direction);
  }

  // Shape k as the ray casts see it (its sizes of this frame).
  camera::RayTarget target(int k) const {
    const Shape& shape = model->shapes[static_cast<std::size_t>(k)];
    return {shape.type, &shape_size[static_cast<std::size_t>(k) * 3],
            shape.type == ShapeType::ConvexMesh ? &model->meshes[static_cast<std::size_t>(shape.mesh)] : nullptr};
  }

  int band_count() const { return static_cast<int>(bands.size()); }
  // Rows [first, last) of a band: the split depends on the height only.
  int band_row(int band) const { return static_cast<int>(static_cast<long>(camera.height) * band / band_count()); }

  // Poses, sizes and the camera of this frame; refuses a camera inside a shape.
  void prepare(const Params& params, const State& state) {
    validate_state(*model, state);
    if (params.values.size() != static_cast<std::size_t>(model->param_count()))
      throw Error(message("camera '", camera.name, "': params has ", params.values.size(), " values, the model '",
                          model->name, "' has ", model->param_count()));
    if (camera.body >= 0) {
      const auto b = static_cast<std::size_t>(camera.body);
      eye = state.position[b] + state.orientation[b].rotate(camera.position);
      camera_rotation = (state.orientation[b] * camera.orientation).to_matrix();
    } else {
      eye = camera.position;
      camera_rotation = camera.orientation.to_matrix();
    }
    focal = camera::focal_pixels(camera);
    for (int k = 0; k < model->shape_count(); ++k) {
      const auto ks = static_cast<std::size_t>(k);
      const Shape& shape = model->shapes[ks];
      const auto b = static_cast<std::size_t>(shape.body);
      shape_position[ks] = state.position[b] + state.orientation[b].rotate(shape.local_position);
      shape_rotation[ks] = (state.orientation[b] * shape.local_orientation).to_matrix();
      const int count = shape_size_count(shape.type);
      const int offset = count > 0 ? model->layout.shape_size[ks] : 0;
      for (int i = 0; i < count; ++i) {
        const double value = params.at(offset + i);
        if (!std::isfinite(value) || value <= 0.0)
          throw Error(message("shape '", shape.name, "': size ", i, " must be positive for the camera, got ", value));
        shape_size[ks * 3 + static_cast<std::size_t>(i)] = value;
      }
      shape_bound[ks] = camera::bounding_radius(target(k));
      const Vec3 eye_local = shape_rotation[ks].transpose_times(eye - shape_position[ks]);
      const double measure = camera::shape_inside_measure(target(k), eye_local);
      if (measure <= 0.0)
        throw Error(message("camera '", camera.name, "' is inside ", type_name(shape.type), " '", shape.name, "' (",
                            shape.type == ShapeType::Plane ? "below it by " : "depth ", -measure, " m)"));
    }
  }

  // The pixel's ray direction: d_C (unnormalised, z = 1), |d_C| and the world direction.
  void pixel_ray(int column, int row, Vec3& direction_camera, double& length, Vec3& direction) const {
    direction_camera = {(column + 0.5 - 0.5 * camera.width) / focal, (row + 0.5 - 0.5 * camera.height) / focal, 1.0};
    length = norm(direction_camera);
    direction = camera_rotation * (direction_camera / length);
  }

  // Every shape this pixel's ray sees with nonzero coverage, sorted front to back.
  int gather(const Vec3& direction, double length, std::vector<Candidate>& candidates) const {
    int count = 0;
    for (int k = 0; k < model->shape_count(); ++k) {
      const auto ks = static_cast<std::size_t>(k);
      const ShapeType type = model->shapes[ks].type;
      const Vec3 offset = shape_position[ks] - eye;
      if (type != ShapeType::Plane) {  // cull by the bounding sphere
        const double along = dot(offset, direction), bound = shape_bound[ks];
        if (along < -bound || squared_norm(offset) - along * along > bound * bound) continue;
      }
      Candidate& candidate = candidates[static_cast<std::size_t>(count)];
      candidate.shape = k;
      candidate.origin = shape_rotation[ks].transpose_times(-offset);
      candidate.direction = shape_rotation[ks].transpose_times(direction);
      if (!camera::ray_shape(target(k), candidate.origin, candidate.direction, candidate.hit)) continue;
      if (type == ShapeType::Plane) {  // fades out over the last 5 % before far_depth: no horizon edge
        candidate.scale_distance = 0.0;
        candidate.s = (camera.far_depth - candidate.hit.t) / (kPlaneFade * camera.far_depth);
      } else {
        candidate.scale_distance = norm(candidate.origin);  // |o − c_k|: the pixel scale's distance
        candidate.s = focal * length * candidate.hit.outline / candidate.scale_distance;
      }
      candidate.alpha = coverage(candidate.s);
      if (candidate.alpha <= 0.0) continue;
      const ShapeLook& look = appearance.shapes[ks];
      candidate.normal = shape_rotation[ks] * candidate.hit.normal;
      candidate.shade = appearance.ambient + appearance.diffuse * std::max(0.0, -dot(candidate.normal, light));
      candidate.texture_value = {1.0, 1.0, 1.0};
      if (look.texture >= 0) {
        const Texture& texture = appearance.textures[static_cast<std::size_t>(look.texture)];
        candidate.sample =
            locate(texture, candidate.hit.point.x / look.texture_size, candidate.hit.point.y / look.texture_size);
        const TexelSample& t = candidate.sample;
        candidate.texture_value =
            texel(texture, t.index[0]) * ((1 - t.fx) * (1 - t.fy)) + texel(texture, t.index[1]) * (t.fx * (1 - t.fy)) +
            texel(texture, t.index[2]) * ((1 - t.fx) * t.fy) + texel(texture, t.index[3]) * (t.fx * t.fy);
      }
      candidate.colour = hadamard(look.colour, candidate.texture_value) * candidate.shade;
      ++count;
    }
    // Insertion sort by depth (a handful of entries); ties keep the shape order.
    for (int a = 1; a < count; ++a)
      for (int b = a;
           b > 0 && candidates[static_cast<std::size_t>(b)].hit.t < candidates[static_cast<std::size_t>(b - 1)].hit.t;
           --b)
        std::swap(candidates[static_cast<std::size_t>(b)], candidates[static_cast<std::size_t>(b - 1)]);
    return count;
  }

  void render_band(int band) {
    std::vector<Candidate>& candidates = bands[static_cast<std::size_t>(band)].candidates;
    for (int row = band_row(band); row < band_row(band + 1); ++row)
      for (int column = 0; column < camera.width; ++column) {
        Vec3 direction_camera, direction;
        double length = 0.0;
        pixel_ray(column, row, direction_camera, length, direction);
        const int count = gather(direction, length, candidates);
        Vec3 colour;
        double depth = 0.0, transmittance = 1.0;
        for (int k = 0; k < count; ++k) {
          const Candidate& candidate = candidates[static_cast<std::size_t>(k)];
          colour += candidate.colour * (transmittance * candidate.alpha);
          depth += transmittance * candidate.alpha * candidate.hit.t;
          transmittance *= 1.0 - candidate.alpha;
        }
        colour += appearance.background * transmittance;
        depth += transmittance * camera.far_depth;
        const auto pixel = static_cast<std::size_t>(row * camera.width + column);
        for (int c = 0; c < 3; ++c) image->colour[pixel * 3 + static_cast<std::size_t>(c)] = colour[c];
        image->depth[pixel] = depth;
      }
  }

  void backward_band(int band) {
    Band& scratch = bands[static_cast<std::size_t>(band)];
    std::vector<Candidate>& candidates = scratch.candidates;
    BandGradient& gradient = scratch.gradient;
    const bool has_colour = !image_gradient->colour.empty(), has_depth = !image_gradient->depth.empty();
    for (int row = band_row(band); row < band_row(band + 1); ++row)
      for (int column = 0; column < camera.width; ++column) {
        const auto pixel = static_cast<std::size_t>(row * camera.width + column);
        Vec3 colour_bar;
        if (has_colour)
          colour_bar = {image_gradient->colour[pixel * 3], image_gradient->colour[pixel * 3 + 1],
                        image_gradient->colour[pixel * 3 + 2]};
        const double depth_bar = has_depth ? image_gradient->depth[pixel] : 0.0;
        if (colour_bar == Vec3{} && depth_bar == 0.0) continue;
        Vec3 direction_camera, direction;
        double length = 0.0;
        pixel_ray(column, row, direction_camera, length, direction);
        const int count = gather(direction, length, candidates);
        if (count == 0) continue;
        // Behind-colour B_k and behind-depth of each layer, back to front:
        // B_{n−1} = background, B_{k−1} = α_k c_k + (1 − α_k) B_k; ∂C/∂α_k = T_k (c_k − B_k).
        Vec3 behind_colour = appearance.background;
        double behind_depth = camera.far_depth;
        Vec3 direction_bar;
        double length_bar = 0.0;
        for (int k = count - 1; k >= 0; --k) {
          const Candidate& candidate = candidates[static_cast<std::size_t>(k)];
          // T_k = Π_{j<k} (1 − α_j), recomputed front to back: no division by 1 − α.
          double front = 1.0;
          for (int j = 0; j < k; ++j) front *= 1.0 - candidates[static_cast<std::size_t>(j)].alpha;
          const double alpha_bar = front * (dot(colour_bar, candidate.colour - behind_colour) +
                                            depth_bar * (candidate.hit.t - behind_depth));
          const Vec3 shaded_bar = colour_bar * (front * candidate.alpha);
          const double t_bar = depth_bar * front * candidate.alpha;
          accumulate_candidate(candidate, alpha_bar, shaded_bar, t_bar, direction, length, gradient, direction_bar,
                               length_bar);
          behind_colour = candidate.colour * candidate.alpha + behind_colour * (1.0 - candidate.alpha);
          behind_depth = candidate.alpha * candidate.hit.t + (1.0 - candidate.alpha) * behind_depth;
        }
        // The pixel's ray: d = R_WC d_C/|d_C| with d_C(f), and |d_C| in the scale.
        gradient.camera_rotation += cross(direction, direction_bar);
        const Vec3 unit_camera = direction_camera / length;
        const Vec3 unit_bar = camera_rotation.transpose_times(direction_bar);
        const Vec3 direction_camera_bar =
            (unit_bar - unit_camera * dot(unit_camera, unit_bar)) / length + unit_camera * length_bar;
        const Vec3 d_direction_camera_d_focal{-direction_camera.x / focal, -direction_camera.y / focal, 0.0};
        gradient.focal += dot(direction_camera_bar, d_direction_camera_d_focal);
      }
  }

  // Pulls one layer's cotangents (coverage, shaded colour, depth) back to its shape, the
  // appearance and the pixel's ray.
  void accumulate_candidate(const Candidate& candidate, double alpha_bar, const Vec3& shaded_bar, double t_bar,
                            const Vec3& direction, double length, BandGradient& gradient, Vec3& direction_bar,
                            double& length_bar) const {
    const auto ks = static_cast<std::size_t>(candidate.shape);
    const ShapeType type = model->shapes[ks].type;
    const ShapeLook& look = appearance.shapes[ks];
    ShapeRayCotangent cotangent;
    ShapeRayGradient local;
    cotangent.t = t_bar;
    // α = A(s), s = f |d_C| g / ρ (ρ = |o_L| = |o − c_k|); plane: s = (far − t)/(0.05 far).
    const double s_bar = alpha_bar * coverage_slope(candidate.s);
    if (s_bar != 0.0 && type == ShapeType::Plane) {
      cotangent.t -= s_bar / (kPlaneFade * camera.far_depth);
    } else if (s_bar != 0.0) {
      cotangent.outline = s_bar * focal * length / candidate.scale_distance;
      gradient.focal += s_bar * candidate.s / focal;
      length_bar += s_bar * candidate.s / length;
      local.origin += candidate.origin * (-s_bar * candidate.s / (candidate.scale_distance * candidate.scale_distance));
    }
    // colour = (colour_k ⊙ texture) · shade, shade = ambient + diffuse max(0, −n·l).
    const Vec3 albedo = hadamard(look.colour, candidate.texture_value);
    const Vec3 albedo_bar = shaded_bar * candidate.shade;
    const double shade_bar = dot(shaded_bar, albedo);
    Vec3 normal_bar;
    if (-dot(candidate.normal, light) > 0.0) normal_bar = light * (-appearance.diffuse * shade_bar);
    gradient.colours[ks] += hadamard(albedo_bar, candidate.texture_value);
    if (look.texture >= 0) {
      const Texture& texture = appearance.textures[static_cast<std::size_t>(look.texture)];
      std::vector<double>& texels_bar = gradient.textures[static_cast<std::size_t>(look.texture)];
      const Vec3 value_bar = hadamard(albedo_bar, look.colour);
      const TexelSample& t = candidate.sample;
      const double weight[4] = {(1 - t.fx) * (1 - t.fy), t.fx * (1 - t.fy), (1 - t.fx) * t.fy, t.fx * t.fy};
      for (int corner = 0; corner < 4; ++corner)
        for (int c = 0; c < 3; ++c)
          texels_bar[t.index[corner] + static_cast<std::size_t>(c)] += weight[corner] * value_bar[c];
      const Vec3 t00 = texel(texture, t.index[0]), t10 = texel(texture, t.index[1]);
      const Vec3 t01 = texel(texture, t.index[2]), t11 = texel(texture, t.index[3]);
      const double fx_bar = dot(value_bar, (t10 - t00) * (1 - t.fy) + (t11 - t01) * t.fy);
      const double fy_bar = dot(value_bar, (t01 - t00) * (1 - t.fx) + (t11 - t10) * t.fx);
      cotangent.point.x += fx_bar * texture.width / look.texture_size;
      cotangent.point.y += fy_bar * texture.height / look.texture_size;
    }
    // n = R_k n_L: n̄_L = R_kᵀ n̄, and the rotation δθ turns n by δθ × n.
    const Mat3& rotation = shape_rotation[ks];
    cotangent.normal = rotation.transpose_times(normal_bar);
    gradient.shape_rotation[ks] += cross(candidate.normal, normal_bar);
    camera::ray_shape_vjp(target(candidate.shape), candidate.origin, candidate.direction, candidate.hit, cotangent,
                          local);
    for (int i = 0; i < 3; ++i) gradient.sizes[ks * 3 + static_cast<std::size_t>(i)] += local.size[i];
    // o_L = R_kᵀ (o − c_k), d_L = R_kᵀ d.
    const Vec3 origin_bar = rotation * local.origin, local_direction_bar = rotation * local.direction;
    const Vec3 offset = eye - shape_position[ks];
    gradient.shape_position[ks] -= origin_bar;
    gradient.shape_rotation[ks] += cross(origin_bar, offset) + cross(local_direction_bar, direction);
    gradient.camera_position += origin_bar;
    direction_bar += local_direction_bar;
  }

  void clear_band_gradients() {
    const auto shapes = static_cast<std::size_t>(model->shape_count());
    for (Band& band : bands) {
      BandGradient& g = band.gradient;
      g.shape_position.assign(shapes, Vec3{});
      g.shape_rotation.assign(shapes, Vec3{});
      g.sizes.assign(shapes * 3, 0.0);
      g.colours.assign(shapes, Vec3{});
      g.textures.resize(appearance.textures.size());
      for (std::size_t t = 0; t < appearance.textures.size(); ++t)
        g.textures[t].assign(appearance.textures[t].texels.size(), 0.0);
      g.camera_position = g.camera_rotation = Vec3{};
      g.focal = 0.0;
    }
  }
};

CameraRenderer::CameraRenderer(const Model& model, const Camera& camera, const Appearance& appearance, int threads)
    : impl_(std::make_unique<Impl>(model, camera, appearance, threads)) {}
CameraRenderer::~CameraRenderer() = default;

const Camera& CameraRenderer::camera() const {
  return impl_->camera;
}
const Appearance& CameraRenderer::appearance() const {
  return impl_->appearance;
}
void CameraRenderer::set_camera(const Camera& camera) {
  impl_->set_camera(camera);
}
void CameraRenderer::set_appearance(const Appearance& appearance) {
  impl_->set_appearance(appearance);
}

void CameraRenderer::render(const Params& params, const State& state, CameraImage& image) {
  Impl& impl = *impl_;
  impl.prepare(params, state);
  const auto pixels = static_cast<std::size_t>(impl.camera.width) * static_cast<std::size_t>(impl.camera.height);
  image.width = impl.camera.width;
  image.height = impl.camera.height;
  image.colour.resize(pixels * 3);
  image.depth.resize(pixels);
  impl.image = &image;
  impl.pool.parallel_for(impl.band_count(), impl.render_band_body);
  impl.image = nullptr;
}

void CameraRenderer::backward(const Params& params, const State& state, const CameraImage& image_gradient,
                              CameraGradients& gradients) {
  Impl& impl = *impl_;
  const Model& model = *impl.model;
  const auto pixels = static_cast<std::size_t>(impl.camera.width) * static_cast<std::size_t>(impl.camera.height);
  if (!image_gradient.colour.empty() && image_gradient.colour.size() != pixels * 3)
    throw Error(message("camera '", impl.camera.name, "': the colour gradient has ", image_gradient.colour.size(),
                        " values, ", pixels * 3, " expected (height × width × 3)"));
  if (!image_gradient.depth.empty() && image_gradient.depth.size() != pixels)
    throw Error(message("camera '", impl.camera.name, "': the depth gradient has ", image_gradient.depth.size(),
                        " values, ", pixels, " expected (height × width)"));
  impl.prepare(params, state);
  impl.clear_band_gradients();
  impl.image_gradient = &image_gradient;
  impl.pool.parallel_for(impl.band_count(), impl.backward_band_body);
  impl.image_gradient = nullptr;

  // Sum the bands in band order (the same bits for any thread count).
  const auto shapes = static_cast<std::size_t>(model.shape_count());
  BandGradient& total = impl.bands[0].gradient;
  for (std::size_t b = 1; b < impl.bands.size(); ++b) {
    const BandGradient& band = impl.bands[b].gradient;
    for (std::size_t k = 0; k < shapes; ++k) {
      total.shape_position[k] += band.shape_position[k];
      total.shape_rotation[k] += band.shape_rotation[k];
      total.colours[k] += band.colours[k];
    }
    for (std::size_t i = 0; i < total.sizes.size(); ++i) total.sizes[i] += band.sizes[i];
    for (std::size_t t = 0; t < total.textures.size(); ++t)
      for (std::size_t i = 0; i < total.textures[t].size(); ++i) total.textures[t][i] += band.textures[t][i];
    total.camera_position += band.camera_position;
    total.camera_rotation += band.camera_rotation;
    total.focal += band.focal;
  }

  gradients.state.assign(static_cast<std::size_t>(model.body_count()) * 12, 0.0);
  gradients.params.assign(static_cast<std::size_t>(model.param_count()), 0.0);
  auto add_body = [&](int body, const Vec3& position_bar, const Vec3& rotation_bar) {
    const auto row = static_cast<std::size_t>(body) * 12;
    for (int i = 0; i < 3; ++i) {
      gradients.state[row + static_cast<std::size_t>(i)] += position_bar[i];
      gradients.state[row + 3 + static_cast<std::size_t>(i)] += rotation_bar[i];
    }
  };
  for (std::size_t k = 0; k < shapes; ++k) {
    // c_k = p_b + R_b ℓ_k, R_k = R_b R_ℓ: δθ_b moves c_k by δθ_b × (c_k − p_b) and turns R_k.
    const Shape& shape = model.shapes[k];
    const Vec3 lever = impl.shape_position[k] - state.position[static_cast<std::size_t>(shape.body)];
    add_body(shape.body, total.shape_position[k], total.shape_rotation[k] + cross(lever, total.shape_position[k]));
    const int count = shape_size_count(shape.type);
    for (int i = 0; i < count; ++i)
      gradients.params[static_cast<std::size_t>(model.layout.shape_size[k] + i)] +=
          total.sizes[k * 3 + static_cast<std::size_t>(i)];
  }
  gradients.camera_position = total.camera_position;
  gradients.camera_rotation = total.camera_rotation;
  gradients.vertical_fov = total.focal * camera::focal_pixels_per_fov(impl.camera);
  if (impl.camera.body >= 0) {
    const Vec3 lever = impl.eye - state.position[static_cast<std::size_t>(impl.camera.body)];
    add_body(impl.camera.body, total.camera_position, total.camera_rotation + cross(lever, total.camera_position));
  }
  gradients.colours = total.colours;
  gradients.textures = total.textures;
}

}  // namespace diffphys
