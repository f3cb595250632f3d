// viewer/raster.cpp — the software rasteriser (viewer/raster.hpp): near-plane clipping,
// projection, edge-function scan conversion with a 1/z depth buffer, Lambert shading.
#include "raster.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace diffphys::viewer {
namespace {

Vec3 lerp(const Vec3& a, const Vec3& b, double t) {
  return a + t * (b - a);
}

// A colour channel in [0, 255], rounded; 0 for a negative value or NaN.
std::uint8_t channel(double value) {
  return value >= 0 ? static_cast<std::uint8_t>(std::lround(std::min(value, 255.0))) : 0;
}

}  // namespace

Image::Image(int width_in, int height_in, Rgb fill)
    : width(width_in),
      height(height_in),
      pixels(static_cast<std::size_t>(width_in) * static_cast<std::size_t>(height_in) * 3) {
  for (std::size_t at = 0; at < pixels.size(); at += 3) {
    pixels[at] = fill.red;
    pixels[at + 1] = fill.green;
    pixels[at + 2] = fill.blue;
  }
}

Rgb Image::at(int column, int row) const {
  const std::size_t at =
      3 * (static_cast<std::size_t>(row) * static_cast<std::size_t>(width) + static_cast<std::size_t>(column));
  return {pixels[at], pixels[at + 1], pixels[at + 2]};
}

void Image::set(int column, int row, Rgb colour) {
  const std::size_t at =
      3 * (static_cast<std::size_t>(row) * static_cast<std::size_t>(width) + static_cast<std::size_t>(column));
  pixels[at] = colour.red;
  pixels[at + 1] = colour.green;
  pixels[at + 2] = colour.blue;
}

Image downsample(const Image& source, int factor) {
  if (factor < 1 || source.width % factor != 0 || source.height % factor != 0)
    throw std::invalid_argument("downsample: the image's sizes must be multiples of the factor");
  Image result(source.width / factor, source.height / factor, Rgb{});
  const double samples = static_cast<double>(factor) * factor;
  for (int row = 0; row < result.height; ++row) {
    for (int column = 0; column < result.width; ++column) {
      double sum[3] = {0, 0, 0};
      for (int r = 0; r < factor; ++r) {
        for (int c = 0; c < factor; ++c) {
          const Rgb sample = source.at(factor * column + c, factor * row + r);
          sum[0] += sample.red;
          sum[1] += sample.green;
          sum[2] += sample.blue;
        }
      }
      result.set(column, row, {channel(sum[0] / samples), channel(sum[1] / samples), channel(sum[2] / samples)});
    }
  }
  return result;
}

// A corner in camera space (x right, y up, z along the view) with its world position and
// normal, which are interpolated across the triangle.
struct Rasteriser::CameraPoint {
  Vec3 camera;
  Vec3 world;
  Vec3 normal;
};

Rasteriser::Rasteriser(int width, int height, const Camera& camera, Rgb background, const Lighting& lighting)
    : camera_(camera), lighting_(lighting) {
  if (width < 1 || height < 1) throw std::invalid_argument("Rasteriser: width and height must be positive");
  if (!(camera.vertical_fov_degrees > 0 && camera.vertical_fov_degrees < 180) || !(camera.near > 0))
    throw std::invalid_argument("Rasteriser: the field of view must be in (0, 180) degrees and near > 0");
  const Vec3 view = camera.target - camera.eye;
  if (!(norm(view) > 0)) throw std::invalid_argument("Rasteriser: the camera's eye and target are the same point");
  forward_ = (1.0 / norm(view)) * view;
  Vec3 up = camera.up;
  if (!(norm(cross(forward_, up)) > 1e-9 * norm(up))) up = {0, 1, 0};  // looking straight along the up axis
  if (!(norm(cross(forward_, up)) > 1e-9)) up = {1, 0, 0};
  const Vec3 right = cross(forward_, up);
  right_ = (1.0 / norm(right)) * right;
  up_ = cross(right_, forward_);
  focal_ = 0.5 * height / std::tan(0.5 * camera.vertical_fov_degrees * std::numbers::pi / 180.0);
  const double light_length = norm(lighting.towards_light);
  light_direction_ = light_length > 0 ? (1.0 / light_length) * lighting.towards_light : Vec3{0, 0, 1};
  image_ = Image(width, height, background);
  inverse_depth_.assign(static_cast<std::size_t>(width) * static_cast<std::size_t>(height), 0.0f);
}

Vec3 Rasteriser::to_camera(const Vec3& world) const {
  const Vec3 d = world - camera_.eye;
  return {dot(d, right_), dot(d, up_), dot(d, forward_)};
}

