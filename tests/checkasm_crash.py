#!/usr/bin/env python3
"""checkasm survives a kernel that crashes: `checkasm --test crash_recovery`
runs a "kernel" that writes through a null pointer; checkasm must report
it as crashed, go on with the tests after it, print its summary and exit
with status 1 (a failure), not die of the signal."""
import os
import subprocess
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import tally  # noqa: E402

checkasm = sys.argv[1]
env = dict(os.environ)
# Under AddressSanitizer (scripts/sanitize.sh) the signal is checkasm's to
# handle, as it is in a plain build.
env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"), "handle_segv=0",
                                              "allow_user_segv_handler=1"]))
run = subprocess.run([checkasm, "--test", "crash_recovery"], capture_output=True, text=True,
                     timeout=120, env=env)
out = run.stdout
tally.check(run.returncode == 1, f"exit status 1 (a failure, not a signal): got {run.returncode}")
lines = out.splitlines()
crashed = [l for l in lines if "crash_recovery" in l and "CRASHED" in l]
tally.check(len(crashed) == 1, "one line reports crash_recovery as CRASHED")
tally.check(any("Segmentation fault" in l or "SIGSEGV" in l for l in crashed),
        "the line names the signal")
after = lines.index(crashed[0]) if crashed else len(lines)
tally.check("speed" in lines[after:], "the tests after the crash still ran (speed's header follows)")
tally.check(lines and lines[-1] == "checkasm: 1 kernel checks, 1 failed",
        f"the summary counts the crash as a failed check: {lines[-1] if lines else ''!r}")
sys.exit(tally.finish())
