// rigid/time_of_impact.cpp — see time_of_impact.hpp.
#include "rigid/time_of_impact.hpp"

#include <algorithm>

namespace diffphys::rigid {

bool free_of_joints(const Model& model, int body) {
  if (model.bodies[static_cast<std::size_t>(body)].type != BodyType::Dynamic) return true;
  return std::none_of(model.joints.begin(), model.joints.end(),
                      [&](const Joint& joint) { return joint.parent == body || joint.child == body; });
}

ImpactTarget impact_target(double gap, double start_speed, double free_speed, double restitution, double dt) {
  // With σ = τ/h and λ = σ + ½ (velocities lag positions by half a step, time_of_impact.hpp):
  //   target = e((1 − λ) s + λ s_f) − (1 − λ)(s_f − s).
  ImpactTarget out;
  double fraction = 0.0;  // σ
  if (gap > 0) {          // the caller guarantees gap ≤ h s_f (the gap closes this step)
    out.time = std::min(gap / free_speed, dt);  // the bound only catches round-off
    fraction = out.time / dt;
    out.time_d_gap = 1.0 / free_speed;
    out.time_d_free_speed = -out.time / free_speed;
  }
  const double lag = fraction + 0.5;
  const double e = restitution, s = start_speed, s_f = free_speed;
  out.target = e * ((1 - lag) * s + lag * s_f) - (1 - lag) * (s_f - s);
  out.d_restitution = (1 - lag) * s + lag * s_f;
  out.d_start_speed = (1 + e) * (1 - lag);
  const double d_fraction = (1 + e) * (s_f - s);  // ∂target/∂σ
  out.d_free_speed = e * lag - (1 - lag) + d_fraction * out.time_d_free_speed / dt;
  out.d_gap = d_fraction * out.time_d_gap / dt;
  return out;
}

void assign_body_impact_times(const Model& model, std::span<const Contact> contacts, ImpactRecord& record) {
  record.any = false;
  const bool some_row = std::any_of(record.contact_time.begin(), record.contact_time.end(),
                                    [](double time) { return time > 0; });
  if (!some_row) return;  // nothing bounces mid-step: no per-body work
  const std::size_t body_count = model.bodies.size();
  record.body_time.assign(body_count, model.dt);
  record.body_contact.assign(body_count, -1);
  // Earliest time-of-impact row per body.
  for (std::size_t c = 0; c < contacts.size(); ++c) {
    const double time = record.contact_time[c];
    if (time < 0) continue;
    for (const int body : {contacts[c].body_a, contacts[c].body_b}) {
      const auto b = static_cast<std::size_t>(body);
      if (time < record.body_time[b] || record.body_contact[b] < 0) {
        record.body_time[b] = time;
        record.body_contact[b] = static_cast<int>(c);
      }
    }
  }
  // A body that also has a closing contact which is not a time-of-impact row is supported:
  // it moves over the whole step as usual.
  for (std::size_t c = 0; c < contacts.size(); ++c) {
    if (record.contact_time[c] >= 0 || !record.contact_closing[c]) continue;
    for (const int body : {contacts[c].body_a, contacts[c].body_b}) record.body_contact[static_cast<std::size_t>(body)] = -1;
  }
  for (std::size_t b = 0; b < body_count; ++b) {
    if (record.body_contact[b] < 0 || model.bodies[b].type != BodyType::Dynamic || !(record.body_time[b] > 0)) {
      record.body_contact[b] = -1;
      record.body_time[b] = 0.0;
    } else {
      record.any = true;
    }
  }
}

}  // namespace diffphys::rigid
