"""--policy, shared by check, replay, grade and prove (docs/rules.md, "Policies")."""

from __future__ import annotations

import argparse

from spec.model import DEFAULT_POLICY, POLICIES


def add_policy_argument(parser: argparse.ArgumentParser, default: str | None, otherwise: str = "") -> None:
    """Add --policy; with no default, `otherwise` says what is used instead."""
    parser.add_argument("--policy", choices=sorted(POLICIES), default=default,
                        help="the rules to judge by: " + "; ".join(f"{k}: {v}" for k, v in POLICIES.items()) +
                        f" (default: {default or otherwise})")


def rerun_flags(policy: str) -> str:
    """What a rerun hint adds to the target as typed, so following it judges by the same rules."""
    return "" if policy == DEFAULT_POLICY else f" --policy {policy}"
