// soft/soft_mesh.cpp — tet box and cloth rectangle generators, and the tet-mesh text format.
#include "diffphys/soft_mesh.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "diffphys/error.hpp"

namespace diffphys::soft {

namespace {

double signed_volume(const Vector3& a, const Vector3& b, const Vector3& c, const Vector3& d) {
  const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
  const double v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
  const double w[3] = {d[0] - a[0], d[1] - a[1], d[2] - a[2]};
  return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) + u[2] * (v[0] * w[1] - v[1] * w[0])) / 6.0;
}

// Refuses a generator that would take the spec past the size bounds (soft_mesh.hpp). The
// counts are doubles: "cells" near INT_MAX overflow any integer product, and a double is
// exact far beyond the bounds.
void check_spec_size(const SoftSpec& spec, double new_nodes, double new_elements, const std::string& what) {
  const double nodes = static_cast<double>(spec.nodes.size()) + new_nodes;
  const double elements = static_cast<double>(spec.tets.size() + spec.triangles.size()) + new_elements;
  if (nodes <= static_cast<double>(kMaxSoftNodes) && elements <= static_cast<double>(kMaxSoftElements)) return;
  // Whole counts print whole (6000000000, not 6e+09) while they fit an integer.
  const auto count = [](double value) {
    return value < 9e18 ? std::to_string(static_cast<long long>(value)) : message(value);
  };
  throw Error(message(what, " would make ", count(new_nodes), " nodes and ", count(new_elements), " elements (",
                      count(nodes), " and ", count(elements), " with those before it); a soft scene holds at most ",
                      kMaxSoftNodes, " nodes and ", kMaxSoftElements, " elements (tets and triangles)"));
}

}  // namespace

int add_tet_box(SoftSpec& spec, const Vector3& origin, const Vector3& size, const std::array<int, 3>& cells,
                int material) {
  for (int a = 0; a < 3; ++a) {
    if (cells[static_cast<std::size_t>(a)] < 1) throw Error(message("tet box: cells must be ≥ 1 along each axis, got ", cells[static_cast<std::size_t>(a)]));
    if (!(size[static_cast<std::size_t>(a)] > 0.0)) throw Error(message("tet box: size must be positive along each axis, got ", size[static_cast<std::size_t>(a)]));
  }
  const auto along = [&](std::size_t axis) { return static_cast<double>(cells[axis]); };
  check_spec_size(spec, (along(0) + 1) * (along(1) + 1) * (along(2) + 1), 6 * along(0) * along(1) * along(2),
                  message("tet box: cells [", cells[0], ", ", cells[1], ", ", cells[2], "]"));
  const int first = static_cast<int>(spec.nodes.size());
  const int nx = cells[0] + 1, ny = cells[1] + 1, nz = cells[2] + 1;
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i)
        spec.nodes.push_back({origin[0] + size[0] * i / cells[0], origin[1] + size[1] * j / cells[1],
                              origin[2] + size[2] * k / cells[2]});
  const auto node = [&](int i, int j, int k) { return first + i + nx * (j + ny * k); };
  // Kuhn subdivision: one tet per permutation of the axes, walking from corner 000 to 111.
  constexpr int permutations[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int k = 0; k < cells[2]; ++k)
    for (int j = 0; j < cells[1]; ++j)
      for (int i = 0; i < cells[0]; ++i)
        for (const auto& order : permutations) {
          std::array<int, 3> corner{i, j, k};
          std::array<int, 4> tet{};
          tet[0] = node(corner[0], corner[1], corner[2]);
          for (int step = 0; step < 3; ++step) {
            ++corner[static_cast<std::size_t>(order[step])];
            tet[static_cast<std::size_t>(step + 1)] = node(corner[0], corner[1], corner[2]);
          }
          const auto& p = spec.nodes;
          if (signed_volume(p[static_cast<std::size_t>(tet[0])], p[static_cast<std::size_t>(tet[1])],
                            p[static_cast<std::size_t>(tet[2])], p[static_cast<std::size_t>(tet[3])]) < 0.0)
            std::swap(tet[2], tet[3]);
          spec.tets.push_back({tet, material});
        }
  return first;
}

