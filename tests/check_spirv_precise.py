#!/usr/bin/env python3
"""Every floating-point operation of the given SPIR-V modules is NoContraction.

usage: check_spirv_precise.py MODULE.spv ...

The shaders marked `precise` in the metric list (src/meson.build)
reproduce a C reference's float and double arithmetic operation for
operation, on every driver.  A driver may fuse a multiply and an add, and
an optimiser may reassociate, wherever an operation is not decorated
NoContraction (GLSL's `precise`); lavapipe, where the tests run, rarely
does, other drivers do.  So a forgotten `precise` would pass every parity
test here and fail elsewhere: this checks the decoration itself.  Each
module must have at least one floating-point operation (a module without
any does not belong on the list).
"""
import struct
import sys

NO_CONTRACTION = 42
OP_DECORATE = 71
OP_NAMES = {
    127: "OpFNegate", 129: "OpFAdd", 131: "OpFSub", 133: "OpFMul", 136: "OpFDiv",
    140: "OpFRem", 141: "OpFMod", 142: "OpVectorTimesScalar", 143: "OpMatrixTimesScalar",
    144: "OpVectorTimesMatrix", 145: "OpMatrixTimesVector", 146: "OpMatrixTimesMatrix",
    148: "OpDot",
}


def check(path):
    data = open(path, "rb").read()
    words = struct.unpack("<%dI" % (len(data) // 4), data)
    if len(words) < 5 or words[0] != 0x07230203:
        print(f"{path}: not a SPIR-V module")
        return False
    decorated, ops = set(), []
    i = 5
    while i < len(words):
        count, opcode = words[i] >> 16, words[i] & 0xFFFF
        if count == 0:
            print(f"{path}: malformed instruction at word {i}")
            return False
        if opcode == OP_DECORATE and words[i + 2] == NO_CONTRACTION:
            decorated.add(words[i + 1])
        elif opcode in OP_NAMES:
            ops.append((OP_NAMES[opcode], words[i + 2]))
        i += count
    bare = [(name, result) for name, result in ops if result not in decorated]
    for name, result in bare[:10]:
        print(f"{path}: {name} %{result} is not NoContraction (a value not marked precise)")
    if not ops:
        print(f"{path}: no floating-point operation")
    print(f"{path}: {len(ops)} floating-point operations, {len(bare)} not NoContraction")
    return bool(ops) and not bare


results = [check(path) for path in sys.argv[1:]]
print(f"{results.count(True)} passed, {results.count(False)} failed")
sys.exit(0 if results and all(results) else 1)
