#!/usr/bin/env python3
"""quale installed as a user installs it: `meson install` and the .deb.

1. `meson install --destdir` into a staging root: a C program built with
   `pkg-config --cflags --libs quale` prints quale_version() (the
   project's version), one built with `pkg-config libvmaf` prints
   vmaf_version() (which names quale).
2. scripts/deb.sh makes the .deb from the build tree: its files (the tool,
   libquale, libvmaf.so.3, the headers, both .pc files, the copyright with
   the VMAF models' licence) and its Depends (no GPU runtime, no FFmpeg
   library: quale loads them with dlopen).
3. As root, where nothing of the package is on the machine yet: `apt-get
   install ./quale_*.deb` for real; `quale` from PATH scores an mp4 pair of
   the corpus with the numbers of the build tree's tool, ldconfig's cache
   has libquale and libvmaf.so.3, the two programs build against the
   system's pkg-config files and run without LD_LIBRARY_PATH; then the
   package is removed, leaving the machine as it was.  Otherwise the
   package is unpacked into a scratch root and checked there, and the test
   says what it could not check.

Ends with "N passed, M failed".
"""
import argparse
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import corpus as shared_corpus  # noqa: E402
from tally import check, finish  # noqa: E402

PAIR = "dune_576x324_x264crf28"  # an mp4 distorted against its Matroska reference
# What the package must hold (below /usr).
PACKAGE_FILES = ["bin/quale", "include/quale/quale.h", "include/libvmaf/libvmaf.h",
                 "include/libvmaf/libvmaf_cuda.h", "share/doc/quale/copyright"]
PACKAGE_LIBS = ["libquale.so.0", "libquale.so", "libvmaf.so.3", "libvmaf.so",
                "pkgconfig/quale.pc", "pkgconfig/libvmaf.pc"]
# Loaded with dlopen when needed: never a dependency of the package.
NOT_DEPENDED_ON = ["libcuda", "libvulkan", "libamdhip", "libavformat", "libavcodec",
                   "libavutil", "libswscale"]
APT_LOCK = os.path.join(os.environ.get("TMPDIR", "/tmp"), "quale-apt.lock")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def without_ld_path(extra=None):
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env.update(extra or {})
    return env


def build_client(source, pkg, out, pc_env):
    """Compiles SOURCE with `pkg-config --cflags --libs PKG`; the binary or None."""
    flags = run(["pkg-config", "--cflags", "--libs", pkg], env=pc_env)
    check(flags.returncode == 0, f"pkg-config {pkg}: {flags.stderr.strip()}")
    if flags.returncode:
        return None
    cc = run(["cc", source, "-o", out, *flags.stdout.split()])
    check(cc.returncode == 0, f"building against {pkg}.pc: {cc.stderr[-600:]}")
    return out if cc.returncode == 0 else None


def check_clients(tmp, where, pc_env, run_env, version):
    """Both programs built through pkg-config and run with RUN_ENV."""
    for name, pkg, want in (("quale_client", "quale", version),
                            ("libvmaf_client", "libvmaf", f"(quale {version})")):
        exe = build_client(os.path.join(HERE, "install", f"{name}.c"), pkg,
                           os.path.join(tmp, f"{name}-{where}"), pc_env)
        if exe:
            p = run([exe], env=run_env)
            check(p.returncode == 0 and want in p.stdout,
                  f"{where}: {name} printed {p.stdout.strip()!r} (exit {p.returncode}), "
                  f"expected {want!r}: {p.stderr.strip()}")
            print(f"{where}: {name} (pkg-config {pkg}): {p.stdout.strip()}", flush=True)