int add_cloth_rectangle(SoftSpec& spec, const Vector3& origin, const Vector3& edge_u, const Vector3& edge_v,
                        int cells_u, int cells_v, int material) {
  if (cells_u < 1 || cells_v < 1) throw Error(message("cloth rectangle: cells must be ≥ 1, got ", cells_u, " × ", cells_v));
  const double u = cells_u, v = cells_v;
  check_spec_size(spec, (u + 1) * (v + 1), 2 * u * v, message("cloth rectangle: cells [", cells_u, ", ", cells_v, "]"));
  const int first = static_cast<int>(spec.nodes.size());
  for (int j = 0; j <= cells_v; ++j)
    for (int i = 0; i <= cells_u; ++i) {
      const double s = static_cast<double>(i) / cells_u, t = static_cast<double>(j) / cells_v;
      spec.nodes.push_back({origin[0] + s * edge_u[0] + t * edge_v[0], origin[1] + s * edge_u[1] + t * edge_v[1],
                            origin[2] + s * edge_u[2] + t * edge_v[2]});
    }
  const auto node = [&](int i, int j) { return first + i + (cells_u + 1) * j; };
  for (int j = 0; j < cells_v; ++j)
    for (int i = 0; i < cells_u; ++i) {
      // Alternate the diagonal so the mesh has no preferred shear direction.
      if ((i + j) % 2 == 0) {
        spec.triangles.push_back({{node(i, j), node(i + 1, j), node(i + 1, j + 1)}, material});
        spec.triangles.push_back({{node(i, j), node(i + 1, j + 1), node(i, j + 1)}, material});
      } else {
        spec.triangles.push_back({{node(i, j), node(i + 1, j), node(i, j + 1)}, material});
        spec.triangles.push_back({{node(i + 1, j), node(i + 1, j + 1), node(i, j + 1)}, material});
      }
    }
  return first;
}

