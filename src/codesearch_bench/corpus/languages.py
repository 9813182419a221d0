"""File extension -> language, for the manifest's counts and for gold grammars."""

from __future__ import annotations

import os

#: File extension (without the dot) -> language. ``h`` is C unless ``h_as_cpp``.
LANGUAGES: dict[str, str] = {
    "py": "python", "pyi": "python",
    "c": "c", "h": "c",
    "cc": "cpp", "cpp": "cpp", "cxx": "cpp", "c++": "cpp", "hpp": "cpp", "hh": "cpp",
    "hxx": "cpp", "h++": "cpp",
    "go": "go",
    "rs": "rust",
    "js": "javascript", "mjs": "javascript", "cjs": "javascript", "jsx": "javascript",
    "ts": "typescript", "mts": "typescript", "cts": "typescript",
    "tsx": "tsx",
    "java": "java",
}


def language_for(path: str, *, h_as_cpp: bool = False) -> str | None:
    """The language of ``path`` by its extension, or None when no grammar covers it."""
    suffix = os.path.splitext(path)[1].lower().lstrip(".")
    if suffix == "h" and h_as_cpp:
        return "cpp"
    return LANGUAGES.get(suffix)
