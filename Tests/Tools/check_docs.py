#!/usr/bin/env python3
"""Lints the repository's documentation; `make test` runs it before the Swift suites.

Two checks, each printing `file:line: problem` and exiting 1 when anything is found:

- every Markdown link to a file inside the repository points at a file or folder that exists, and a
  `#fragment` points at a heading of that file (GitHub's anchor rules); so does every `docs/….md` (or
  `plugins/…`, `deploy/…`) path that code, configs and scripts name in their text;
- nothing states history instead of the present: session numbers, "(was …)", "it was N", dated
  change notes ("November 2026"), in Markdown, code comments, configs and scripts.

Usage: check_docs.py [ROOT]   (default: the repository this file lives in)
"""
import os
import re
import sys

SKIPPED_DIRS = {".git", "var", "node_modules", "__pycache__"}
TEXT_SUFFIXES = (".md", ".swift", ".py", ".yaml", ".yml", ".conf", ".service", ".sh", "Makefile", "acl", "run")
LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|!\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
HISTORY = [
    (re.compile(r"\b[Ss]ession \d+\b"), "names a development session"),
    (re.compile(r"\buntil session\b"), "names a development session"),
    (re.compile(r"\((?:it )?was [^)]*\)"), "says what a value was: state the present"),
    (re.compile(r"\bit was \d"), "says what a value was: state the present"),
    (re.compile(rf"\b(?:{MONTHS}) 20\d\d\b"), "a dated change note: history belongs in git log"),
    (re.compile(r"\bwas [\d,.]+ ?(?:→|->) ?(?:now )?[\d,.]+"), "a before/after figure: state the present"),
]
# A Markdown page named in the text of code, configs and scripts, from the repository's root.
PAGE_REFERENCE = re.compile(r"(?<![\w/.-])((?:docs|plugins|deploy)/[\w./-]*\.md)(?:#([\w-]+))?")
# Files whose text quotes these patterns on purpose.
HISTORY_EXEMPT = {os.path.join("Tests", "Tools", "check_docs.py")}


def text_files(root):
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in SKIPPED_DIRS and not d.startswith(".build"))
        for name in sorted(files):
            if name.endswith(TEXT_SUFFIXES):
                yield os.path.join(directory, name)


def slug(heading):
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        found, counts, fenced = set(), {}, False
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.lstrip().startswith("```"):
                    fenced = not fenced
                    continue
                match = None if fenced else HEADING.match(line)
                if match:
                    base = slug(match.group(2))
                    count = counts.get(base, 0)
                    counts[base] = count + 1
                    found.add(base if count == 0 else f"{base}-{count}")
        cache[path] = found
    return cache[path]


def markdown_lines(path):
    """The lines of a Markdown file outside fenced code blocks, with inline code removed."""
    fenced = False
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            if not fenced:
                yield number, re.sub(r"`[^`]*`", "", line)


def check_links(root, path):
    problems = []
    for number, line in markdown_lines(path):
        for match in LINK.finditer(line):
            target = match.group(1) or match.group(2)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # http:, https:, mailto:
            file_part, _, fragment = target.partition("#")
            resolved = path if not file_part else os.path.normpath(os.path.join(os.path.dirname(path), file_part))
            where = f"{os.path.relpath(path, root)}:{number}"
            if not os.path.exists(resolved):
                problems.append(f"{where}: link to {target}: no such file")
            elif fragment and resolved.endswith(".md") and fragment not in anchors(resolved):
                problems.append(f"{where}: link to {target}: no heading with that anchor")
    return problems


def check_page_references(root, path):
    problems = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            for match in PAGE_REFERENCE.finditer(line):
                page, fragment = match.group(1), match.group(2)
                resolved = os.path.join(root, page)
                where = f"{os.path.relpath(path, root)}:{number}"
                if "NAME" in page or "<" in page:
                    continue  # a placeholder such as plugins/NAME/README.md
                if not os.path.exists(resolved):
                    problems.append(f"{where}: names {page}: no such file")
                elif fragment and fragment not in anchors(resolved):
                    problems.append(f"{where}: names {page}#{fragment}: no heading with that anchor")
    return problems


def check_history(root, path):
    if os.path.relpath(path, root) in HISTORY_EXEMPT:
        return []
    problems = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            for pattern, why in HISTORY:
                match = pattern.search(line)
                if match:
                    problems.append(f"{os.path.relpath(path, root)}:{number}: \"{match.group(0)}\": {why}")
    return problems


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    problems, checked = [], 0
    for path in text_files(root):
        checked += 1
        if path.endswith(".md"):
            problems += check_links(root, path)
        elif os.path.relpath(path, root) not in HISTORY_EXEMPT:
            problems += check_page_references(root, path)
        problems += check_history(root, path)
    for problem in problems:
        print(problem)
    print(f"Documentation check: {checked} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
