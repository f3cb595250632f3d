// model/trajectory.cpp — TrajectoryRecorder (diffphys/trajectory.hpp): keeps recorded frames
// in compact arrays and writes them as one JSON file.
//
// Frames are stored as plain numbers, not as JSON objects, so recording a long rollout costs
// ~100 bytes per body per frame. The file is streamed out by hand, one frame per line (easy
// to diff, grep and load line by line), with every double printed in the shortest form that
// reads back to the same bits; a non-finite value is written as null, since JSON has no NaN.
// With the Params, a "model" block (bodies, shapes with their sizes and local poses, joints,
// gravity) goes before the frames and every frame carries its mechanical energy — what the
// web viewer (viewer/, docs/viewer.md) needs to draw and plot the motion without the scene.
// The layout is documented in docs/scene-format.md ("Trajectory files").
#include "diffphys/trajectory.hpp"

#include "diffphys/convex_mesh.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diffphys/error.hpp"

namespace diffphys {

struct TrajectoryRecorder::Frames {
  struct BodyRecord {
    Vec3 position;  // centre of mass, world, m
    Quat orientation;
    Vec3 linear_velocity;   // m/s
    Vec3 angular_velocity;  // rad/s, world
  };
  struct FrameRecord {
    double time = 0.0;
    StepStatus status;
    std::size_t first_contact = 0;  // contacts [first_contact, first_contact + contact_count)
    std::size_t contact_count = 0;
    double kinetic_energy = 0.0;    // J; recorded only with the Params
    double potential_energy = 0.0;  // J, gravitational, zero at the world origin
  };

