#!/usr/bin/env python3
"""Checks that every class instance a Swift binary allocates with a constant size gets the size its
type metadata declares.

Why: release builds inline code across modules (an initialiser, with its object size, lands in the
module that calls it). SwiftPM recompiles a module only when a direct dependency's module file changes,
so a module that reaches a class through another module can keep the class's old size after a field is
added, and corrupt its heap (Tests/Tools/reproduce_stale_inlining.sh shows it). Package.swift therefore
names every reached target as a direct dependency; `make bench` and `make soak` run this on the release
binaries as a guard.

Usage: check_allocation_sizes.py BINARY...   (exit 1 and a list when any allocation is short or long)
"""
import re
import struct
import subprocess
import sys

CALL_ALLOC = re.compile(r"call\s+[0-9a-f]+ <swift_allocObject@plt>")
SIZE = re.compile(r"mov\s+\$0x([0-9a-f]+),%esi$")
ACCESSOR = re.compile(r"call\s+[0-9a-f]+ <(\S+)CMa>$")
DIRECT = re.compile(r"lea\s+\S+,%rdi\s+# [0-9a-f]+ <(\S+)CN>$")
MOVE_TO = re.compile(r"mov\s+(%\w+),(%\w+)$")
INSTANCE_SIZE_OFFSET = 24  # kind, superclass, flags, instance address point (non-Objective-C runtime)


def symbols(binary):
    out = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    table = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].endswith("CN"):
            table[parts[2][:-2]] = int(parts[0], 16)
    return table


def loader(binary):
    """Reads bytes at a virtual address from the ELF file's loadable segments."""
    data = open(binary, "rb").read()
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    segments = []
    for index in range(phnum):
        kind, _, offset, vaddr, _, filesz, _, _ = struct.unpack_from("<IIQQQQQQ", data, phoff + index * phentsize)
        if kind == 1:
            segments.append((vaddr, filesz, offset))

    def read_u32(address):
        for vaddr, filesz, offset in segments:
            if vaddr <= address < vaddr + filesz:
                return struct.unpack_from("<I", data, offset + address - vaddr)[0]
        return None
    return read_u32


def metadata_owner(recent):
    """The class whose metadata is in %rdi at the allocation: loaded directly (`lea <XCN>`), or the
    result of its accessor (`call <XCMa>`) moved into %rdi, possibly through one other register."""
    wanted = "%rdi"
    for index in range(len(recent) - 1, -1, -1):
        text = recent[index]
        if wanted == "%rdi" and (direct := DIRECT.search(text)):
            return direct.group(1)
        if (move := MOVE_TO.search(text)) and move.group(2) == wanted:
            if move.group(1) == "%rax":
                return accessor_result(recent[:index])
            wanted = move.group(1)
            continue
        if wanted in text.split(",")[-1]:
            return None  # written some other way: not followed
    return None


def accessor_result(recent):
    """The class whose metadata accessor returned what is in %rax at the end of `recent`, if that is how
    %rax was last written."""
    for text in reversed(recent):
        if "call" in text:
            accessor = ACCESSOR.search(text)
            return accessor.group(1) if accessor else None
        if re.search(r",%(rax|eax)$", text):
            return None
    return None


def check(binary):
    metadata = symbols(binary)
    read_u32 = loader(binary)
    disassembly = subprocess.Popen(["objdump", "-d", "--no-show-raw-insn", binary], stdout=subprocess.PIPE, text=True)
    function, recent, problems, checked = "?", [], [], 0
    for line in disassembly.stdout:
        line = line.rstrip()
        if line.endswith(">:"):
            function, recent = line.split("<", 1)[1][:-2], []
            continue
        if CALL_ALLOC.search(line):
            size = next((int(m.group(1), 16) for m in map(SIZE.search, reversed(recent)) if m), None)
            owner = metadata_owner(recent)
            if size is not None and owner in metadata:
                declared = read_u32(metadata[owner] + INSTANCE_SIZE_OFFSET)
                checked += 1
                if declared is not None and declared != size:
                    problems.append(f"{owner}: allocated {size} bytes in {function[:100]}, its metadata says {declared}")
            recent = []
            continue
        recent = (recent + [line])[-12:]
    disassembly.wait()
    return checked, problems


def main():
    failed = False
    for binary in sys.argv[1:]:
        checked, problems = check(binary)
        print(f"allocation sizes: {binary}: {checked} constant-size class allocations checked, {len(problems)} wrong")
        for problem in problems:
            print("  " + problem)
        failed = failed or bool(problems)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
