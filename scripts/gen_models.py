#!/usr/bin/env python3
"""Writes src/models/builtin_models.c from the published VMAF model files.

Usage: scripts/gen_models.py [--output FILE] [SOURCE ...]

Each SOURCE is a model file or a directory of them (searched one level
down too, as Netflix's vmaf repository keeps the v1 models in
model/vmaf_v1.0.16/); default: ../shared/models next to the source tree.
FILE defaults to src/models/builtin_models.c.  Every *.json found becomes
a built-in model whose version is the file name without ".json"; a
version found twice must be the same file.  The C form holds the same numbers
as the JSON file and its embedded libsvm text: the generator checks what the
C loader (src/model.c) checks and writes each number as Python's repr() of
float(text), which a C compiler reads back to the same double that strtod()
gives for the original text.  Option values of feature_opts_dicts keep their
text as written, because libvmaf normalises them through strtof() and "%g"
at load time, and src/model.c does the same for built-in and file models.

The output only depends on the input files, so running the script twice
gives the same file; the build does not run it.
"""

import argparse
import json
import math
import os
import re
import sys

# libvmaf's order of built-in models, then any other file by name.
PREFERRED_ORDER = ["vmaf_v0.6.1", "vmaf_v0.6.1neg", "vmaf_4k_v0.6.1", "vmaf_4k_v0.6.1neg",
                   "vmaf_b_v0.6.3",
                   "vmaf_v1.0.16_3d0h", "vmaf_v1.0.16_5d0h", "vmaf_v1.0.16_1d5h_2160",
                   "vmaf_v1.0.16_3d0h_2160", "vmaf_v1.0.16_hfr_3d0h", "vmaf_v1.0.16_hfr_5d0h",
                   "vmaf_v1.0.16_hfr_1d5h_2160", "vmaf_v1.0.16_hfr_3d0h_2160",
                   "vmaf_float_v0.6.1", "vmaf_float_v0.6.1neg", "vmaf_float_4k_v0.6.1",
                   "vmaf_float_b_v0.6.3"]

MODEL_TYPES = {
    "LIBSVMNUSVR": "MODEL_TYPE_SVM_NUSVR",
    "BOOTSTRAP_LIBSVMNUSVR": "MODEL_TYPE_BOOTSTRAP_SVM_NUSVR",
    "RESIDUEBOOTSTRAP_LIBSVMNUSVR": "MODEL_TYPE_RESIDUE_BOOTSTRAP_SVM_NUSVR",
}
NORM_TYPES = {"none": "MODEL_NORM_NONE", "linear_rescale": "MODEL_NORM_LINEAR_RESCALE"}

MAX_FEATURES = 64  # libvmaf's MAX_FEATURE_COUNT
MAX_KNOTS = 10     # libvmaf's MAX_KNOT_COUNT

DECIMAL = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


class ModelError(Exception):
    pass


class Number(str):
    """A JSON number, kept as written."""