def staged_install(build, tmp, version):
    stage = os.path.join(tmp, "stage")
    p = run(["meson", "install", "-C", build, "--destdir", stage, "--no-rebuild", "--quiet"])
    check(p.returncode == 0, f"meson install --destdir: {p.stderr[-600:]}")
    pcs = [os.path.join(d, f) for d, _, fs in os.walk(stage) for f in fs if f == "quale.pc"]
    check(len(pcs) == 1, f"meson install put {len(pcs)} quale.pc in the staging root")
    if len(pcs) != 1:
        return
    pcdir = os.path.dirname(pcs[0])
    libdir = os.path.dirname(pcdir)
    pc_env = without_ld_path({"PKG_CONFIG_LIBDIR": pcdir, "PKG_CONFIG_SYSROOT_DIR": stage})
    check_clients(tmp, "staged", pc_env, without_ld_path({"LD_LIBRARY_PATH": libdir}), version)


def make_package(source, build, tmp):
    script = os.path.join(source, "scripts", "deb.sh")
    check(os.access(script, os.X_OK), f"no {script} to make the package with")
    if not os.access(script, os.X_OK):
        return None
    p = run([script, build, tmp])
    check(p.returncode == 0, f"scripts/deb.sh: {p.stdout[-400:]}{p.stderr[-800:]}")
    if p.returncode:
        return None
    deb = p.stdout.strip().splitlines()[-1]
    depends = run(["dpkg-deb", "-f", deb, "Depends"]).stdout
    for lib in NOT_DEPENDED_ON:
        check(lib not in depends, f"the package depends on {lib}: {depends.strip()}")
    check("libc6" in depends, f"Depends lacks libc6: {depends.strip()}")
    files = run(["dpkg-deb", "-c", deb]).stdout
    paths = [line.split()[5].lstrip(".") for line in files.splitlines()]
    for want in PACKAGE_FILES:
        check(f"/usr/{want}" in paths, f"the package lacks /usr/{want}")
    for want in PACKAGE_LIBS:
        check(any(p.startswith("/usr/lib/") and p.endswith("/" + want) for p in paths),
              f"the package lacks /usr/lib/.../{want}")
    root = os.path.join(tmp, "root")
    p = run(["dpkg-deb", "-x", deb, root])
    check(p.returncode == 0, f"dpkg-deb -x: {p.stderr}")
    copyright_ = os.path.join(root, "usr", "share", "doc", "quale", "copyright")
    if os.path.exists(copyright_):
        with open(copyright_) as f:
            text = f.read()
        check("Netflix" in text and "BSD-2-Clause-Patent" in text,
              "the copyright file lacks the VMAF models' licence")
    print(f"package: {os.path.basename(deb)}, Depends: {depends.strip()}", flush=True)
    return deb


def scores(quale, ref, dis):
    """The per-frame and pooled values of a default run (no timing)."""
    p = run([quale, "-r", ref, "-d", dis, "--json", "-q", "--threads", "2"])
    if p.returncode:
        return None, p.stderr.strip()
    out = json.loads(p.stdout)
    return {"frames": out["frames"], "pooled": out["pooled_metrics"]}, ""


def check_scores(quale, expected, pair, where):
    got, err = scores(quale, *pair)
    check(got is not None, f"{where}: {quale} failed on the corpus pair: {err}")
    if got is not None:
        check(got == expected, f"{where}: {quale} scores differ from the build tree's")
        print(f"{where}: {quale}: VMAF {got['pooled']['vmaf']['mean']}, "
              f"{len(got['frames'])} frames, the build tree's numbers", flush=True)


def blocking_files(deb):
    """Files of the package that are on this machine already."""
    files = run(["dpkg-deb", "-c", deb]).stdout
    return [p for p in (line.split()[5].lstrip(".") for line in files.splitlines())
            if not p.endswith("/") and os.path.lexists(p)]


