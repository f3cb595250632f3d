// io/package_path.cpp — see package_path.hpp.
#include "io/package_path.hpp"

#include <algorithm>
#include <system_error>

#include "diffphys/error.hpp"

namespace diffphys::io {
namespace {

namespace fs = std::filesystem;

bool is_existing_directory(const fs::path& path) {
  std::error_code status;
  return fs::is_directory(path, status);
}

bool is_existing_file(const fs::path& path) {
  std::error_code status;
  return fs::exists(path, status) && !fs::is_directory(path, status);
}

// The subdirectories of `directory`, sorted by name, hidden ones left out; unreadable: none.
std::vector<fs::path> subdirectories(const fs::path& directory) {
  std::vector<fs::path> children;
  std::error_code status;
  fs::directory_iterator entry(directory, fs::directory_options::skip_permission_denied, status);
  for (; !status && entry != fs::directory_iterator(); entry.increment(status)) {
    const std::string name = entry->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::error_code kind;
    if (entry->is_directory(kind)) children.push_back(entry->path());
  }
  std::sort(children.begin(), children.end());
  return children;
}

// %XX escapes of a URI path decoded (file:///my%20robot/x.stl).
std::string percent_decoded(const std::string& text) {
  std::string decoded;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto hex = [](char c) {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
      decoded += static_cast<char>(16 * hex(text[i + 1]) + hex(text[i + 2]));
      i += 2;
    } else {
      decoded += text[i];
    }
  }
  return decoded;
}

// The last name of a directory path, trailing separators ignored ("/ws/src/" → "src").
std::string directory_name(const fs::path& directory) {
  const fs::path normal = directory.lexically_normal();
  return (normal.has_filename() ? normal : normal.parent_path()).filename().string();
}

std::string listed(const std::vector<fs::path>& directories) {
  std::string text;
  for (const fs::path& directory : directories) text += (text.empty() ? "" : ", ") + directory.string();
  return text;
}

// The directory and its ancestors, nearest first (absolute).
std::vector<fs::path> ancestors(const fs::path& directory) {
  std::error_code status;
  fs::path current = fs::absolute(directory.empty() ? fs::path(".") : directory, status).lexically_normal();
  if (current.has_filename() == false && current != current.root_path()) current = current.parent_path();
  std::vector<fs::path> chain;
  while (true) {
    chain.push_back(current);
    if (current == current.root_path() || current.parent_path() == current) break;
    current = current.parent_path();
  }
  return chain;
}

}  // namespace

MeshLocator::MeshLocator(std::vector<fs::path> package_path, const char* ros_package_path, fs::path base_directory)
    : package_path_(std::move(package_path)), base_directory_(std::move(base_directory)) {
  if (ros_package_path != nullptr) {
    ros_package_path_set_ = true;
    const std::string value = ros_package_path;
    std::size_t start = 0;
    while (start <= value.size()) {
      const std::size_t colon = std::min(value.find(':', start), value.size());
      if (colon > start) ros_package_path_.emplace_back(value.substr(start, colon - start));
      start = colon + 1;
    }
  }
}

std::optional<fs::path> MeshLocator::search_below(const fs::path& root, const std::string& name,
                                                  bool& truncated) const {
  std::vector<fs::path> level{root};
  int listed_count = 0;
  for (int depth = 1; depth <= kMaxPackageDepth && !level.empty(); ++depth) {
    std::vector<fs::path> next;
    for (const fs::path& directory : level) {
      if (++listed_count > kMaxDirectoriesListed) {
        truncated = true;
        return std::nullopt;
      }
      for (const fs::path& child : subdirectories(directory)) {
        const bool is_package = is_existing_file(child / "package.xml");
        if (is_package && child.filename() == name) return child;
        if (!is_package) next.push_back(child);  // ROS packages do not nest
      }
    }
    level = std::move(next);
  }
  return std::nullopt;
}

std::optional<fs::path> MeshLocator::find_package(const std::string& name) {
  if (const auto known = packages_.find(name); known != packages_.end()) return known->second;
  std::optional<fs::path> found;
  bool truncated = false;
  for (const auto* roots : {&package_path_, &ros_package_path_}) {
    for (const fs::path& root : *roots) {
      if (!is_existing_directory(root)) continue;
      if (directory_name(root) == name) {
        found = root;
      } else if (is_existing_directory(root / name)) {
        found = root / name;
      } else {
        found = search_below(root, name, truncated);
      }
      if (found) break;
    }
    if (found) break;
  }
  if (!found) {
    for (const fs::path& directory : ancestors(base_directory_)) {
      if (directory_name(directory) == name) {
        found = directory;
      } else if (is_existing_directory(directory / name)) {
        found = directory / name;
      }
      if (found) break;
    }
  }
  truncated_[name] = truncated;
  packages_[name] = found;
  return found;
}

std::string MeshLocator::not_found_message(const std::string& name) const {
  const auto list_or = [](const std::vector<fs::path>& directories, const char* empty) {
    return directories.empty() ? std::string(empty) : listed(directories);
  };
  return message("package '", name,
                 "' not found; searched: the package path (--package-path, UrdfOptions::package_path, "
                 "package_path=): ",
                 list_or(package_path_, "none given"), "; ROS_PACKAGE_PATH: ",
                 ros_package_path_set_ ? list_or(ros_package_path_, "empty") : std::string("unset"),
                 " (in each: the directory itself if named '", name, "', '", name, "' inside it, or a directory '",
                 name, "' with a package.xml up to ", kMaxPackageDepth, " levels below",
                 truncated_.contains(name) && truncated_.at(name)
                     ? message("; a search stopped after listing ", kMaxDirectoriesListed, " directories")
                     : std::string(),
                 "); the URDF's directory and its ancestors, for one named '", name, "' or holding '", name,
                 "': ", listed(ancestors(base_directory_)), ". Add the directory that holds '", name,
                 "' with --package-path DIR, UrdfOptions::package_path, package_path= in Python, or ROS_PACKAGE_PATH");
}

MeshLocator::Location MeshLocator::locate(const std::string& reference) {
  Location location;
  constexpr std::string_view kPackage = "package://", kFile = "file://";
  if (reference.starts_with(kPackage)) {
    const std::string rest = reference.substr(kPackage.size());
    const std::size_t slash = rest.find('/');
    const std::string name = rest.substr(0, slash);
    location.package = name;
    if (name.empty() || name == "." || name == "..") {
      location.why_not = message("'", reference, "' names no package (expected package://NAME/path)");
      return location;
    }
    const std::optional<fs::path> package = find_package(name);
    if (!package) {
      location.why_not = not_found_message(name);
      return location;
    }
    location.file = slash == std::string::npos ? *package : *package / rest.substr(slash + 1);
    return location;
  }
  if (reference.starts_with(kFile)) {
    // file:///absolute/path (RFC 8089), or file://localhost/...; a relative remainder is
    // taken relative to the URDF file, like a plain path.
    std::string path = percent_decoded(reference.substr(kFile.size()));
    if (path.starts_with("localhost/")) path = path.substr(std::string_view("localhost").size());
    location.file = fs::path(path).is_absolute() ? fs::path(path) : base_directory_ / path;
    return location;
  }
  if (const std::size_t scheme = reference.find("://"); scheme != std::string::npos) {
    location.why_not = message("'", reference, "': the URI scheme '", reference.substr(0, scheme),
                               "' is not supported (package://, file:// or a path relative to the URDF file)");
    return location;
  }
  location.file = base_directory_ / reference;
  return location;
}

}  // namespace diffphys::io
