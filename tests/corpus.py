"""The shared test corpus, decoded once into a cache for every test.

decode.sh skips files already decoded (it checks their sha256), and a lock
keeps two tests that start together from decoding the same file at once.
"""
import fcntl
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(HERE)


def default_shared():
    return os.environ.get("QUALE_SHARED_DIR", os.path.join(SOURCE_ROOT, "..", "shared"))


def default_cache():
    return os.environ.get("QUALE_CORPUS_CACHE", os.path.join(SOURCE_ROOT, ".cache", "corpus"))


def ensure_decoded(shared, cache):
    """Decodes the corpus of `shared` into `cache`; raises on failure."""
    corpus = os.path.join(shared, "corpus")
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(cache, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        proc = subprocess.run([os.path.join(corpus, "decode.sh"), cache], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError("decoding the corpus failed:\n" + proc.stdout + proc.stderr)
