"""``python -m conformance.mutants [--check]``: write (or check) the generated mutant files."""

import sys

from conformance.mutants.build import main

sys.exit(main(sys.argv[1:]))
