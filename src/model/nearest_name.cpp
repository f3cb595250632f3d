// model/nearest_name.cpp — see nearest_name.hpp.
#include "model/nearest_name.hpp"

#include <algorithm>
#include <limits>
#include <vector>

namespace diffphys {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::string nearest_name(std::string_view word, std::span<const std::string_view> known, bool prefix_is_near) {
  std::string_view nearest;
  std::size_t nearest_distance = std::numeric_limits<std::size_t>::max();
  for (const std::string_view name : known) {
    const bool prefix = prefix_is_near && !word.empty() && name.starts_with(word);
    const std::size_t distance = prefix ? 0 : edit_distance(word, name);
    if (distance < nearest_distance) {
      nearest = name;
      nearest_distance = distance;
    }
  }
  const std::size_t typo_budget = std::max<std::size_t>(1, word.size() / 4);
  return nearest_distance <= typo_budget ? std::string(nearest) : std::string();
}

std::string did_you_mean(std::string_view word, std::span<const std::string_view> known) {
  const std::string nearest = nearest_name(word, known);
  return nearest.empty() ? std::string() : " (did you mean '" + nearest + "'?)";
}

}  // namespace diffphys
