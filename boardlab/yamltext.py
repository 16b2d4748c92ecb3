"""YAML read with libyaml's parser where PyYAML was built with it (its wheels are), else
with PyYAML's own: the same documents for a tenth of the CPU. Every process of the lab
reads the facts and the baselines, many of them more than once."""
from __future__ import annotations

import yaml

SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(stream):
    """yaml.safe_load: plain data only (no tags that build objects)."""
    return yaml.load(stream, Loader=SAFE_LOADER)