void Rasteriser::draw_triangle(const std::array<Vec3, 3>& corners, const Paint& paint) {
  const Vec3 face = cross(corners[1] - corners[0], corners[2] - corners[0]);
  draw_triangle(corners, {face, face, face}, paint);
}

void Rasteriser::draw_triangle(const std::array<Vec3, 3>& corners, const std::array<Vec3, 3>& normals,
                               const Paint& paint) {
  const Vec3 face = cross(corners[1] - corners[0], corners[2] - corners[0]);
  // Sutherland–Hodgman against the near plane: a triangle becomes at most a quadrilateral.
  std::array<CameraPoint, 3> in;
  for (std::size_t k = 0; k < 3; ++k) {
    const Vec3 normal = norm(normals[k]) > 0 ? normals[k] : face;
    in[k] = {to_camera(corners[k]), corners[k], normal};
  }
  std::array<CameraPoint, 4> kept;
  int count = 0;
  const double near = camera_.near;
  for (std::size_t k = 0; k < 3; ++k) {
    const CameraPoint& a = in[k];
    const CameraPoint& b = in[(k + 1) % 3];
    const bool a_inside = a.camera[2] >= near, b_inside = b.camera[2] >= near;
    if (a_inside) kept[static_cast<std::size_t>(count++)] = a;
    if (a_inside != b_inside) {
      const double t = (near - a.camera[2]) / (b.camera[2] - a.camera[2]);
      kept[static_cast<std::size_t>(count++)] = {lerp(a.camera, b.camera, t), lerp(a.world, b.world, t),
                                                 lerp(a.normal, b.normal, t)};
    }
  }
  for (int k = 1; k + 1 < count; ++k)
    fill_clipped(kept[0], kept[static_cast<std::size_t>(k)], kept[static_cast<std::size_t>(k + 1)], paint);
}

void Rasteriser::fill_clipped(const CameraPoint& a, const CameraPoint& b, const CameraPoint& c, const Paint& paint) {
  const std::array<const CameraPoint*, 3> corner{&a, &b, &c};
  double x[3], y[3], inverse_z[3];
  const double half_width = 0.5 * image_.width, half_height = 0.5 * image_.height;
  for (std::size_t k = 0; k < 3; ++k) {
    inverse_z[k] = 1.0 / corner[k]->camera[2];
    x[k] = half_width + focal_ * corner[k]->camera[0] * inverse_z[k];
    y[k] = half_height - focal_ * corner[k]->camera[1] * inverse_z[k];
  }
  const double area = (x[1] - x[0]) * (y[2] - y[0]) - (x[2] - x[0]) * (y[1] - y[0]);
  if (!(std::abs(area) > 1e-12)) return;  // edge-on (or NaN)
  if (!std::isfinite(x[0] + x[1] + x[2] + y[0] + y[1] + y[2])) return;
  // The pixels whose centres may be inside, clamped to the image (in double: a corner just past
  // the near plane may land far outside any int).
  const auto clamped = [](double value, int last) {
    return static_cast<int>(std::clamp(value, 0.0, static_cast<double>(last)));
  };
  const int column_begin = clamped(std::floor(std::min({x[0], x[1], x[2]}) - 0.5), image_.width - 1);
  const int column_end = clamped(std::ceil(std::max({x[0], x[1], x[2]}) - 0.5), image_.width - 1);
  const int row_begin = clamped(std::floor(std::min({y[0], y[1], y[2]}) - 0.5), image_.height - 1);
  const int row_end = clamped(std::ceil(std::max({y[0], y[1], y[2]}) - 0.5), image_.height - 1);
  const Vec3 eye = camera_.eye;
  for (int row = row_begin; row <= row_end; ++row) {
    const double py = row + 0.5;
    for (int column = column_begin; column <= column_end; ++column) {
      const double px = column + 0.5;
      // Screen-space barycentric coordinates (edge functions over the signed area).
      const double l0 = ((x[1] - px) * (y[2] - py) - (x[2] - px) * (y[1] - py)) / area;
      const double l1 = ((x[2] - px) * (y[0] - py) - (x[0] - px) * (y[2] - py)) / area;
      const double l2 = 1.0 - l0 - l1;
      if (l0 < 0 || l1 < 0 || l2 < 0) continue;
      const double inverse_depth = l0 * inverse_z[0] + l1 * inverse_z[1] + l2 * inverse_z[2];
      const double tested = paint.depth_bias > 0
                                ? 1.0 / std::max(0.5 * camera_.near, 1.0 / inverse_depth - paint.depth_bias)
                                : inverse_depth;
      const std::size_t at =
          static_cast<std::size_t>(row) * static_cast<std::size_t>(image_.width) + static_cast<std::size_t>(column);
      if (!(static_cast<float>(tested) > inverse_depth_[at])) continue;
      inverse_depth_[at] = static_cast<float>(tested);
      // Perspective-correct weights of the corners' world positions and normals.
      const double w0 = l0 * inverse_z[0] / inverse_depth, w1 = l1 * inverse_z[1] / inverse_depth;
      const double w2 = 1.0 - w0 - w1;
      const Vec3 world = w0 * a.world + w1 * b.world + w2 * c.world;
      Vec3 normal = w0 * a.normal + w1 * b.normal + w2 * c.normal;
      const double length = norm(normal);
      if (length > 0) normal = (1.0 / length) * normal;
      if (dot(normal, eye - world) < 0) normal = -1.0 * normal;  // the side the camera sees
      const double light = lighting_.ambient + lighting_.diffuse * std::max(0.0, dot(normal, light_direction_));
      Rgb colour = paint.colour;
      if (paint.checker) {
        const Vec3 d = world - paint.origin;
        // Square (u, v) is the second colour when u + v is odd; in doubles, so that a point
        // far off (or a non-finite one) cannot overflow an integer.
        const double u = std::floor(dot(d, paint.axis_u) / paint.cell),
                     v = std::floor(dot(d, paint.axis_v) / paint.cell);
        if (std::isfinite(u + v) && std::fmod(u + v, 2.0) != 0.0) colour = paint.second;
      }
      image_.set(column, row,
                 {channel(colour.red * light), channel(colour.green * light), channel(colour.blue * light)});
    }
  }
}

