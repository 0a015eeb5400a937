"""Build hook: records where libmint is installed, so `import mint` finds it with no
environment variable. The library directory comes from MINT_PREFIX (the prefix given to
`cmake --install build --prefix P`), else from `pkg-config --variable=libdir mint`; it is
written to mint/_config.py in the built package (never into the source tree). With neither,
nothing is recorded and mint falls back to MINT_LIBRARY and the system's loader at run time."""

import glob
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py


def find_libdir():
    prefix = os.environ.get("MINT_PREFIX")
    if prefix:
        hits = sorted(glob.glob(os.path.join(prefix, "lib*", "libmint.so.0"))
                      + glob.glob(os.path.join(prefix, "lib*", "*", "libmint.so.0")))
        if not hits:
            raise SystemExit(f"MINT_PREFIX={prefix}: no lib*/libmint.so.0 under it "
                             "(run `cmake --install build --prefix {prefix}` first)")
        return os.path.dirname(os.path.abspath(hits[0]))
    if shutil.which("pkg-config"):
        r = subprocess.run(["pkg-config", "--variable=libdir", "mint"], capture_output=True,
                           text=True)
        d = r.stdout.strip()
        if r.returncode == 0 and d and os.path.exists(os.path.join(d, "libmint.so.0")):
            return d
    return None


class build_py_with_config(build_py):
    def run(self):
        super().run()
        libdir = find_libdir()
        path = os.path.join(self.build_lib, "mint", "_config.py")
        with open(path, "w") as f:
            f.write("# Written by setup.py at install time: where libmint.so.0 was found.\n")
            f.write(f"LIBDIR = {libdir!r}\n")


setup(cmdclass={"build_py": build_py_with_config})
