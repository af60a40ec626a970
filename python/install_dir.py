"""Prints where the running python3 looks for pure-Python packages under
the install prefix argv[1] (used by python/meson.build).

Debian's python3 reads /usr/local/lib/pythonX.Y/dist-packages for packages
installed under /usr/local (its default "posix_local" scheme), which
meson's own choice (PREFIX/lib/python3/dist-packages) misses; other
Pythons use their prefix scheme."""
import sys
import sysconfig

prefix = sys.argv[1].rstrip("/")
default = sysconfig.get_path("purelib")
if prefix != "/usr" and default.startswith(prefix + "/"):
    print(default)
else:
    print(sysconfig.get_path("purelib", "posix_prefix", vars={"base": prefix, "platbase": prefix}))