  std::vector<FrameRecord> frames;
  std::vector<BodyRecord> bodies;  // (frames × (nbody − 1)): the world body is not recorded
  std::vector<Contact> contacts;   // every frame's contacts, back to back
};

TrajectoryRecorder::TrajectoryRecorder(const Model& model)
    : model_(model), frames_(std::make_unique<Frames>()) {}

TrajectoryRecorder::TrajectoryRecorder(const Model& model, const Params& params)
    : model_(model), params_(params), frames_(std::make_unique<Frames>()) {
  if (params.values.size() != static_cast<std::size_t>(model.param_count())) {
    throw Error(message("trajectory of '", model.name, "': the parameter vector has ",
                        params.values.size(), " values, the model's layout ",
                        model.param_count()));
  }
}

void TrajectoryRecorder::set_loss_curve(std::span<const double> loss_per_iteration) {
  for (std::size_t i = 0; i < loss_per_iteration.size(); ++i) {
    if (!std::isfinite(loss_per_iteration[i]))
      throw Error(message("trajectory of '", model_.name, "': loss[", i, "] is not finite (",
                          loss_per_iteration[i], ")"));
  }
  loss_curve_.assign(loss_per_iteration.begin(), loss_per_iteration.end());
}

TrajectoryRecorder::~TrajectoryRecorder() = default;

void TrajectoryRecorder::record(const State& state, std::span<const Contact> contacts,
                                const StepStatus& status) {
  if (state.body_count() != model_.body_count() ||
      state.orientation.size() != state.position.size() ||
      state.linear_velocity.size() != state.position.size() ||
      state.angular_velocity.size() != state.position.size()) {
    throw Error(message("trajectory of '", model_.name, "': the state has ", state.body_count(),
                        " bodies, the model ", model_.body_count()));
  }
  Frames::FrameRecord frame;
  frame.time = state.time;
  frame.status = status;
  frame.first_contact = frames_->contacts.size();
  frame.contact_count = contacts.size();
  if (params_) {
    frame.kinetic_energy = kinetic_energy(model_, *params_, state);
    frame.potential_energy = potential_energy(model_, *params_, state);
  }
  frames_->frames.push_back(frame);
  for (int body = 1; body < state.body_count(); ++body) {
    const auto i = static_cast<std::size_t>(body);
    frames_->bodies.push_back({state.position[i], state.orientation[i], state.linear_velocity[i],
                               state.angular_velocity[i]});
  }
  frames_->contacts.insert(frames_->contacts.end(), contacts.begin(), contacts.end());
}

int TrajectoryRecorder::frame_count() const { return static_cast<int>(frames_->frames.size()); }

namespace {

// Appends the shortest decimal text that reads back to exactly `value`; null if not finite.
void append_number(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  std::array<char, 32> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  out.append(buffer.data(), result.ptr);
}

void append_vec3(std::string& out, const Vec3& v) {
  out += '[';
  append_number(out, v.x);
  out += ',';
  append_number(out, v.y);
  out += ',';
  append_number(out, v.z);
  out += ']';
}

void append_quat(std::string& out, const Quat& q) {
  out += '[';
  append_number(out, q.w);
  out += ',';
  append_number(out, q.x);
  out += ',';
  append_number(out, q.y);
  out += ',';
  append_number(out, q.z);
  out += ']';
}

void append_string(std::string& out, const std::string& text) {
  out += nlohmann::json(text).dump();
}

std::string body_name(const Model& model, int body) {
  if (body >= 0 && body < model.body_count())
    return model.bodies[static_cast<std::size_t>(body)].name;
  return message("#", body);
}

std::string shape_name(const Model& model, int shape) {
  if (shape >= 0 && shape < model.shape_count())
    return model.shapes[static_cast<std::size_t>(shape)].name;
  return message("#", shape);
}



// `"key":value` for a parameter slot, or nothing when the slot does not apply (offset -1).
void append_param_number(std::string& out, const char* key, const Params& params, int offset) {
  if (offset < 0) return;
  out += ",\"";
  out += key;
  out += "\":";
  append_number(out, params.at(offset));
}

void append_param_vec3(std::string& out, const char* key, const Params& params, int offset) {
  if (offset < 0) return;
  out += ",\"";
  out += key;
  out += "\":";
  append_vec3(out, params.vec3_at(offset));
}

// A shape's size keys, by type (the names of the scene format): sphere radius; box
// half_extents; capsule and cylinder radius and half_length along z; ellipsoid radii (its
// semi-axes); a plane has none.
void append_shape_size(std::string& out, const Model& model, const Params& params, int shape) {
  const Shape& spec = model.shapes[static_cast<std::size_t>(shape)];
  const int offset = model.layout.shape_size[static_cast<std::size_t>(shape)];
  switch (spec.type) {
    case ShapeType::Sphere:
      append_param_number(out, "radius", params, offset);
      return;
    case ShapeType::Box:
      append_param_vec3(out, "half_extents", params, offset);
      return;
    case ShapeType::Capsule:
    case ShapeType::Cylinder:
      append_param_number(out, "radius", params, offset);
      append_param_number(out, "half_length", params, offset < 0 ? -1 : offset + 1);
      return;
    case ShapeType::Ellipsoid:
      append_param_vec3(out, "radii", params, offset);
      return;
    case ShapeType::Plane: return;
    case ShapeType::ConvexMesh: {
      // The hull in the mesh frame (unscaled) and its polygon faces; the viewer scales it.
      append_param_number(out, "scale", params, offset);
      const ConvexMesh& mesh = model.meshes[static_cast<std::size_t>(spec.mesh)];
      out += ",\"vertices\":[";
      for (std::size_t v = 0; v < mesh.vertices.size(); ++v) {
        if (v > 0) out += ',';
        append_vec3(out, mesh.vertices[v]);
      }
      out += "],\"faces\":[";
      for (std::size_t f = 0; f < mesh.faces.size(); ++f) {
        if (f > 0) out += ',';
        out += '[';
        for (int k = 0; k < mesh.faces[f].count; ++k) {
          if (k > 0) out += ',';
          out += std::to_string(mesh.face_vertices[static_cast<std::size_t>(mesh.faces[f].first + k)]);
        }
        out += ']';
      }
      out += ']';
      return;
    }
    default: return;  // a type added later writes its size keys here (docs/viewer.md)
  }
}

// {"gravity": g, "bodies": [every body, the world first, with its shapes], "joints": [...]}:
// everything needed to draw the recorded states without the scene file.
void append_model_block(std::string& out, const Model& model, const Params& params) {
  const ParamLayout& layout = model.layout;
  out += "{\"gravity\":";
  append_vec3(out, params.vec3_at(layout.gravity));
  out += ",\"bodies\":[";
  for (int body = 0; body < model.body_count(); ++body) {
    const auto b = static_cast<std::size_t>(body);
    const Body& spec = model.bodies[b];
    if (body > 0) out += ',';
    out += "{\"name\":";
    append_string(out, spec.name);
    out += ",\"type\":\"";
    out += type_name(spec.type);  // a kinematic body moves in the frames like a dynamic one
    out += '"';
    append_param_number(out, "mass", params, layout.body_mass[b]);
    append_param_vec3(out, "inertia", params, layout.body_inertia[b]);
    if (spec.type == BodyType::Dynamic) {
      out += ",\"principal_frame\":";
      append_quat(out, spec.principal_frame);
    }
    out += ",\"shapes\":[";
    for (int shape = spec.first_shape; shape < spec.first_shape + spec.shape_count; ++shape) {
      const Shape& shape_spec = model.shapes[static_cast<std::size_t>(shape)];
      if (shape > spec.first_shape) out += ',';
      out += "{\"name\":";
      append_string(out, shape_spec.name);
      out += ",\"type\":\"";
      out += type_name(shape_spec.type);
      out += "\",\"position\":";
      append_vec3(out, shape_spec.local_position);
      out += ",\"orientation\":";
      append_quat(out, shape_spec.local_orientation);
      append_shape_size(out, model, params, shape);
      out += '}';
    }
    out += "]}";
  }
  out += "],\"joints\":[";
  for (int joint = 0; joint < model.joint_count(); ++joint) {
    const Joint& spec = model.joints[static_cast<std::size_t>(joint)];
    if (joint > 0) out += ',';
    out += "{\"name\":";
    append_string(out, spec.name);
    out += ",\"type\":\"";
    out += type_name(spec.type);
    out += "\",\"parent\":";
    append_string(out, body_name(model, spec.parent));
    out += ",\"child\":";
    append_string(out, body_name(model, spec.child));
    out += ",\"anchor_parent\":";
    append_vec3(out, spec.anchor_parent);
    out += ",\"anchor_child\":";
    append_vec3(out, spec.anchor_child);
    out += '}';
  }
  out += "]}";
}

}  // namespace

void TrajectoryRecorder::write(const std::filesystem::path& path) const {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw Error(message(path.string(), ": cannot open the trajectory file for writing"));
  write(file);
  file.flush();
  if (!file) throw Error(message(path.string(), ": could not write the whole trajectory file"));
}

void TrajectoryRecorder::write(std::ostream& file) const {
  const auto recorded_bodies =
      static_cast<std::size_t>(model_.body_count() > 0 ? model_.body_count() - 1 : 0);
  std::string text;
  text += "{\"format\":\"diffphys-trajectory\",\"version\":1,\"name\":";
  append_string(text, model_.name);
  text += ",\"dt\":";
  append_number(text, model_.dt);
  text += ",\"bodies\":[";
  for (int body = 1; body < model_.body_count(); ++body) {
    if (body > 1) text += ',';
    append_string(text, body_name(model_, body));
  }
  text += ']';
  if (params_) {
    text += ",\n\"model\":";
    append_model_block(text, model_, *params_);
  }
  if (!loss_curve_.empty()) {
    text += ",\n\"loss\":[";
    for (std::size_t i = 0; i < loss_curve_.size(); ++i) {
      if (i > 0) text += ',';
      append_number(text, loss_curve_[i]);
    }
    text += ']';
  }
  text += ",\n\"frames\":[\n";
  file << text;

  for (std::size_t f = 0; f < frames_->frames.size(); ++f) {
    const Frames::FrameRecord& frame = frames_->frames[f];
    text.clear();
    text += "{\"time\":";
    append_number(text, frame.time);
    text += ",\"bodies\":[";
    for (std::size_t b = 0; b < recorded_bodies; ++b) {
      const Frames::BodyRecord& body = frames_->bodies[f * recorded_bodies + b];
      if (b > 0) text += ',';
      text += "{\"position\":";
      append_vec3(text, body.position);
      text += ",\"orientation\":";
      append_quat(text, body.orientation);
      text += ",\"linear_velocity\":";
      append_vec3(text, body.linear_velocity);
      text += ",\"angular_velocity\":";
      append_vec3(text, body.angular_velocity);
      text += '}';
    }
    text += "],\"contacts\":[";
    for (std::size_t c = 0; c < frame.contact_count; ++c) {
      const Contact& contact = frames_->contacts[frame.first_contact + c];
      if (c > 0) text += ',';
      text += "{\"body_a\":";
      append_string(text, body_name(model_, contact.body_a));
      text += ",\"body_b\":";
      append_string(text, body_name(model_, contact.body_b));
      text += ",\"shape_a\":";
      append_string(text, shape_name(model_, contact.shape_a));
      text += ",\"shape_b\":";
      append_string(text, shape_name(model_, contact.shape_b));
      text += ",\"position\":";
      append_vec3(text, contact.position);
      text += ",\"normal\":";
      append_vec3(text, contact.normal);
      text += ",\"gap\":";
      append_number(text, contact.gap);
      text += ",\"normal_impulse\":";
      append_number(text, contact.normal_impulse);
      text += ",\"friction_impulse\":";
      append_vec3(text, contact.friction_impulse);
      text += '}';
    }
    text += ']';
    if (params_) {
      text += ",\"energy\":{\"kinetic\":";
      append_number(text, frame.kinetic_energy);
      text += ",\"potential\":";
      append_number(text, frame.potential_energy);
      text += '}';
    }
    text += ",\"solver\":{\"converged\":";
    text += frame.status.converged ? "true" : "false";
    text += ",\"iterations\":";
    text += std::to_string(frame.status.iterations);
    text += ",\"residual\":";
    append_number(text, frame.status.residual);
    text += ",\"joint_error\":";
    append_number(text, frame.status.joint_error);
    text += "}}";
    if (f + 1 < frames_->frames.size()) text += ',';
    text += '\n';
    file << text;
  }
  file << "]}\n";
}

}  // namespace diffphys
