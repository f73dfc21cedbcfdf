"""Model latency as a distribution: what a stand-in model server waits before it answers."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Latency:
    """A fixed latency, or a log-normal one with the given mean (real model latencies are skewed:
    most calls near the median, a long tail of slow ones).

    `sigma` is the standard deviation of the latency's logarithm; the log-normal's median is then
    `mean_s · exp(-sigma²/2)`, so the mean stays `mean_s` whatever the spread.
    """

    mean_s: float
    kind: Literal["fixed", "lognormal"] = "fixed"
    sigma: float = 0.5

    def __post_init__(self) -> None:
        if not (math.isfinite(self.mean_s) and self.mean_s >= 0):
            raise ValueError(f"latency mean_s must be a finite number of seconds >= 0, got {self.mean_s!r}")
        if self.kind not in ("fixed", "lognormal"):
            raise ValueError(f"latency kind must be 'fixed' or 'lognormal', got {self.kind!r}")
        if not (math.isfinite(self.sigma) and 0 <= self.sigma <= 3):
            raise ValueError(f"latency sigma must be between 0 and 3, got {self.sigma!r}")

    @classmethod
    def fixed(cls, seconds: float) -> Latency:
        return cls(seconds)

    @classmethod
    def lognormal(cls, mean_s: float, sigma: float = 0.5) -> Latency:
        return cls(mean_s, "lognormal", sigma)

    @classmethod
    def parse(cls, text: str) -> Latency:
        """`"1.5"` (fixed), `"lognormal:1.5"` or `"lognormal:1.5:0.8"` (mean, sigma).

        Raises:
            ValueError: the text is none of these (the message quotes it).
        """
        parts = text.strip().split(":")
        try:
            if len(parts) == 1:
                return cls.fixed(float(parts[0]))
            if parts[0] == "fixed" and len(parts) == 2:
                return cls.fixed(float(parts[1]))
            if parts[0] == "lognormal" and len(parts) in (2, 3):
                return cls.lognormal(float(parts[1]), *(float(p) for p in parts[2:]))
        except ValueError as error:
            raise ValueError(f"latency {text!r}: {error}") from None
        raise ValueError(f"latency {text!r}: expected SECONDS, fixed:SECONDS or lognormal:MEAN[:SIGMA]")

    def sample(self, rng: random.Random) -> float:
        """One latency in seconds."""
        if self.kind == "fixed" or self.mean_s == 0 or self.sigma == 0:
            return self.mean_s
        mu = math.log(self.mean_s) - self.sigma**2 / 2
        return rng.lognormvariate(mu, self.sigma)