void Rasteriser::draw_line(const Vec3& from, const Vec3& to, Rgb colour, int width_pixels) {
  Vec3 p = to_camera(from), q = to_camera(to);
  const double near = camera_.near;
  if (p[2] < near && q[2] < near) return;
  if (p[2] < near) p = lerp(p, q, (near - p[2]) / (q[2] - p[2]));
  if (q[2] < near) q = lerp(q, p, (near - q[2]) / (p[2] - q[2]));
  const double half_width = 0.5 * image_.width, half_height = 0.5 * image_.height;
  const double x0 = half_width + focal_ * p[0] / p[2], y0 = half_height - focal_ * p[1] / p[2];
  const double x1 = half_width + focal_ * q[0] / q[2], y1 = half_height - focal_ * q[1] / q[2];
  // The part of the segment on the image (Liang–Barsky against the image's rectangle, widened
  // by the line's width), then steps of at most one pixel along the longer screen axis.
  double t_begin = 0.0, t_end = 1.0;
  const double margin = width_pixels;
  const auto clip = [&](double start, double delta, double low, double high) {
    if (delta == 0.0) return start >= low && start <= high;
    double t_low = (low - start) / delta, t_high = (high - start) / delta;
    if (t_low > t_high) std::swap(t_low, t_high);
    t_begin = std::max(t_begin, t_low);
    t_end = std::min(t_end, t_high);
    return t_begin <= t_end;
  };
  if (!clip(x0, x1 - x0, -margin, image_.width + margin) || !clip(y0, y1 - y0, -margin, image_.height + margin)) return;
  const double span = (t_end - t_begin) * std::max(std::abs(x1 - x0), std::abs(y1 - y0));
  if (!std::isfinite(span)) return;
  const int steps = static_cast<int>(std::ceil(span)) + 1;
  const int half = std::max(0, (width_pixels - 1) / 2);
  for (int s = 0; s <= steps; ++s) {
    const double t = t_begin + (t_end - t_begin) * static_cast<double>(s) / steps;
    const double x = x0 + t * (x1 - x0), y = y0 + t * (y1 - y0);
    const double inverse_depth = (1 - t) / p[2] + t / q[2];  // affine in screen space
    const int column = static_cast<int>(std::floor(x)), row = static_cast<int>(std::floor(y));
    for (int r = row - half; r <= row - half + width_pixels - 1; ++r) {
      for (int c = column - half; c <= column - half + width_pixels - 1; ++c) {
        if (r < 0 || c < 0 || r >= image_.height || c >= image_.width) continue;
        const std::size_t at =
            static_cast<std::size_t>(r) * static_cast<std::size_t>(image_.width) + static_cast<std::size_t>(c);
        if (!(static_cast<float>(inverse_depth) >= inverse_depth_[at])) continue;
        inverse_depth_[at] = static_cast<float>(inverse_depth);
        image_.set(c, r, colour);
      }
    }
  }
}

long long Rasteriser::covered_pixels() const {
  return std::count_if(inverse_depth_.begin(), inverse_depth_.end(), [](float value) { return value > 0.0f; });
}

}  // namespace diffphys::viewer
