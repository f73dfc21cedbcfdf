"""Which project files a function can run, as a fingerprint — what a cache key must cover besides inputs.

    files = stage_files("flows._stages", "verify_version")   # read with `ast`, nothing imported
    key = digest(file_hashes(files))                            # sha256 over {file: sha256}

It reads the code, not the running process: the orchestration (`flows`) function by function, every
other package module by module, with the JavaScript and templates a module names. `flows._cache`
turns it into Prefect cache policies; nothing here knows Prefect. `imported_packages` names what those files
import from outside the project (whose installed versions the keys cover too). `parse_source` is `ast.parse`
made safe in many threads on CPython 3.11.
"""

from ._closure import PROJECT_ROOT, digest, file_hashes, imported_packages, parse_source, project_packages, stage_files

__all__ = ["PROJECT_ROOT", "digest", "file_hashes", "imported_packages", "parse_source", "project_packages",
           "stage_files"]
