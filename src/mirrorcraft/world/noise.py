"""Seeded 2-D value noise (numpy), for terrain relief."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def value_noise(
    size: int, scale: float, rng: np.random.Generator, octaves: int = 3
) -> NDArray[np.float64]:
    """A ``size`` x ``size`` field in [-1, 1]: lattice values, smoothstep-interpolated, summed over octaves."""
    total = np.zeros((size, size))
    amplitude, norm = 1.0, 0.0
    for octave in range(octaves):
        cell = max(scale / (2**octave), 2.0)
        lattice_n = int(np.ceil(size / cell)) + 2
        lattice = rng.uniform(-1.0, 1.0, size=(lattice_n, lattice_n))
        coords = np.arange(size) / cell
        i0 = np.floor(coords).astype(int)
        t = coords - i0
        t = t * t * (3.0 - 2.0 * t)
        a = lattice[np.ix_(i0, i0)]
        b = lattice[np.ix_(i0 + 1, i0)]
        c = lattice[np.ix_(i0, i0 + 1)]
        d = lattice[np.ix_(i0 + 1, i0 + 1)]
        tx, tz = t[:, None], t[None, :]
        layer = (a * (1 - tx) + b * tx) * (1 - tz) + (c * (1 - tx) + d * tx) * tz
        total += amplitude * layer
        norm += amplitude
        amplitude *= 0.5
    result: NDArray[np.float64] = total / norm
    return result