TetMesh parse_tet_mesh(std::string_view text, const std::string& source) {
  TetMesh mesh;
  // Tokenise into (line number, words), dropping comments and blank lines.
  std::vector<std::pair<int, std::vector<std::string>>> lines;
  int line_number = 0;
  std::size_t position = 0;
  while (position <= text.size()) {
    const std::size_t end = std::min(text.find('\n', position), text.size());
    std::string_view line = text.substr(position, end - position);
    ++line_number;
    position = end + 1;
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    std::istringstream words{std::string(line)};
    std::vector<std::string> tokens;
    for (std::string word; words >> word;) tokens.push_back(word);
    if (!tokens.empty()) lines.push_back({line_number, std::move(tokens)});
    if (end == text.size()) break;
  }
  const auto fail = [&](int line, const std::string& what) -> void {
    throw Error(message(source, ":", line, ": ", what));
  };
  const auto parse_number = [&](int line, const std::string& word, auto& value) {
    const auto [stop, error] = std::from_chars(word.data(), word.data() + word.size(), value);
    if (error != std::errc() || stop != word.data() + word.size()) fail(line, message("expected a number, got '", word, "'"));
  };
  std::size_t cursor = 0;
  const auto header = [&](const char* keyword) {
    if (cursor >= lines.size()) fail(line_number, message("expected '", keyword, " <count>', got the end of the file"));
    const auto& [line, tokens] = lines[cursor++];
    if (tokens.size() != 2 || tokens[0] != keyword) fail(line, message("expected '", keyword, " <count>'"));
    long long count = 0;
    parse_number(line, tokens[1], count);
    if (count < 0) fail(line, message("the ", keyword, " count must be ≥ 0, got ", count));
    return static_cast<std::size_t>(count);
  };
  const std::size_t node_count = header("nodes");
  for (std::size_t i = 0; i < node_count; ++i) {
    if (cursor >= lines.size()) fail(line_number, message("expected ", node_count, " nodes, the file ends after ", i));
    const auto& [line, tokens] = lines[cursor++];
    if (tokens.size() != 3) fail(line, message("node ", i, ": expected 3 coordinates, got ", tokens.size(), " values"));
    Vector3 p{};
    for (std::size_t r = 0; r < 3; ++r) {
      parse_number(line, tokens[r], p[r]);
      if (!std::isfinite(p[r])) fail(line, message("node ", i, ": coordinates must be finite"));
    }
    mesh.nodes.push_back(p);
  }
  const std::size_t tet_count = header("tets");
  for (std::size_t t = 0; t < tet_count; ++t) {
    if (cursor >= lines.size()) fail(line_number, message("expected ", tet_count, " tets, the file ends after ", t));
    const auto& [line, tokens] = lines[cursor++];
    if (tokens.size() != 4) fail(line, message("tet ", t, ": expected 4 node indices, got ", tokens.size(), " values"));
    std::array<int, 4> tet{};
    for (std::size_t a = 0; a < 4; ++a) {
      long long index = 0;
      parse_number(line, tokens[a], index);
      if (index < 0 || index >= static_cast<long long>(node_count))
        fail(line, message("tet ", t, ": unknown node index ", index, " (the mesh has ", node_count, " nodes, numbered from 0)"));
      tet[a] = static_cast<int>(index);
    }
    const auto& p = mesh.nodes;
    const double volume = signed_volume(p[static_cast<std::size_t>(tet[0])], p[static_cast<std::size_t>(tet[1])],
                                        p[static_cast<std::size_t>(tet[2])], p[static_cast<std::size_t>(tet[3])]);
    double longest = 0.0;
    for (std::size_t a = 1; a < 4; ++a) {
      double sq = 0.0;
      for (std::size_t r = 0; r < 3; ++r) {
        const double d = p[static_cast<std::size_t>(tet[a])][r] - p[static_cast<std::size_t>(tet[0])][r];
        sq += d * d;
      }
      longest = std::max(longest, std::sqrt(sq));
    }
    if (std::abs(volume) <= 1e-12 * longest * longest * longest)
      fail(line, message("tet ", t, " (nodes ", tet[0], " ", tet[1], " ", tet[2], " ", tet[3], "): degenerate, volume ", volume, " m³"));
    if (volume < 0.0)
      fail(line, message("tet ", t, " (nodes ", tet[0], " ", tet[1], " ", tet[2], " ", tet[3], "): inverted, signed volume ", volume,
                         " m³ (list the nodes so that (b−a)·((c−a)×(d−a)) > 0)"));
    mesh.tets.push_back(tet);
  }
  if (cursor < lines.size()) fail(lines[cursor].first, "unexpected content after the last tet");
  return mesh;
}

TetMesh load_tet_mesh(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw Error(path + ": cannot open the tet mesh file");
  std::ostringstream text;
  text << file.rdbuf();
  return parse_tet_mesh(text.str(), path);
}

std::string format_tet_mesh(const TetMesh& mesh) {
  std::ostringstream out;
  out.precision(17);
  out << "nodes " << mesh.nodes.size() << "\n";
  for (const Vector3& p : mesh.nodes) out << p[0] << " " << p[1] << " " << p[2] << "\n";
  out << "tets " << mesh.tets.size() << "\n";
  for (const auto& t : mesh.tets) out << t[0] << " " << t[1] << " " << t[2] << " " << t[3] << "\n";
  return out.str();
}

int add_tet_mesh(SoftSpec& spec, const TetMesh& mesh, int material, const Vector3& offset) {
  check_spec_size(spec, static_cast<double>(mesh.nodes.size()), static_cast<double>(mesh.tets.size()), "tet mesh");
  const int first = static_cast<int>(spec.nodes.size());
  for (const Vector3& p : mesh.nodes) spec.nodes.push_back({p[0] + offset[0], p[1] + offset[1], p[2] + offset[2]});
  for (const auto& t : mesh.tets) spec.tets.push_back({{t[0] + first, t[1] + first, t[2] + first, t[3] + first}, material});
  return first;
}

}  // namespace diffphys::soft