def reject_duplicates(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise ModelError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def load_json(path):
    with open(path, "rb") as f:
        data = f.read()
    return json.loads(data.decode("utf-8"), object_pairs_hook=reject_duplicates,
                      parse_float=Number, parse_int=Number,
                      parse_constant=lambda c: (_ for _ in ()).throw(
                          ModelError(f"{c} is not JSON")))


def number(value, where):
    if not isinstance(value, Number):
        raise ModelError(f"{where}: expected a number")
    v = float(value)
    if not math.isfinite(v):
        raise ModelError(f"{where}: number out of range")
    return v


def decimal(token, where):
    if not DECIMAL.match(token):
        raise ModelError(f"{where}: invalid number {token!r}")
    v = float(token)
    if not math.isfinite(v):
        raise ModelError(f"{where}: number out of range")
    return v


def parse_libsvm(text, dimension, where):
    """The nu-SVR of a libsvm model text: gamma, rho, coefficients, dense SVs."""
    pos = 0
    header = {}
    tokens = re.finditer(r"\S+", text)
    counts = {"label": 0, "probA": 0, "probB": 0, "nr_sv": 0, "rho": 0}
    for match in tokens:
        tok = match.group(0)
        if tok == "SV":
            pos = match.end()
            break
        if tok in ("svm_type", "kernel_type"):
            header[tok] = next(tokens).group(0)
        elif tok in ("gamma", "coef0", "degree", "nr_class", "total_sv"):
            header[tok] = next(tokens).group(0)
        elif tok in counts:
            nr_class = int(header.get("nr_class", "0"))
            n = nr_class if tok in ("label", "nr_sv") else nr_class * (nr_class - 1) // 2
            header[tok] = [next(tokens).group(0) for _ in range(n)]
        else:
            raise ModelError(f"{where}: unknown text {tok!r} in the libsvm model")
    else:
        raise ModelError(f"{where}: no SV line in the libsvm model")
    if header.get("svm_type") not in ("nu_svr", "epsilon_svr"):
        raise ModelError(f"{where}: svm_type must be nu_svr")
    if header.get("kernel_type") != "rbf":
        raise ModelError(f"{where}: kernel_type must be rbf")
    if header.get("nr_class") != "2":
        raise ModelError(f"{where}: nr_class must be 2")
    gamma = decimal(header["gamma"], where + " gamma")
    rho_list = header.get("rho")
    if not rho_list or len(rho_list) != 1:
        raise ModelError(f"{where}: rho missing")
    rho = decimal(rho_list[0], where + " rho")
    total = int(header["total_sv"])

    # The SV lines start after the line break that ends "SV".
    nl = text.find("\n", pos)
    rest = text[nl + 1:] if nl >= 0 else ""
    lines = rest.split("\n")
    coef, sv = [], []
    for i in range(total):
        if i >= len(lines):
            raise ModelError(f"{where}: fewer support vectors than total_sv")
        fields = lines[i].split()
        if not fields:
            raise ModelError(f"{where}: empty support vector line {i + 1}")
        coef.append(decimal(fields[0], f"{where} SV {i + 1}"))
        row = [0.0] * dimension
        last = 0
        for field in fields[1:]:
            index, sep, value = field.partition(":")
            if not sep or not index.isdigit():
                raise ModelError(f"{where}: bad SV entry {field!r}")
            index = int(index)
            if index <= last or index > dimension:
                raise ModelError(f"{where}: SV index {index} out of order or range")
            last = index
            row[index - 1] = decimal(value, f"{where} SV {i + 1}")
        sv.append(row)
    if any(line.strip() for line in lines[total:]):
        raise ModelError(f"{where}: more support vectors than total_sv")
    return gamma, rho, coef, sv


def c_double(v):
    r = repr(float(v))
    return r if ("." in r or "e" in r or "n" in r) else r + ".0"


def c_string(s):
    out = []
    for ch in s:
        o = ord(ch)
        if ch in "\\\"":
            out.append("\\" + ch)
        elif 0x20 <= o < 0x7f:
            out.append(ch)
        else:
            out.extend(f"\\{b:03o}" for b in ch.encode("utf-8"))
    return '"' + "".join(out) + '"'


def ident(s):
    return re.sub(r"[^A-Za-z0-9]", "_", s)


class Writer:
    def __init__(self):
        self.parts = []
        self.cache = {}  # identical arrays are written once

    def array(self, ctype, name, items, per_line):
        key = (ctype, tuple(items))
        if key in self.cache:
            return self.cache[key]
        lines = []
        for i in range(0, len(items), per_line):
            lines.append("    " + ", ".join(items[i:i + per_line]) + ",")
        self.parts.append(f"static const {ctype} {name}[{len(items)}] = {{\n"
                          + "\n".join(lines) + "\n};\n")
        self.cache[key] = name
        return name


def model_desc(w, prefix, md, where):
    """Writes the arrays of one model_dict; returns its ModelDesc initialiser."""
    if not isinstance(md, dict):
        raise ModelError(f"{where}: expected an object")
    names = md.get("feature_names")
    if not isinstance(names, list) or not names or len(names) > MAX_FEATURES:
        raise ModelError(f"{where}.feature_names: expected 1 to {MAX_FEATURES} names")
    n = len(names)

    mtype = md.get("model_type")
    mtype_c = "MODEL_TYPE_UNKNOWN" if mtype is None else MODEL_TYPES.get(mtype)
    if mtype_c is None:
        raise ModelError(f"{where}.model_type: unknown {mtype!r}")
    norm = NORM_TYPES.get(md.get("norm_type"))
    if norm is None:
        raise ModelError(f"{where}.norm_type: unknown {md.get('norm_type')!r}")

    # Features and their options.
    dicts = md.get("feature_opts_dicts", [])
    if not isinstance(dicts, list) or len(dicts) > n:
        raise ModelError(f"{where}.feature_opts_dicts: at most one object per feature")
    features = []
    for i, name in enumerate(names):
        opts = dicts[i] if i < len(dicts) else {}
        if not isinstance(opts, dict):
            raise ModelError(f"{where}.feature_opts_dicts[{i}]: expected an object")
        opt_name = "NULL"
        if opts:
            items = []
            for key, value in opts.items():
                if isinstance(value, bool):
                    kind, text = "MODEL_OPTION_BOOL", "true" if value else "false"
                elif isinstance(value, Number):
                    number(value, f"{where}.feature_opts_dicts[{i}].{key}")
                    kind, text = "MODEL_OPTION_NUMBER", str(value)
                elif isinstance(value, str):
                    kind, text = "MODEL_OPTION_STRING", value
                else:
                    raise ModelError(f"{where}.feature_opts_dicts[{i}].{key}: bad value")
                items.append(f"{{ {c_string(key)}, {kind}, {c_string(text)} }}")
            opt_name = w.array("ModelOptionDesc", f"{prefix}_options{i}", items, 1)
        features.append(f"{{ {c_string(name)}, {len(opts)}, {opt_name} }}")
    features_name = w.array("ModelFeatureDesc", f"{prefix}_features", features, 1)

    slopes_name = intercepts_name = "NULL"
    if norm == "MODEL_NORM_LINEAR_RESCALE":
        for field in ("slopes", "intercepts"):
            values = md.get(field)
            if not isinstance(values, list) or len(values) != n + 1:
                raise ModelError(f"{where}.{field}: expected {n + 1} numbers")
            vals = [c_double(number(v, f"{where}.{field}")) for v in values]
            name = w.array("double", f"{prefix}_{field}", vals, 4)
            if field == "slopes":
                slopes_name = name
            else:
                intercepts_name = name

    clip = md.get("score_clip")
    clip_present = clip is not None
    clip_min = clip_max = 0.0
    if clip_present:
        if not isinstance(clip, list) or len(clip) != 2:
            raise ModelError(f"{where}.score_clip: expected [min, max]")
        clip_min = number(clip[0], f"{where}.score_clip")
        clip_max = number(clip[1], f"{where}.score_clip")

    st = md.get("score_transform")
    t = {"present": st is not None, "enabled": False, "p_enabled": [False] * 3,
         "p": [0.0] * 3, "knots_enabled": False, "knots": [],
         "out_lte_in": False, "out_gte_in": False}
    if st is not None:
        if not isinstance(st, dict):
            raise ModelError(f"{where}.score_transform: expected an object")
        if "enabled" in st:
            if not isinstance(st["enabled"], bool):
                raise ModelError(f"{where}.score_transform.enabled: expected a boolean")
            t["enabled"] = st["enabled"]
        for k in range(3):
            v = st.get(f"p{k}")
            if v is not None:
                t["p_enabled"][k] = True
                t["p"][k] = number(v, f"{where}.score_transform.p{k}")
        if st.get("knots") is not None:
            knots = st["knots"]
            if not isinstance(knots, list) or len(knots) > MAX_KNOTS:
                raise ModelError(f"{where}.score_transform.knots: bad list")
            t["knots_enabled"] = True
            for k in knots:
                if not isinstance(k, list) or len(k) != 2:
                    raise ModelError(f"{where}.score_transform.knots: expected [x, y] pairs")
                t["knots"].append((number(k[0], "knot"), number(k[1], "knot")))
        for field in ("out_lte_in", "out_gte_in"):
            if field in st:
                if not isinstance(st[field], str):
                    raise ModelError(f"{where}.score_transform.{field}: expected a string")
                t[field] = st[field] == "true"
    knots_name = "NULL"
    if t["knots"]:
        knots_name = w.array("ModelKnot", f"{prefix}_knots",
                             [f"{{ {c_double(x)}, {c_double(y)} }}" for x, y in t["knots"]], 1)

    svm_text = md.get("model")
    if not isinstance(svm_text, str):
        raise ModelError(f"{where}.model: expected the libsvm model text")
    gamma, rho, coef, sv = parse_libsvm(svm_text, n, f"{where}.model")
    coef_name = w.array("double", f"{prefix}_coef", [c_double(c) for c in coef], 4)
    sv_name = w.array("double", f"{prefix}_sv",
                      [c_double(v) for row in sv for v in row], n)

    # chroma_correction_parameter: the one feature naming "speed_chroma" is
    # corrected from the one naming "adm3" (src/model.c checks the same).
    chroma = ""
    if "chroma_correction_parameter" in md:
        c = number(md["chroma_correction_parameter"], f"{where}.chroma_correction_parameter")
        guided = [i for i, f in enumerate(names) if "speed_chroma" in f]
        guiding = [i for i, f in enumerate(names) if "adm3" in f]
        if c == 0 or len(guided) != 1 or len(guiding) != 1:
            raise ModelError(f"{where}.chroma_correction_parameter: needs a non-zero value, "
                             "one speed_chroma feature and one adm3 feature")
        chroma = (f"        .chroma_correction = true,\n"
                  f"        .chroma_correction_parameter = {c_double(c)},\n"
                  f"        .chroma_guided = {guided[0]},\n"
                  f"        .chroma_guiding = {guiding[0]},\n")

    b = lambda x: "true" if x else "false"
    p_en = ", ".join(b(x) for x in t["p_enabled"])
    p_val = ", ".join(c_double(x) for x in t["p"])
    return (f"    {{\n"
            f"        .type = {mtype_c},\n"
            f"        .norm = {norm},\n"
            f"        .feature_count = {n},\n"
            f"        .features = {features_name},\n"
            f"        .slopes = {slopes_name},\n"
            f"        .intercepts = {intercepts_name},\n"
            f"        .clip_present = {b(clip_present)},\n"
            f"        .clip_min = {c_double(clip_min)},\n"
            f"        .clip_max = {c_double(clip_max)},\n"
            f"        .transform = {{\n"
            f"            .present = {b(t['present'])},\n"
            f"            .enabled = {b(t['enabled'])},\n"
            f"            .p_enabled = {{ {p_en} }},\n"
            f"            .p = {{ {p_val} }},\n"
            f"            .knots_enabled = {b(t['knots_enabled'])},\n"
            f"            .knot_count = {len(t['knots'])},\n"
            f"            .knots = {knots_name},\n"
            f"            .out_lte_in = {b(t['out_lte_in'])},\n"
            f"            .out_gte_in = {b(t['out_gte_in'])},\n"
            f"        }},\n"
            + chroma +
            f"        .svm = {{\n"
            f"            .gamma = {c_double(gamma)},\n"
            f"            .rho = {c_double(rho)},\n"
            f"            .sv_count = {len(coef)},\n"
            f"            .dimension = {n},\n"
            f"            .coef = {coef_name},\n"
            f"            .sv = {sv_name},\n"
            f"        }},\n"
            f"    }},\n")


def model_file(w, version, path):
    doc = load_json(path)
    if not isinstance(doc, dict):
        raise ModelError(f"{path}: expected an object")
    prefix = ident(version)
    if "model_dict" in doc:
        descs = [model_desc(w, f"{prefix}", doc["model_dict"], "model_dict")]
        collection = False
    else:
        # A bootstrap collection: "0" is the main model, "1".. the bootstrap
        # models, read until the first missing number (as libvmaf does).
        descs = []
        i = 0
        numbered = [k for k in doc if k.isdigit()]
        while str(i) in doc:
            entry = doc[str(i)]
            if not isinstance(entry, dict) or "model_dict" not in entry:
                raise ModelError(f"{path}: \"{i}\".model_dict missing")
            descs.append(model_desc(w, f"{prefix}_{i}", entry["model_dict"],
                                    f"\"{i}\".model_dict"))
            i += 1
        if len(descs) < 2:
            raise ModelError(f"{path}: neither model_dict nor bootstrap models \"0\", \"1\"..")
        if len(numbered) != len(descs):
            raise ModelError(f"{path}: bootstrap model \"{len(descs)}\" is missing")
        collection = True
    w.parts.append(f"static const ModelDesc {prefix}_models[{len(descs)}] = {{\n"
                   + "".join(descs) + "};\n")
    return (f"    {{ {c_string(version)}, {'true' if collection else 'false'}, "
            f"{len(descs)}, {prefix}_models }},\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", default=os.path.join(root, "src", "models", "builtin_models.c"))
    ap.add_argument("sources", nargs="*", default=[os.path.join(root, "..", "shared", "models")])
    args = ap.parse_args()

    paths = {}
    for source in args.sources:
        found = [source] if os.path.isfile(source) else [
            os.path.join(d, f) for d in [source] + sorted(
                os.path.join(source, e) for e in os.listdir(source)
                if os.path.isdir(os.path.join(source, e)))
            for f in sorted(os.listdir(d)) if f.endswith(".json")]
        for path in found:
            version = os.path.basename(path)[:-5]
            if version in paths:
                with open(paths[version], "rb") as a, open(path, "rb") as b:
                    if a.read() != b.read():
                        sys.exit(f"gen_models.py: {version}.json differs in {paths[version]} "
                                 f"and {path}")
                continue
            paths[version] = path
    versions = sorted(paths, key=lambda v: (PREFERRED_ORDER.index(v) if v in PREFERRED_ORDER
                                            else len(PREFERRED_ORDER), v))
    if not versions:
        sys.exit(f"gen_models.py: no *.json in {' '.join(args.sources)}")

    w = Writer()
    entries = []
    for v in versions:
        try:
            entries.append(model_file(w, v, paths[v]))
        except (ModelError, ValueError, KeyError, StopIteration) as e:
            sys.exit(f"gen_models.py: {v}.json: {e}")

    file_list = ", ".join(v + ".json" for v in versions)
    header = (
        "/*\n"
        " * Generated by scripts/gen_models.py from the published VMAF models\n"
        f" * ({file_list})\n"
        " * of Netflix's vmaf repository (https://github.com/Netflix/vmaf, model/).\n"
        " * Do not edit: change the script or the models and run it again.\n"
        " *\n"
        " * The model data is Copyright (c) 2020 Netflix, Inc., distributed under\n"
        " * the BSD+Patent license (BSD-2-Clause-Patent): see src/models/LICENSE.\n"
        " */\n"
        "#include <stddef.h>\n\n"
        "#include \"model.h\"\n\n")
    table = ("const ModelBuiltin model_builtins[] = {\n" + "".join(entries) + "};\n\n"
             f"const unsigned model_builtin_count = {len(entries)};\n\n"
             "const char *const model_builtin_version_list[] = {\n"
             + "".join(f"    {c_string(v)},\n" for v in versions)
             + "    NULL,\n};\n")
    text = header + "\n".join(w.parts) + "\n" + table
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w", newline="\n") as f:
        f.write(text)


if __name__ == "__main__":
    main()
