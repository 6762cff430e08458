"""--policy, shared by check, replay, grade and prove (docs/rules.md, "Policies")."""

from __future__ import annotations

import argparse

from spec.errors import InvalidConfig
from spec.model import DEFAULT_POLICY, Policy, policy_help


def policy_argument(text: str) -> Policy:
    """--policy's value: a policy as written (spec/model.py Policy.parse); argparse shows what is wrong in it."""
    try:
        return Policy.parse(text)
    except InvalidConfig as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_policy_argument(parser: argparse.ArgumentParser, default: Policy | None, otherwise: str = "") -> None:
    """Add --policy; with no default, `otherwise` says what is used instead."""
    parser.add_argument("--policy", type=policy_argument, default=default, metavar="POLICY",
                        help=f"the rules to judge by: {policy_help()} (default: {default or otherwise})")


def rerun_flags(policy: Policy | None) -> str:
    """What a rerun hint adds to the target as typed, so following it judges by the same rules (None: --policy was
    not given, and the rerun finds the same policy as this run did)."""
    return "" if policy is None or policy == DEFAULT_POLICY else f" --policy {policy}"
