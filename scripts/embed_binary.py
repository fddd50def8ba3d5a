#!/usr/bin/env python3
"""Writes a binary file (a CUDA fatbin, a SPIR-V module) as a C array.

usage: embed_binary.py INPUT OUTPUT.c SYMBOL
The array is 16-byte aligned (loaders read it as words) and followed by a
size_t SYMBOL_size.
"""
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, dst, symbol = sys.argv[1:]
    data = open(src, "rb").read()
    lines = []
    for i in range(0, len(data), 16):
        lines.append("    " + ", ".join(f"0x{b:02x}" for b in data[i:i + 16]) + ",")
    with open(dst, "w") as f:
        f.write(f"/* Generated from {src.split('/')[-1]} by scripts/embed_binary.py: do not edit. */\n")
        f.write("#include <stddef.h>\n\n")
        f.write(f"extern const unsigned char {symbol}[];\n")
        f.write(f"extern const size_t {symbol}_size;\n\n")
        f.write(f"_Alignas(16) const unsigned char {symbol}[] = {{\n")
        f.write("\n".join(lines) + "\n};\n\n")
        f.write(f"const size_t {symbol}_size = {len(data)};\n")


if __name__ == "__main__":
    main()
