"""Holds what users read to the house rules, so the docs cannot drift back:

- no citation of an internal document: no "SPEC", no "spec §", no bare "§N" (a section sign is
  allowed only in an RFC citation: "RFC" within the 40 characters before it);
- "guide A" and "guide B" are never left undefined: in each file (and in each `recuo --help`
  text), the guide's title appears before the short name's first use or at most 400
  characters after it;
- each language page starts with Install, Quick start, With your HTTP client and Recipes, in
  that order, before its reference;
- every relative link of the README and docs/ (docs/design/ included) reaches a file that
  exists, and an anchor that one of that file's headings makes.

Usage: check_docs.py ROOT [RECUO_BIN]. Prints one line per problem and exits 1 if any.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

TITLE_A = "Como repetir requisições com backoff exponencial"
TITLE_B = "HTTP 429: interpretar Retry-After e repetir pedidos com segurança"
DEFINED_WITHIN = 400

CITATIONS = [
    (re.compile(r"\bSPEC\b"), "cites the spec"),
    (re.compile(r"\bspec\s*§", re.I), "cites the spec"),
    (re.compile(r"\bthe spec(ification)? (is|was) silent\b", re.I), "speaks of the spec"),
]
SECTION_SIGN = re.compile(r"§")
GUIDE_A = re.compile(r"\b[Gg]uide A\b|\b[Gg]uides A and B\b")
GUIDE_B = re.compile(r"\b[Gg]uide B\b|\b[Gg]uides A and B\b")

LANGUAGE_PAGES = ["python.md", "php.md", "js.md", "c.md"]
PAGE_START = ["Install", "Quick start", "With your HTTP client", "Recipes"]


def user_files(root: Path) -> list[Path]:
    """Everything users read, as files: the README, docs outside docs/design/, the Python
    package and its stubs, the PHP stub and library, the JavaScript package (lib/ too) and its types, both
    C headers, and the Rust crates' sources (their docs and their error messages)."""
    found = [root / "README.md", root / "CHANGELOG.md", root / "CONTRIBUTING.md"]
    found += [root / "python" / "README.md", root / "js" / "README.md"]
    found += sorted((root / "docs").glob("*.md"))
    found += sorted((root / "python" / "recuo").glob("*.py"))
    found += sorted((root / "python" / "recuo").glob("*.pyi"))
    found += [root / "php" / "recuo.stub.php"]
    found += sorted((root / "php" / "lib" / "src").rglob("*.php"))
    found += sorted((root / "js").glob("*.js")) + sorted((root / "js").glob("*.d.ts"))
    found += sorted((root / "js" / "lib").glob("*.js"))
    found += sorted((root / "include").glob("*.h"))
    for crate in ["core", "redis-store", "ffi", "python", "php", "cli"]:
        found += sorted((root / crate / "src").rglob("*.rs"))
    return [path for path in found if path.is_file()]


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def citation_problems(name: str, text: str) -> list[str]:
    problems = []
    for pattern, what in CITATIONS:
        for match in pattern.finditer(text):
            problems.append(f"{name}:{line_of(text, match.start())}: {what}: {match.group(0)!r}")
    for match in SECTION_SIGN.finditer(text):
        before = text[max(0, match.start() - 40) : match.start()]
        if "RFC" not in before:
            problems.append(f"{name}:{line_of(text, match.start())}: a section sign that cites no RFC")
    return problems


def guide_problems(name: str, text: str) -> list[str]:
    problems = []
    for pattern, title, short in [(GUIDE_A, TITLE_A, "guide A"), (GUIDE_B, TITLE_B, "guide B")]:
        first = pattern.search(text)
        if first is None:
            continue
        defined = text.find(title)
        if defined < 0 or defined > first.start() + DEFINED_WITHIN:
            problems.append(
                f"{name}:{line_of(text, first.start())}: {short!r} is used before it is defined "
                f"(its title, {title!r}, must come first or within {DEFINED_WITHIN} characters)"
            )
    return problems


def headings(text: str) -> list[tuple[int, str]]:
    """The Markdown headings outside code fences, as (level, text)."""
    found, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        match = re.match(r"(#{1,6}) +(.*?) *#*$", line)
        if match and not fenced:
            found.append((len(match.group(1)), match.group(2)))
    return found


def page_order_problems(docs: Path) -> list[str]:
    problems = []
    for page in LANGUAGE_PAGES:
        sections = [text for level, text in headings((docs / page).read_text()) if level == 2]
        if sections[: len(PAGE_START)] != PAGE_START:
            problems.append(
                f"docs/{page}: its first sections are {sections[:len(PAGE_START)]}, "
                f"not {PAGE_START}"
            )
    return problems


def slug(heading: str) -> str:
    """The anchor a heading makes, as GitHub writes it."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for _, heading in headings(text):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


LINK = re.compile(r"\]\(([^)\s]+)\)")


def link_problems(root: Path) -> list[str]:
    pages = [root / "README.md", root / "CHANGELOG.md", root / "CONTRIBUTING.md"]
    pages += sorted((root / "docs").rglob("*.md"))
    problems = []
    for page in pages:
        if not page.is_file():
            continue
        text = page.read_text()
        # Links inside code blocks are code, not links.
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        for match in LINK.finditer(prose):
            target = match.group(1)
            if re.match(r"[a-z]+:", target):
                continue
            path_part, _, anchor = target.partition("#")
            dest = (page.parent / path_part).resolve() if path_part else page
            where = f"{page.relative_to(root)}: link {target!r}"
            if not dest.exists():
                problems.append(f"{where}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text()):
                problems.append(f"{where}: no heading makes #{anchor}")
    return problems


def help_texts(recuo: Path) -> dict[str, str]:
    """`recuo --help` and every subcommand's `--help`."""

    def run(*args: str) -> str:
        done = subprocess.run([str(recuo), *args], capture_output=True, text=True, timeout=30)
        return done.stdout + done.stderr

    top = run("--help")
    texts = {"recuo --help": top}
    commands = re.search(r"Commands:\n(.*?)\n\n", top, flags=re.S)
    for line in (commands.group(1) if commands else "").splitlines():
        name = line.split()[0] if line.split() else ""
        if name and name != "help":
            texts[f"recuo {name} --help"] = run(name, "--help")
    return texts


def main() -> None:
    root = Path(sys.argv[1]).resolve()
    problems: list[str] = []
    files = user_files(root)
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        name = str(path.relative_to(root))
        problems += citation_problems(name, text)
        problems += guide_problems(name, text)
    helps = help_texts(Path(sys.argv[2])) if len(sys.argv) > 2 else {}
    for name, text in helps.items():
        problems += citation_problems(name, text) + guide_problems(name, text)
    problems += page_order_problems(root / "docs")
    problems += link_problems(root)
    for problem in problems:
        print(problem)
    if problems:
        raise SystemExit(f"docs: {len(problems)} problem(s)")
    print(f"docs: {len(files)} files and {len(helps)} help texts read, no problem found")


if __name__ == "__main__":
    main()
