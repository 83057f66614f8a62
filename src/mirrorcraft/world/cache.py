"""Generated worlds kept on disk, and episode grids that share them copy-on-write.

Generating a world takes a quarter to half a second of CPU, and every process that ran
an episode on it used to generate it again. ``generate_cached`` stores what generation
produced (the block grid and heightmap as ``.npy``, spawn, mobs and ponds as JSON) in a
folder keyed by everything the result depends on: the generator version and a digest of
its source, the biome spec's canonical JSON, the seed, the world id, the palette and the
mob variants. A later process, or another worker, loads it instead (nothing is
unpickled; an entry that does not read back exactly, cells included, is replaced by a
fresh world).

The stored grid also serves ``episode_grid``: each episode maps the file privately
(``mmap`` in copy-on-write mode), so the operating system shares the unchanged
pages between every live episode and copies only the 4 KiB pages an episode digs or
builds in. Reads and writes behave as on a private copy. (A file replaced on disk while
episodes run does not change them: a mapping keeps the pages it mapped.)

The folder is ``$MIRRORCRAFT_WORLD_CACHE`` when set (``off`` disables the cache: worlds
are generated in memory and each episode copies the grid, as before), else
``mirrorcraft-worlds-<uid>`` in the system's temporary folder; a folder another user owns
or may write to is not used. At most ``MAX_ENTRIES`` worlds are kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mirrorcraft.world.generate import (
    GENERATOR_VERSION,
    GeneratedWorld,
    MobSpawn,
    generate,
    spec_hash,
)
from mirrorcraft.world.palette import Palette
from mirrorcraft.world.spec import BiomeSpec

ENV = "MIRRORCRAFT_WORLD_CACHE"
FORMAT = "2"
"""2: meta.json holds a digest of the stored grid and heightmap, checked on every load."""
MAX_ENTRIES = 40
"""Worlds kept (about 5.8 MiB each); the least recently used beyond this are removed."""


def cache_dir() -> Path | None:
    """Where generated worlds are kept; None when the cache is switched off."""
    setting = os.environ.get(ENV, "").strip()
    if setting.lower() == "off":
        return None
    if setting:
        return Path(setting)
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"mirrorcraft-worlds-{uid}"


def _trusted(folder: Path) -> bool:
    """Whether worlds may be read from ``folder``: created here if missing; one that another
    user owns, or that others may write to, is not used (its worlds could be anything)."""
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        info = folder.stat()
    except OSError:
        return False
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return False
    return not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def world_key(
    world_id: str,
    spec: BiomeSpec,
    seed: int,
    palette: Palette,
    variants: Mapping[str, tuple[tuple[str, int], ...]] | None,
) -> str:
    """A digest of everything a generated world depends on."""
    parts = {
        "format": FORMAT,
        "generator": GENERATOR_VERSION,
        "code": _generator_code(),
        "world": world_id,
        "spec": spec.model_dump_json(),
        "seed": seed,
        "palette": list(palette.names),
        "variants": sorted((k, [list(v) for v in vs]) for k, vs in (variants or {}).items()),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


@lru_cache(maxsize=1)
def _generator_code() -> str:
    """A digest of the generator's own source, so a changed generator never reads worlds a
    different one stored (even if nobody bumped GENERATOR_VERSION)."""
    from mirrorcraft.world import generate as gen
    from mirrorcraft.world import noise, palette, spec

    digest = hashlib.sha256()
    for module in (gen, noise, palette, spec):
        try:
            digest.update(Path(str(module.__file__)).read_bytes())
        except OSError:
            digest.update(b"?")
    return digest.hexdigest()[:16]


def generate_cached(
    world_id: str,
    spec: BiomeSpec,
    seed: int,
    palette: Palette,
    variants: Mapping[str, tuple[tuple[str, int], ...]] | None = None,
) -> tuple[GeneratedWorld, Path | None]:
    """The generated world (from the disk cache when it is there) and its grid file."""
    folder = cache_dir()
    if folder is None or not _trusted(folder):
        return generate(world_id, spec, seed, palette, variants), None
    entry = folder / world_key(world_id, spec, seed, palette, variants)
    loaded = _load(entry, world_id, spec, seed, palette)
    if loaded is not None:
        with contextlib.suppress(OSError):
            os.utime(entry / "meta.json")  # recently used: pruned last
        return loaded, entry / "grid.npy"
    if entry.exists():  # unreadable or not what it should be: replace it
        shutil.rmtree(entry, ignore_errors=True)
    world = generate(world_id, spec, seed, palette, variants)
    stored = _store(entry, world)
    _prune(folder, keep=entry)
    return world, stored


def _prune(folder: Path, keep: Path) -> None:
    """Remove the least recently used entries beyond ``MAX_ENTRIES`` (episodes that have a
    removed world's grid mapped keep their mapping)."""
    try:
        entries = [
            (e.joinpath("meta.json").stat().st_mtime, e)
            for e in folder.iterdir()
            if e.is_dir() and e != keep and (e / "meta.json").exists()
        ]
        stale = time.time() - 3600  # a store that died half-way leaves a .part- folder
        for part in folder.glob(".part-*"):
            if part.stat().st_mtime < stale:
                shutil.rmtree(part, ignore_errors=True)
    except OSError:
        return
    entries.sort()
    for _mtime, old in entries[: max(len(entries) + 1 - MAX_ENTRIES, 0)]:
        shutil.rmtree(old, ignore_errors=True)


def episode_grid(world: GeneratedWorld, grid_file: Path | None) -> NDArray[np.uint16]:
    """A grid an episode may change: the stored grid mapped copy-on-write, else a copy."""
    if grid_file is not None:
        try:
            offset = _data_offset(grid_file, world.grid.shape)
            with open(grid_file, "rb") as f:
                mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
            return np.ndarray(world.grid.shape, dtype=np.uint16, buffer=mapped, offset=offset)
        except (OSError, ValueError, TypeError):
            pass
    return world.grid.copy()


@lru_cache(maxsize=64)
def _data_offset(grid_file: Path, shape: tuple[int, ...]) -> int:
    """Where a stored grid's cells start in its ``.npy`` file (checked: C order, uint16)."""
    with open(grid_file, "rb") as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            header = np.lib.format.read_array_header_1_0(f)
        else:
            header = np.lib.format.read_array_header_2_0(f)
        stored, fortran, dtype = header
        if tuple(stored) != tuple(shape) or fortran or dtype != np.dtype(np.uint16):
            raise ValueError(f"{grid_file}: not the grid it should be")
        offset = f.tell()
    if os.path.getsize(grid_file) != offset + 2 * int(np.prod(shape)):
        raise ValueError(f"{grid_file}: wrong size")
    return offset


def _meta(world: GeneratedWorld) -> dict[str, Any]:
    return {
        "world_id": world.world_id,
        "seed": world.seed,
        "spawn": list(world.spawn),
        "mobs": [[m.id, m.type, list(m.pos), m.variant] for m in world.mobs],
        "ponds": [list(p) for p in world.ponds],
        "shape": list(world.grid.shape),
        "digest": _digest(world.grid, world.heightmap),
    }


def _digest(grid: NDArray[np.uint16], heights: NDArray[np.int16]) -> str:
    """A digest of the cells: a stored grid changed on disk (a bad copy, a damaged disk, an
    edit) of the same shape and ids would otherwise load as this world, under its name."""
    digest = hashlib.sha256(np.ascontiguousarray(grid).data)
    digest.update(np.ascontiguousarray(heights).data)
    return digest.hexdigest()[:32]


def _store(entry: Path, world: GeneratedWorld) -> Path | None:
    """Write the world's entry (atomically: a finished folder is renamed into place)."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if (entry / "meta.json").exists():
            return entry / "grid.npy"
        tmp = Path(tempfile.mkdtemp(prefix=".part-", dir=entry.parent))
        np.save(tmp / "grid.npy", np.ascontiguousarray(world.grid), allow_pickle=False)
        np.save(tmp / "heightmap.npy", np.ascontiguousarray(world.heightmap), allow_pickle=False)
        (tmp / "meta.json").write_text(json.dumps(_meta(world)))
        try:
            os.rename(tmp, entry)
        except OSError:  # another process stored it first
            for f in tmp.iterdir():
                f.unlink()
            tmp.rmdir()
        return entry / "grid.npy" if (entry / "meta.json").exists() else None
    except OSError:
        return None


def _load(
    entry: Path, world_id: str, spec: BiomeSpec, seed: int, palette: Palette
) -> GeneratedWorld | None:
    try:
        meta = json.loads((entry / "meta.json").read_text())
        grid = np.load(entry / "grid.npy", mmap_mode="r", allow_pickle=False)
        heights = np.load(entry / "heightmap.npy", allow_pickle=False)
        shape = tuple(meta["shape"])
        if (
            meta["world_id"] != world_id
            or meta["seed"] != seed
            or grid.shape != shape
            or grid.dtype != np.uint16
            or heights.dtype != np.int16
            or heights.shape != shape[:2]
            or int(grid.max(initial=0)) >= len(palette.names)
            or meta["digest"] != _digest(grid, heights)
        ):
            return None
        mobs = tuple(
            MobSpawn(int(i), str(t), (int(p[0]), int(p[1]), int(p[2])), str(v))
            for i, t, p, v in meta["mobs"]
        )
        spawn = tuple(int(v) for v in meta["spawn"])
        ponds = tuple((int(a), int(b), int(c)) for a, b, c in meta["ponds"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    heights.setflags(write=False)
    return GeneratedWorld(
        world_id=world_id,
        biome=spec.biome,
        seed=seed,
        spec=spec,
        spec_hash=spec_hash(spec),
        palette=palette,
        grid=grid,
        heightmap=heights,
        spawn=(spawn[0], spawn[1], spawn[2]),
        mobs=mobs,
        ponds=ponds,
    )
