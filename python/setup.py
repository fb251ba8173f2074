"""Builds headroom's native extension with the repository's CMake build (the library the CLI
links), then packages it with the pure-Python modules in headroom/.

The CMake build folder is $HEADROOM_BUILD_DIR, else the repository's build/ (the CLI's own build,
so the library is compiled once and ccache is reused). Offline: nothing is downloaded.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


class CMakeExtension(Extension):
    def __init__(self, name: str) -> None:
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        build = Path(os.environ.get("HEADROOM_BUILD_DIR") or ROOT / "build").resolve()
        configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-DHEADROOM_PYTHON=ON",
                     f"-DPython_EXECUTABLE={sys.executable}"]
        if not (build / "CMakeCache.txt").exists():
            configure.append("-DCMAKE_BUILD_TYPE=RelWithDebInfo")
        subprocess.run(configure, check=True)
        jobs = os.environ.get("HEADROOM_BUILD_JOBS", "2")
        subprocess.run(["cmake", "--build", str(build), "--target", "headroom_python", "-j", jobs], check=True)
        built = list((build / "python" / "headroom").glob("_headroom*.so"))
        if not built:
            raise RuntimeError(f"the build made no _headroom module in {build / 'python' / 'headroom'}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


setup(ext_modules=[CMakeExtension("headroom._headroom")], cmdclass={"build_ext": CMakeBuild})
