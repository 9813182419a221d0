"""A private apt state folder whose source entries are the system's, as deb-src.

apt itself says where its source lists are (`apt-config shell`, so APT_CONFIG
and the system's own settings are honoured); every `deb` entry found there
becomes a `deb-src` entry with the same mirror, suites, components and
signing options. Nothing outside the private folder is written, and no mirror
is ever named by bench: they come from the machine.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

from ...errors import CorpusError


def apt_dirs() -> tuple[Path, Path]:
    """(sources.list, sources.list.d) as apt on this machine is configured."""
    try:
        out = subprocess.run(
            ["apt-config", "shell", "LIST", "Dir::Etc::sourcelist/f",
             "PARTS", "Dir::Etc::sourceparts/d"],
            capture_output=True, text=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return Path("/etc/apt/sources.list"), Path("/etc/apt/sources.list.d")
    found: dict[str, str] = {}
    for line in out.splitlines():
        key, _, value = line.partition("=")
        parts = shlex.split(value) if value else []
        if parts:
            found[key.strip()] = parts[0]
    return (Path(found.get("LIST", "/etc/apt/sources.list")),
            Path(found.get("PARTS", "/etc/apt/sources.list.d")))


def one_line_entries(text: str) -> list[str]:
    """`deb ...` lines of a sources.list as `deb-src ...` lines (deb-src ones kept)."""
    out: list[str] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.startswith("deb "):
            out.append("deb-src " + line[4:].strip())
        elif line.startswith("deb-src "):
            out.append(line)
    return out


def deb822_entries(text: str) -> list[str]:
    """deb822 paragraphs whose Types include deb, with Types: deb-src."""
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        fields: list[list[str]] = []
        for raw in para.splitlines():
            if raw.lstrip().startswith("#"):
                continue
            if raw[:1] in (" ", "\t") and fields:
                fields[-1].append(raw)
            elif ":" in raw:
                fields.append([raw])
        names = {f[0].split(":", 1)[0].strip().lower(): f for f in fields}
        types = names.get("types")
        enabled = names.get("enabled")
        kinds = set(types[0].split(":", 1)[1].split()) if types else set()
        if types is None or not kinds & {"deb", "deb-src"}:
            continue
        if enabled is not None and enabled[0].split(":", 1)[1].strip().lower() == "no":
            continue
        kept = [["Types: deb-src"] if f is types else f for f in fields]
        out.append("\n".join(line for f in kept for line in f))
    return out


def system_entries() -> tuple[list[str], list[str]]:
    """(one-line deb-src entries, deb822 deb-src paragraphs) from the system's lists."""
    listfile, parts = apt_dirs()
    lines: list[str] = []
    paragraphs: list[str] = []
    files = [listfile] if listfile.is_file() else []
    if parts.is_dir():
        files += sorted(p for p in parts.iterdir() if p.suffix in (".list", ".sources"))
    for path in files:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        if path.suffix == ".sources":
            paragraphs += deb822_entries(text)
        else:
            lines += one_line_entries(text)
    return lines, paragraphs


def private_state(state: Path, what: str) -> Path:
    """The private folder with deb-src lists derived from the system's; rewritten each time."""
    lines, paragraphs = system_entries()
    if not lines and not paragraphs:
        raise CorpusError(f"{what}: apt has no `deb` entries to derive source entries from",
                          hint="configure apt's mirror (sources.list) or use another source")
    for sub in ("lists/partial", "cache/archives/partial", "sources.list.d"):
        (state / sub).mkdir(parents=True, exist_ok=True)
    (state / "sources.list").write_text("".join(f"{line}\n" for line in lines))
    (state / "sources.list.d" / "bench-src.sources").write_text(
        "\n\n".join(paragraphs) + ("\n" if paragraphs else ""))
    return state


def options(state: Path) -> list[str]:
    """apt-get options that point every list, cache and state path into `state`."""
    opts = {
        "Dir::Etc::sourcelist": state / "sources.list",
        "Dir::Etc::sourceparts": state / "sources.list.d",
        "Dir::State": state,
        "Dir::State::Lists": state / "lists",
        "Dir::Cache": state / "cache",
        "Debug::NoLocking": "1",
    }
    if os.geteuid() == 0:
        opts["APT::Sandbox::User"] = "root"  # the _apt user could not write bench's folder
    return [arg for key, value in opts.items() for arg in ("-o", f"{key}={value}")]
