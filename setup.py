"""Builds smx._smx by driving CMake (see pyproject.toml).

CMakeLists.txt is the one description of the sources, their per-file ISA
flags and the module's link line: this configures it with only the Python
module on, builds the target smx_python and copies the extension to where
setuptools packs it. The version is the C library's (include/smx/smx.h).
"""
import os
import re
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def library_version():
    with open(os.path.join(ROOT, "include", "smx", "smx.h"), encoding="utf-8") as f:
        header = f.read()
    parts = []
    for part in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(r"^#define SMX_VERSION_%s (\d+)$" % part, header, re.M)
        if not m:
            raise RuntimeError("include/smx/smx.h: no SMX_VERSION_%s" % part)
        parts.append(m.group(1))
    return ".".join(parts)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        cmake = shutil.which("cmake")
        if not cmake:
            raise RuntimeError("smx: building the Python module needs cmake >= 3.16 (Debian: apt-get install cmake)")
        build = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        configure = [cmake, "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                     "-DSMX_BUILD_TESTS=OFF", "-DSMX_BUILD_BENCH=OFF", "-DSMX_BUILD_PROGRAMS=OFF",
                     "-DSMX_BUILD_PYTHON=ON", "-DSMX_PYTHON_REQUIRED=ON",
                     "-DPython3_EXECUTABLE=" + sys.executable,
                     # smx._smx_cuda (smx.torch on CUDA tensors) is built where CMake finds nvcc, unless the
                     # environment says SMX_CUDA=OFF (or ON: required)
                     "-DSMX_CUDA=" + os.environ.get("SMX_CUDA", "AUTO")]
        fresh = not os.path.exists(os.path.join(build, "CMakeCache.txt"))
        if fresh and not os.environ.get("CMAKE_GENERATOR") and shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        subprocess.check_call(configure)
        jobs = self.parallel or os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or os.cpu_count() or 1
        subprocess.check_call([cmake, "--build", build, "--target", "smx_python", "--parallel", str(jobs)])
        name = ext.name.split(".")[-1] + sysconfig.get_config_var("EXT_SUFFIX")
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(os.path.join(build, "python", "smx", name), dest)
        # a CUDA build (nvcc found: -DSMX_CUDA=AUTO) also made smx._smx_cuda for smx.torch's CUDA tensors
        cuda = "_smx_cuda" + sysconfig.get_config_var("EXT_SUFFIX")
        if os.path.exists(os.path.join(build, "python", "smx", cuda)):
            shutil.copyfile(os.path.join(build, "python", "smx", cuda), os.path.join(os.path.dirname(dest), cuda))


setup(
    version=library_version(),
    ext_modules=[Extension("smx._smx", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # beside the CMake build trees (build*/ in .gitignore), not inside ./build
    options={"build": {"build_base": "build-pip"}},
)