def check_python_module(deb, expected, pair):
    """The package's Python module, where the build made one: Debian's
    interpreter imports it from the system's dist-packages (no PYTHONPATH)
    and scores the pair with the tool's numbers."""
    listing = run(["dpkg-deb", "-c", deb]).stdout
    if "dist-packages/quale/__init__.py" not in listing:
        print("the package has no Python module (the build made none)", flush=True)
        return
    code = ("import json, sys, quale; r = quale.score(sys.argv[1], sys.argv[2], threads=2); "
            "print(quale.__file__); print(json.dumps(r.pooled['vmaf']['mean']))")
    env = {k: v for k, v in without_ld_path().items() if k != "PYTHONPATH"}
    p = run(["/usr/bin/python3", "-c", code, *pair], env=env)
    lines = p.stdout.split()
    check(p.returncode == 0 and len(lines) == 2 and lines[0].startswith("/usr/lib/python3/") and
          json.loads(lines[1]) == expected["pooled"]["vmaf"]["mean"],
          f"installed Python module: {p.stdout!r} {p.stderr[-400:]!r}")
    if p.returncode == 0:
        print(f"installed Python module: {lines[0]}: VMAF {lines[-1]}", flush=True)


def installed_check(deb, tmp, expected, pair, version):
    """Installs DEB for real, checks it from PATH, removes it."""
    apt = ["apt-get", "-o", "DPkg::Lock::Timeout=600", "-y", "-qq"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    # One apt run at a time among the project's scripts (scripts/apt.sh).
    with open(APT_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        p = run([*apt, "install", "--no-install-recommends", deb], env=env)
    check(p.returncode == 0, f"apt-get install {deb}: {p.stderr[-800:]}")
    if p.returncode:
        return
    try:
        quale = shutil.which("quale", path=os.environ.get("PATH", "") + ":/usr/bin")
        check(quale == "/usr/bin/quale", f"quale on PATH is {quale}")
        check_scores("quale", expected, pair, "installed")
        cache = run(["ldconfig", "-p"]).stdout
        for lib in ("libquale.so.0", "libvmaf.so.3"):
            check(f"{lib} (" in cache, f"ldconfig's cache lacks {lib}")
        # The system's pkg-config files, no LD_LIBRARY_PATH: the dynamic
        # linker finds the libraries where the package put them.
        check_clients(tmp, "installed", without_ld_path(), without_ld_path(), version)
        check_python_module(deb, expected, pair)
    finally:
        with open(APT_LOCK, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            p = run([*apt, "remove", "quale"], env=env)
        check(p.returncode == 0 and not os.path.exists("/usr/bin/quale"),
              f"removing the package: {p.stderr[-400:]}")
        print("installed, checked and removed", flush=True)


def unpacked_check(deb, tmp, expected, pair, why):
    """The package unpacked into a scratch root, checked there."""
    root = os.path.join(tmp, "root")  # unpacked by make_package()
    check_scores(os.path.join(root, "usr", "bin", "quale"), expected, pair, "unpacked")
    print(f"NOT CHECKED ({why}): installing with apt/dpkg, quale from PATH, ldconfig's "
          "cache, programs built against the installed pkg-config files", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True, help="quale's meson build directory")
    ap.add_argument("--source", required=True, help="quale's source directory")
    ap.add_argument("--quale", required=True, help="the build tree's tool")
    ap.add_argument("--version", required=True, help="the project's version")
    ap.add_argument("--shared", default=shared_corpus.default_shared())
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        staged_install(args.build, tmp, args.version)
        deb = make_package(args.source, args.build, tmp)
        if deb is None:
            return finish()
        corpus = os.path.join(args.shared, "corpus")
        with open(os.path.join(corpus, "manifest.json")) as f:
            pair = next(p for p in json.load(f) if p["name"] == PAIR)
        pair = (os.path.join(corpus, pair["ref"]), os.path.join(corpus, pair["dis"]))
        expected, err = scores(args.quale, *pair)
        check(expected is not None, f"the build tree's quale on {PAIR}: {err}")
        if expected is None:
            return finish()
        blocking = blocking_files(deb)
        if os.geteuid() != 0:
            unpacked_check(deb, tmp, expected, pair, "not root")
        elif blocking or run(["dpkg-query", "-W", "quale"]).returncode == 0:
            unpacked_check(deb, tmp, expected, pair,
                           f"quale or its files are installed already: {blocking[:3]}")
        else:
            installed_check(deb, tmp, expected, pair, args.version)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
