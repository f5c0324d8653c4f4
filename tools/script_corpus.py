"""Rebuilds the held-out script corpus listed in tools/script_corpus.txt into a folder, from local git mirrors
(one clone per listed repository, at any commit that contains the listed one). Stdlib and `git` only.

Run `python tools/script_corpus.py OUT --mirrors DIR`: each repository `owner/name` is looked for at
DIR/owner+name/repo, DIR/owner+name, then DIR/owner/name (a bare git dir or a clone); files land in
OUT/owner+name/<path>. The corpus stays outside the repository (its code is not ours to commit).
"""
from __future__ import annotations

import argparse
import fnmatch
import os
import subprocess
from typing import List, Tuple

LISTING = os.path.join(os.path.dirname(os.path.abspath(__file__)), "script_corpus.txt")


def read_listing(path: str = LISTING) -> List[Tuple[str, str, List[str]]]:
    """[(repo, commit, patterns)] from a corpus listing (`[repo commit]` headers, then one pattern a line)."""
    sources: List[Tuple[str, str, List[str]]] = []
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("[") and line.endswith("]"):
                fields = line[1:-1].split()
                if len(fields) != 2 or "/" not in fields[0] or len(fields[1]) != 40:
                    raise ValueError(f"{path}:{number}: a source header reads [owner/name <40-hex commit>]")
                sources.append((fields[0], fields[1], []))
            elif not sources:
                raise ValueError(f"{path}:{number}: pattern {line!r} comes before any [repo commit] header")
            else:
                sources[-1][2].append(line)
    return sources


def _git_dir(mirrors: str, repo: str) -> str:
    owner, name = repo.split("/", 1)
    for candidate in (os.path.join(mirrors, f"{owner}+{name}", "repo"), os.path.join(mirrors, f"{owner}+{name}"),
                      os.path.join(mirrors, owner, name)):
        if os.path.isdir(candidate):
            return candidate
    raise SystemExit(f"script_corpus: no mirror of {repo} under {mirrors} (clone it there as {owner}+{name})")


def _git(git_dir: str, *args: str) -> bytes:
    return subprocess.run(["git", "-C", git_dir, *args], check=True, capture_output=True).stdout


def select(paths: List[str], patterns: List[str]) -> List[str]:
    """The paths that match any of the fnmatch patterns, sorted."""
    return sorted(p for p in paths if any(fnmatch.fnmatchcase(p, pattern) for pattern in patterns))


def rebuild(out: str, mirrors: str, listing: str = LISTING, absent: list | None = None) -> dict:
    """Writes every listed file into `out`; returns {repo: number of files written}. Listed files whose content
    the mirror lacks are appended to `absent` (when given) and skipped."""
    absent = [] if absent is None else absent
    counts = {}
    for repo, commit, patterns in read_listing(listing):
        git_dir = _git_dir(mirrors, repo)
        try:
            tree = _git(git_dir, "ls-tree", "-r", "--name-only", commit).decode("utf-8").splitlines()
        except subprocess.CalledProcessError as error:
            raise SystemExit(f"script_corpus: {repo} mirror at {git_dir} lacks commit {commit} "
                             f"({error.stderr.decode(errors='replace').strip()}); fetch that commit") from error
        chosen = select(tree, patterns)
        written = 0
        for path in chosen:
            try:
                data = _git(git_dir, "show", f"{commit}:{path}")
            except subprocess.CalledProcessError:
                absent.append(f"{repo}:{path}")  # a partial mirror may lack large blobs
                continue
            target = os.path.join(out, repo.replace("/", "+"), path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            tmp = target + ".tmp"
            with open(tmp, "wb") as handle:
                handle.write(data)
            os.replace(tmp, target)
            written += 1
        counts[repo] = written
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="folder to write the corpus into (outside the repository)")
    parser.add_argument("--mirrors", required=True, help="folder holding one git mirror per listed repository")
    parser.add_argument("--listing", default=LISTING, help="corpus listing (default: tools/script_corpus.txt)")
    args = parser.parse_args()
    absent: list = []
    for repo, count in rebuild(args.out, args.mirrors, args.listing, absent).items():
        print(f"{count:>5}  {repo}")
    for missing in absent:
        print(f"absent from the mirror (skipped): {missing}")


if __name__ == "__main__":
    main()
