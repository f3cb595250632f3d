"""The ``diffphys`` command from Python: the console script a pip install puts on the PATH
(pyproject.toml, [project.scripts]) and ``python -m diffphys``. Both run the C++ command-line
program (tools/diffphys_main.cpp, docs/scene-format.md): the copy that setup.py puts in the
package as ``diffphys/bin/diffphys``, or, when the package is the build tree's
``build/python/diffphys``, the ``build/bin/diffphys`` next to it."""

import os
import pathlib
import sys

PACKAGE = pathlib.Path(__file__).resolve().parent


def executable(package=None):
    """The path of the command-line program; raises SystemExit naming where it looked."""
    package = PACKAGE if package is None else pathlib.Path(package)
    candidates = [package / "bin" / "diffphys"]
    build_tree = package.parent.parent
    if package.parent.name == "python" and (build_tree / "CMakeCache.txt").is_file():
        candidates.append(build_tree / "bin" / "diffphys")
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise SystemExit("diffphys: the command-line program is not part of this installation (looked for "
                     + ", ".join(str(candidate) for candidate in candidates)
                     + "); install with pip from the source tree (setup.py builds it) or build it with CMake")


def main(argv=None):
    """Replaces this process by the command-line program with ``argv`` (default: sys.argv[1:])."""
    program = executable()
    arguments = sys.argv[1:] if argv is None else list(argv)
    os.execv(program, [str(program), *arguments])


if __name__ == "__main__":
    main()
