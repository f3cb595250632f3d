"""setuptools glue for `pip install --no-build-isolation .`: the extension diffphys._core and the
command-line program are built by the project's CMake (targets diffphys_python and diffphys_cli;
tests, benchmarks and the web viewer's replay page off, so no Node.js is needed) in build/pip/,
for the interpreter running pip; the pure-Python files come from python/diffphys/. The program
is copied into the package as diffphys/bin/diffphys, which the `diffphys` console script
(pyproject.toml, diffphys._cli) runs. Set DIFFPHYS_PIP_BUILD_DIR to build elsewhere."""

import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, extension):
        build_dir = pathlib.Path(os.environ.get("DIFFPHYS_PIP_BUILD_DIR", ROOT / "build" / "pip"))
        subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                               "-DDIFFPHYS_BUILD_TESTS=OFF", "-DDIFFPHYS_BUILD_BENCH=OFF",
                               "-DDIFFPHYS_BUILD_PYTHON=ON", "-DDIFFPHYS_VIEWER=OFF",
                               f"-DDIFFPHYS_PYTHON_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", str(build_dir), "--target", "diffphys_python", "diffphys_cli",
                               "-j", str(os.cpu_count() or 1)])
        built = sorted((build_dir / "python" / "diffphys").glob("_core*.so"))
        if not built:
            raise RuntimeError(f"CMake did not produce diffphys/_core*.so under {build_dir}")
        target = pathlib.Path(self.get_ext_fullpath(extension.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)
        program = build_dir / "bin" / "diffphys"
        if not program.is_file():
            raise RuntimeError(f"CMake did not produce the command-line program {program}")
        program_target = target.parent / "bin" / "diffphys"
        program_target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(program, program_target)
        program_target.chmod(0o755)


setup(ext_modules=[Extension("diffphys._core", sources=[])], cmdclass={"build_ext": CMakeBuild})
